import { Controller } from '@nestjs/common';
import {
  Rpc,
  type InputOptions,
  type InputOptionsRequest,
  type RpcRequest,
  type RunWorkflowBody,
  type ToolResult,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { WorkflowRuns } from './workflow-runs.service';
import { InputOptionsUseCase } from './input-options.usecase';

/** `executor.workflows.run` and `executor.workflows.invoke`. */
@Controller()
export class WorkflowsHandler {
  constructor(
    private readonly workflows: WorkflowRuns,
    private readonly inputOptions: InputOptionsUseCase,
  ) {}

  @RpcHandler(Rpc.workflows.inputOptions)
  options(
    @RpcPayload(Rpc.workflows.inputOptions) req: InputOptionsRequest,
    @Caller() ctx: CallContext,
  ): Promise<InputOptions> {
    return this.inputOptions.options(req, ctx);
  }

  @RpcHandler(Rpc.workflows.run)
  run(@RpcPayload(Rpc.workflows.run) req: RpcRequest<typeof Rpc.workflows.run>, @Caller() ctx: CallContext) {
    return this.workflows.run(req.id, req.body as RunWorkflowBody, ctx);
  }

  @RpcHandler(Rpc.workflows.invoke)
  invoke(
    @RpcPayload(Rpc.workflows.invoke) req: RpcRequest<typeof Rpc.workflows.invoke>,
    @Caller() ctx: CallContext,
  ): Promise<ToolResult> {
    return this.workflows.invoke(req, ctx);
  }
}
