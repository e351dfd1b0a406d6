import { Controller, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Routes } from '@switchyard/contracts';
import { Caller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import type { Principal } from '../auth/principal';
import { feedResumeIdOf, OwnerFeed } from './owner-feed';
import { lastEventIdOf, StreamRelay } from './stream-relay';

/**
 * `GET /api/agent/stream` and `GET /api/events` through the framework: documents the routes and
 * serves them when the fast path (StreamFastPath, which answers them on the raw HTTP server) is not
 * installed.
 */
@Controller()
export class StreamController {
  constructor(
    private readonly relay: StreamRelay,
    private readonly feed: OwnerFeed,
  ) {}

  @Endpoint(Routes.runStream)
  stream(
    @In() input: Input<typeof Routes.runStream>,
    @Caller() caller: Principal,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.relay.open(input.query.runId, lastEventIdOf(req, input.query.lastEventId), caller, req, res);
  }

  @Endpoint(Routes.ownerFeed)
  ownerFeed(
    @In() input: Input<typeof Routes.ownerFeed>,
    @Caller() caller: Principal,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    return this.feed.open(caller, feedResumeIdOf(req, input.query.lastEventId), req, res);
  }
}
