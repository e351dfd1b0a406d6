import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { isTerminalRunEvent } from '@switchyard/contracts';
import { RunEventsReader } from '@switchyard/server-db-run-events';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { RunFeed } from './run-feed';

const PAGE = 500;

/** The sequence to resume after: the Last-Event-ID header wins over `?lastEventId=`, else 0. */
export function lastEventIdOf(req: IncomingMessage, fallback: number | undefined): number {
  const header = req.headers['last-event-id'];
  const n = typeof header === 'string' && /^\d+$/.test(header.trim()) ? Number(header.trim()) : undefined;
  return n ?? fallback ?? 0;
}

/** A stream's events: where they are published live and where they are kept. */
export interface EventLog<E extends { seq: number; type: string }> {
  /** What the stream is about, for logs. */
  readonly label: Record<string, string>;
  /** Calls `listener` with each event published from now on; resolves once subscribed. */
  follow(listener: (event: E) => void): Promise<() => void>;
  /** Events after `afterSeq` in order, at most `limit`. */
  readAfter(afterSeq: number, limit: number): Promise<E[]>;
  /** The stream ends after one of these (when it is the newest). */
  isTerminal(event: E): boolean;
}

/**
 * The SSE relay. It subscribes to the live events first, then replays what Postgres holds after
 * Last-Event-ID, then follows live: every event is sent once, in sequence order, and a gap in the
 * live feed (plain NATS is at-most-once) is filled from Postgres before going on. Works on plain
 * node:http objects, so the stream can be served without the framework's per-request state. Runs'
 * streams and chat sessions' streams both go through it.
 */
@Injectable()
export class StreamRelay {
  constructor(
    private readonly events: RunEventsReader,
    private readonly feed: RunFeed,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Refuses (AppError, nothing written) unless the caller may see the run; then streams it. */
  async open(
    runId: string,
    afterSeq: number,
    caller: Principal,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    await this.events.assertVisible(runId, caller.owner.role === 'admin' ? null : caller.owner.id);
    return this.relay(
      {
        label: { runId },
        follow: (listener) => this.feed.follow(runId, listener),
        readAfter: (after, limit) => this.events.readAfter(runId, after, limit),
        isTerminal: isTerminalRunEvent,
      },
      afterSeq,
      req,
      res,
    );
  }

  /** Streams a log's events after `afterSeq` until a terminal one (the caller checked access). */
  async relay<E extends { seq: number; type: string }>(
    log: EventLog<E>,
    afterSeq: number,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> {
    let lastSent = afterSeq;
    let done = false;
    // A client that reads slower than events come: once the socket's buffer is full, events wait in
    // Postgres (not in this process) until it drains, then are read from there.
    let blocked = false;
    let corked = false;
    let chain: Promise<void> = Promise.resolve();
    let unsubscribe: () => void = () => undefined;
    let stopHeartbeat: () => void = () => undefined;
    const finish = () => {
      if (done) return;
      done = true;
      stopHeartbeat();
      unsubscribe();
      res.end();
    };
    // A terminal event ends the stream only when it is the newest: a resumed run goes on after it.
    // A caller that resumes at the newest event of a finished run is ended at once, without frames.
    const send = (e: E, newest: boolean) => {
      if (done || blocked) return;
      if (e.seq <= lastSent) {
        if (newest && e.seq === lastSent && log.isTerminal(e)) finish();
        return;
      }
      // Frames sent in one turn (a batch of events arrives in one NATS read) leave in one write.
      if (!corked) {
        corked = true;
        res.cork();
        process.nextTick(() => {
          corked = false;
          res.uncork();
        });
      }
      const room = res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      lastSent = e.seq;
      if (newest && log.isTerminal(e)) return finish();
      if (!room) {
        blocked = true;
        res.once('drain', () => {
          blocked = false;
          enqueue(() => catchUp());
        });
      }
    };
    const catchUp = async (from = lastSent) => {
      for (let after = from; ; after = lastSent) {
        if (done || blocked) return;
        const page = await log.readAfter(after, PAGE);
        page.forEach((e, i) => send(e, page.length < PAGE && i === page.length - 1));
        if (page.length < PAGE) return;
      }
    };
    // One queue keeps replay and live delivery in order.
    const enqueue = (work: () => Promise<void> | void) => {
      chain = chain.then(work).catch((err: Error) => {
        this.logger.warn({ ...log.label, err: err.message }, 'event stream failed');
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
    stopHeartbeat = this.feed.heartbeat(() => res.write(': heartbeat\n\n'));
    req.on('close', finish);

    unsubscribe = await log.follow((event) =>
      enqueue(async () => {
        if (event.seq > lastSent + 1) await catchUp();
        send(event, true);
      }),
    );
    if (done) return unsubscribe(); // the client left while subscribing
    // The first read starts one event early: the event the caller already has tells whether the
    // stream had ended there.
    enqueue(() => catchUp(Math.max(afterSeq - 1, 0)));
  }
}
