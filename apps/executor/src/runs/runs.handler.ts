import { Controller } from '@nestjs/common';
import {
  Rpc,
  type BatchBody,
  type Inbox,
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
import { ControlRun } from './control-run.usecase';
import { DeriveRun } from './derive-run.usecase';
import { RunQueries } from './run-queries';
import { StartRun } from './start-run.usecase';

/** `executor.runs.*`: any replica answers; control messages are forwarded to the run's own replica. */
@Controller()
export class RunsHandler {
  constructor(
    private readonly starts: StartRun,
    private readonly control: ControlRun,
    private readonly derived: DeriveRun,
    private readonly queries: RunQueries,
  ) {}

  @RpcHandler(Rpc.executor.start)
  start(@RpcPayload(Rpc.executor.start) body: StartRunBody, @Caller() ctx: CallContext) {
    return this.starts.start(body, ctx);
  }

  @RpcHandler(Rpc.executor.batch)
  batch(@RpcPayload(Rpc.executor.batch) body: BatchBody, @Caller() ctx: CallContext) {
    return this.starts.batch(body, ctx);
  }

  @RpcHandler(Rpc.executor.approve)
  approve(
    @RpcPayload(Rpc.executor.approve) req: RpcRequest<typeof Rpc.executor.approve>,
    @Caller() ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.control.approve(req.runId, req.stepId, req.plan, ctx);
  }

  @RpcHandler(Rpc.executor.cancel)
  cancel(
    @RpcPayload(Rpc.executor.cancel) req: RunIdParam,
    @Caller() ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.control.cancel(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.list)
  list(@RpcPayload(Rpc.executor.list) q: RunListQuery, @Caller() ctx: CallContext): Promise<RunPage> {
    return this.queries.list(q, ctx);
  }

  @RpcHandler(Rpc.executor.get)
  get(@RpcPayload(Rpc.executor.get) req: RunIdParam, @Caller() ctx: CallContext): Promise<RunDetail> {
    return this.queries.get(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.inbox)
  inbox(@RpcPayload(Rpc.executor.inbox) _: unknown, @Caller() ctx: CallContext): Promise<Inbox> {
    return this.queries.inbox(ctx);
  }

  @RpcHandler(Rpc.executor.resume)
  resume(
    @RpcPayload(Rpc.executor.resume) req: RpcRequest<typeof Rpc.executor.resume>,
    @Caller() ctx: CallContext,
  ) {
    return this.derived.resume(req.runId, ctx, req.budget);
  }

  @RpcHandler(Rpc.executor.fork)
  fork(@RpcPayload(Rpc.executor.fork) req: RunIdParam, @Caller() ctx: CallContext) {
    return this.derived.fork(req.runId, ctx);
  }

  @RpcHandler(Rpc.executor.rewind)
  rewind(
    @RpcPayload(Rpc.executor.rewind) req: RpcRequest<typeof Rpc.executor.rewind>,
    @Caller() ctx: CallContext,
  ) {
    return this.derived.rewind(req.runId, req.keepSteps, ctx);
  }
}
