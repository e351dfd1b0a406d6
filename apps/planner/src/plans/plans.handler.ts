import { Controller } from '@nestjs/common';
import {
  Rpc,
  type DraftPlanRequest,
  type DraftPlanResult,
  type RpcRequest,
  type RpcResponse,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { MemoryRecall } from '../memory/memory-recall';
import { PlanDrafter } from './plan-drafter';

@Controller()
export class PlansHandler {
  constructor(
    private readonly drafter: PlanDrafter,
    private readonly memory: MemoryRecall,
  ) {}

  @RpcHandler(Rpc.planner.draft)
  async draft(
    @RpcPayload(Rpc.planner.draft) req: DraftPlanRequest,
    @Caller() ctx: CallContext,
  ): Promise<DraftPlanResult> {
    return this.drafter.draft(req, await this.memory.forGoal(ctx, req.goal));
  }

  @RpcHandler(Rpc.planner.checkModel)
  async checkModel(
    @RpcPayload(Rpc.planner.checkModel) req: RpcRequest<typeof Rpc.planner.checkModel>,
  ): Promise<RpcResponse<typeof Rpc.planner.checkModel>> {
    return this.drafter.checkModel(req.model);
  }
}
