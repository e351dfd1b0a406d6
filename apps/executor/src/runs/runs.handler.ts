import { Controller } from '@nestjs/common';
import {
  Rpc,
  type BatchBody,
  type RpcRequest,
  type RunControlReply,
  type RunDetail,
  type RunIdParam,
  type RunListQuery,
  type RunPage,
  type StartRunBody,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { RunsService } from './runs.service';

/** `executor.runs.*`: any replica answers; control messages are forwarded to the run's own replica. */
@Controller()
export class RunsHandler {
  constructor(private readonly runs: RunsService) {}

  @RpcHandler(Rpc.executor.start)
  start(@RpcPayload(Rpc.executor.start) body: StartRunBody, @Caller() ctx: CallContext) {
    return this.runs.start(body, ctx);
  }

  @RpcHandler(Rpc.executor.batch)
  batch(@RpcPayload(Rpc.executor.batch) body: BatchBody, @Caller() ctx: CallContext) {
    return this.runs.batch(body, ctx);
  }

  @RpcHandler(Rpc.executor.approve)
  approve(
    @RpcPayload(Rpc.executor.approve) req: RpcRequest<typeof Rpc.executor.approve>,
    @Caller() ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.runs.approve(req.runId, req.stepId, req.plan, ctx);
  }

  @RpcHandler(Rpc.executor.cancel)
  cancel(
    @RpcPayload(Rpc.executor.cancel) req: RunIdParam,
    @Caller() ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.runs.cancel(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.list)
  list(@RpcPayload(Rpc.executor.list) q: RunListQuery, @Caller() ctx: CallContext): Promise<RunPage> {
    return this.runs.list(q, ctx);
  }

  @RpcHandler(Rpc.executor.get)
  get(@RpcPayload(Rpc.executor.get) req: RunIdParam, @Caller() ctx: CallContext): Promise<RunDetail> {
    return this.runs.get(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.resume)
  resume(@RpcPayload(Rpc.executor.resume) req: RunIdParam, @Caller() ctx: CallContext) {
    return this.runs.resume(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.fork)
  fork(@RpcPayload(Rpc.executor.fork) req: RunIdParam, @Caller() ctx: CallContext) {
    return this.runs.fork(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.rewind)
  rewind(
    @RpcPayload(Rpc.executor.rewind) req: RpcRequest<typeof Rpc.executor.rewind>,
    @Caller() ctx: CallContext,
  ) {
    return this.runs.rewind(req.runId, req.keepSteps, ctx);
  }
}
