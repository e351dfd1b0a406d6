import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import { RunEventMessage, Routes, runEventsSubject, TERMINAL_RUN_EVENTS } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { RunEventsRepository, type StoredRunEvent } from '@switchyard/server-db';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { Caller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import type { Principal } from '../auth/principal';

const PAGE = 500;

function lastEventIdOf(req: GatewayRequest, fallback: number | undefined): number {
  const header = req.headers['last-event-id'];
  const n = typeof header === 'string' && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  return n ?? fallback ?? 0;
}

/**
 * The SSE relay. It subscribes to the run's live subject first, then replays what Postgres holds
 * after Last-Event-ID, then follows live: every event is sent once, in sequence order, and a gap in
 * the live feed (plain NATS is at-most-once) is filled from Postgres before going on.
 */
@Controller()
export class StreamController {
  constructor(
    private readonly events: RunEventsRepository,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  @Endpoint(Routes.runStream)
  async stream(
    @In() input: Input<typeof Routes.runStream>,
    @Caller() caller: Principal,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const { runId } = input.query;
    // Before any byte is written, so a refusal is still a problem+json answer.
    await this.events.assertVisible(runId, caller.owner.role === 'admin' ? null : caller.owner.id);

    let lastSent = lastEventIdOf(req, input.query.lastEventId);
    let done = false;
    let chain: Promise<void> = Promise.resolve();
    let unsubscribe: () => void = () => undefined;
    const finish = () => {
      if (done) return;
      done = true;
      clearInterval(heartbeat);
      unsubscribe();
      res.end();
    };
    // A terminal event ends the stream only when it is the newest: a resumed run goes on after it.
    const send = (e: StoredRunEvent, newest: boolean) => {
      if (done || e.seq <= lastSent) return;
      res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      lastSent = e.seq;
      if (newest && TERMINAL_RUN_EVENTS.has(e.type)) finish();
    };
    const catchUp = async () => {
      for (;;) {
        if (done) return;
        const page = await this.events.readAfter(runId, lastSent, PAGE);
        page.forEach((e, i) => send(e, page.length < PAGE && i === page.length - 1));
        if (page.length < PAGE) return;
      }
    };
    // One queue keeps replay and live delivery in order.
    const enqueue = (work: () => Promise<void> | void) => {
      chain = chain.then(work).catch((err: Error) => {
        this.logger.warn({ runId, err: err.message }, 'event stream failed');
        finish();
      });
    };

    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\n\n');
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.config.http.sseHeartbeatMs);
    req.on('close', finish);

    unsubscribe = this.bus.subscribe(runEventsSubject(runId), (payload) => {
      const parsed = RunEventMessage.safeParse(payload);
      if (!parsed.success || parsed.data.runId !== runId) return;
      const event = parsed.data as StoredRunEvent;
      enqueue(async () => {
        if (event.seq > lastSent + 1) await catchUp();
        send(event, true);
      });
    });
    enqueue(catchUp);
  }
}
