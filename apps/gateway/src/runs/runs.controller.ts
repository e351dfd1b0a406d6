import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  Routes,
  Rpc,
  type Inbox,
  type RunControlReply,
  type RunDetail,
  type RunPage,
  type StartedBatch,
  type StartedRun,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { StreamRelay } from './stream-relay';

/** Agent runs: start, batch, approve, cancel, history, inbox, resume, fork, rewind (all owned by the executor). */
@Controller()
export class RunsController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly relay: StreamRelay,
  ) {}

  @Endpoint(Routes.runStart)
  start(@In() input: Input<typeof Routes.runStart>, @Req() req: GatewayRequest): Promise<StartedRun> {
    return this.bus.call(Rpc.executor.start, input.body, asCaller(req));
  }

  /**
   * Starts the run (a refusal is a problem response, nothing streamed), then streams it from its
   * first event. Served here when JsonFastPath leaves the request to the framework.
   */
  @Endpoint(Routes.runStartStream)
  async startStream(
    @In() input: Input<typeof Routes.runStartStream>,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const { runId } = await this.bus.call(Rpc.executor.start, input.body, asCaller(req));
    return this.relay.relayStarted(runId, req, res);
  }

  @Endpoint(Routes.runBatch)
  batch(@In() input: Input<typeof Routes.runBatch>, @Req() req: GatewayRequest): Promise<StartedBatch> {
    return this.bus.call(Rpc.executor.batch, input.body, asCaller(req));
  }

  @Endpoint(Routes.runApprove)
  approve(
    @In() input: Input<typeof Routes.runApprove>,
    @Req() req: GatewayRequest,
  ): Promise<RunControlReply> {
    return this.bus.call(
      Rpc.executor.approve,
      {
        runId: input.params.runId,
        ...(input.query.stepId ? { stepId: input.query.stepId } : {}),
        plan: input.body,
      },
      asCaller(req),
    );
  }

  @Endpoint(Routes.runCancel)
  cancel(@In() input: Input<typeof Routes.runCancel>, @Req() req: GatewayRequest): Promise<RunControlReply> {
    return this.bus.call(Rpc.executor.cancel, { runId: input.params.runId }, asCaller(req));
  }

  @Endpoint(Routes.runList)
  list(@In() input: Input<typeof Routes.runList>, @Req() req: GatewayRequest): Promise<RunPage> {
    return this.bus.call(Rpc.executor.list, input.query, asCaller(req));
  }

  @Endpoint(Routes.runGet)
  get(@In() input: Input<typeof Routes.runGet>, @Req() req: GatewayRequest): Promise<RunDetail> {
    return this.bus.call(Rpc.executor.get, { runId: input.params.runId }, asCaller(req));
  }

  @Endpoint(Routes.inbox)
  inbox(@Req() req: GatewayRequest): Promise<Inbox> {
    return this.bus.call(Rpc.executor.inbox, {}, asCaller(req));
  }

  @Endpoint(Routes.runResume)
  resume(@In() input: Input<typeof Routes.runResume>, @Req() req: GatewayRequest): Promise<StartedRun> {
    return this.bus.call(
      Rpc.executor.resume,
      { runId: input.params.runId, ...(input.body.budget ? { budget: input.body.budget } : {}) },
      asCaller(req),
    );
  }

  @Endpoint(Routes.runFork)
  fork(@In() input: Input<typeof Routes.runFork>, @Req() req: GatewayRequest): Promise<StartedRun> {
    return this.bus.call(Rpc.executor.fork, { runId: input.params.runId }, asCaller(req));
  }

  @Endpoint(Routes.runRewind)
  rewind(@In() input: Input<typeof Routes.runRewind>, @Req() req: GatewayRequest): Promise<StartedRun> {
    return this.bus.call(
      Rpc.executor.rewind,
      { runId: input.params.runId, keepSteps: input.body.keepSteps },
      asCaller(req),
    );
  }
}
