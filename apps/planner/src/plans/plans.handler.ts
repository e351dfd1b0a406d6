import { Controller } from '@nestjs/common';
import {
  Rpc,
  type DraftPlanRequest,
  type DraftPlanResult,
  type RpcRequest,
  type RpcResponse,
} from '@switchyard/contracts';
import { RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { PlanDrafter } from './plan-drafter';

@Controller()
export class PlansHandler {
  constructor(private readonly drafter: PlanDrafter) {}

  @RpcHandler(Rpc.planner.draft)
  draft(@RpcPayload(Rpc.planner.draft) req: DraftPlanRequest): Promise<DraftPlanResult> {
    return this.drafter.draft(req);
  }

  @RpcHandler(Rpc.planner.checkModel)
  async checkModel(
    @RpcPayload(Rpc.planner.checkModel) req: RpcRequest<typeof Rpc.planner.checkModel>,
  ): Promise<RpcResponse<typeof Rpc.planner.checkModel>> {
    return this.drafter.checkModel(req.model);
  }
}
