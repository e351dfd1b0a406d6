import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { isTerminalRunEvent, type RunEvent } from '@switchyard/contracts';
import { RunEventsReader } from '@switchyard/server-db-run-events';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { RunFeed } from './run-feed';

const PAGE = 500;

/** Stops a `follow`; `subscribed` settles once the live subscription is in place (or failed). */
export type Following = (() => void) & { readonly subscribed: Promise<void> };

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
    let corked = false;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\n\n');
    const stopHeartbeat = this.feed.heartbeat(() => res.write(': heartbeat\n\n'));
    const stop = this.follow(
      log,
      afterSeq,
      (e) => {
        // Frames sent in one turn (a batch of events arrives in one NATS read) leave in one write.
        if (!corked) {
          corked = true;
          res.cork();
          process.nextTick(() => {
            if (!corked) return; // the end has uncorked already
            corked = false;
            res.uncork();
          });
        }
        return res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
      },
      () => {
        stopHeartbeat();
        // The last frame may still be corked: Node 22 drops what a response holds when it is ended
        // corked (Node 20 flushed it), so the terminal frame would never leave.
        if (corked) {
          corked = false;
          res.uncork();
        }
        res.end();
      },
      (resume) => res.once('drain', resume),
    );
    req.on('close', stop);
    await stop.subscribed;
  }

  /** A run's events after `afterSeq`, as `follow` delivers them (the caller checked access). */
  followRun(runId: string, afterSeq: number, deliver: (event: RunEvent) => void, end: () => void): Following {
    return this.follow(
      {
        label: { runId },
        follow: (listener) => this.feed.follow(runId, listener),
        readAfter: (after, limit) => this.events.readAfter(runId, after, limit),
        isTerminal: isTerminalRunEvent,
      },
      afterSeq,
      deliver,
      end,
    );
  }

  /**
   * Delivers a log's events after `afterSeq` once each, in sequence order: it subscribes to the live
   * events first, then replays what Postgres holds, then follows live, filling a gap in the live
   * feed (plain NATS is at-most-once) from Postgres. Ends (calling `end` once) after a terminal
   * event that is the newest, on a failure, or when the returned function is called.
   *
   * A consumer slower than the events (a client that reads nothing) answers `false` from `deliver`
   * when it is full: events then wait in Postgres, not in this process, until `drained` calls back,
   * and are read from there.
   */
  follow<E extends { seq: number; type: string }>(
    log: EventLog<E>,
    afterSeq: number,
    deliver: (event: E) => boolean | void,
    end: () => void,
    drained?: (resume: () => void) => void,
  ): Following {
    let lastSent = afterSeq;
    let done = false;
    let blocked = false;
    let chain: Promise<void> = Promise.resolve();
    let unsubscribe: () => void = () => undefined;
    const finish = () => {
      if (done) return;
      done = true;
      unsubscribe();
      end();
    };
    // A terminal event ends the stream only when it is the newest: a resumed run goes on after it.
    // A caller that resumes at the newest event of a finished run is ended at once, without frames.
    const send = (e: E, newest: boolean) => {
      if (done || blocked) return;
      if (e.seq <= lastSent) {
        if (newest && e.seq === lastSent && log.isTerminal(e)) finish();
        return;
      }
      const room = deliver(e) !== false;
      lastSent = e.seq;
      if (newest && log.isTerminal(e)) return finish();
      if (!room && drained) {
        blocked = true;
        drained(() => {
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
    const subscribed = log
      .follow((event) =>
        enqueue(async () => {
          if (event.seq > lastSent + 1) await catchUp();
          send(event, true);
        }),
      )
      .then(
        (off) => {
          if (done) return off(); // stopped while subscribing
          unsubscribe = off;
          // The first read starts one event early: the event the caller already has tells whether
          // the stream had ended there.
          enqueue(() => catchUp(Math.max(afterSeq - 1, 0)));
        },
        (err: Error) => {
          this.logger.warn({ ...log.label, err: err.message }, 'event stream failed');
          finish();
        },
      );
    return Object.assign(finish, { subscribed });
  }
}
