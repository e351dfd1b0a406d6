import { Controller } from '@nestjs/common';
import {
  Rpc,
  type InputOptions,
  type InputOptionsRequest,
  type RpcRequest,
  type RunWorkflowBody,
  type StartedPublished,
  type StartPublishedRequest,
  type ToolResult,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { WorkflowRuns } from './workflow-runs.service';
import { InputOptionsUseCase } from './input-options.usecase';

/** `executor.workflows.run`, `.start-published` and `.invoke`. */
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

  /** An MCP client's tool call: the gateway follows the run's events and cancels it if asked. */
  @RpcHandler(Rpc.workflows.startPublished)
  async startPublished(
    @RpcPayload(Rpc.workflows.startPublished) req: StartPublishedRequest,
    @Caller() ctx: CallContext,
  ): Promise<StartedPublished> {
    const { driver, name, steps } = await this.workflows.startPublished(
      req.workflowId,
      req.inputs,
      req.permissionMode,
      { viaMcp: true },
      ctx,
    );
    return { runId: driver.runId, name, steps };
  }

  @RpcHandler(Rpc.workflows.invoke)
  invoke(
    @RpcPayload(Rpc.workflows.invoke) req: RpcRequest<typeof Rpc.workflows.invoke>,
    @Caller() ctx: CallContext,
  ): Promise<ToolResult> {
    return this.workflows.invoke(req, ctx);
  }
}
