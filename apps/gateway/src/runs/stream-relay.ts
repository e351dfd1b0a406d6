import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { isTerminalRunEvent, type RunEvent } from '@switchyard/contracts';
import { RunEventsReader } from '@switchyard/server-db-run-events';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { flattenSentHead, SSE_HEADERS } from './held-stream';
import { RunFeed, type Beating, type FeedListener } from './run-feed';

const PAGE = 500;

/** The response header that names the run a `POST /api/agent/run/stream` started. */
const RUN_ID_HEADER = 'x-switchyard-run-id';

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
  /**
   * Tells `listener` of each event published from now on, and when the live feed may have missed
   * some; resolves once subscribed.
   */
  follow(listener: FeedListener<E>): Promise<() => void>;
  /** Events after `afterSeq` in order, at most `limit`. */
  readAfter(afterSeq: number, limit: number): Promise<E[]>;
  /** The stream ends after one of these (when it is the newest). */
  isTerminal(event: E): boolean;
}

/** Where a follower sends what it delivers. `deliver` answers false when the consumer is full. */
interface Sink<E> {
  deliver(event: E): boolean | void;
  end(): void;
  /** Calls `resume` once a full consumer has room again; absent: never full. */
  drained?(resume: () => void): void;
}

/** A run's events: live from the run feed, kept in Postgres. One object per stream, no closures. */
class RunLog implements EventLog<RunEvent> {
  constructor(
    private readonly runId: string,
    private readonly feed: RunFeed,
    private readonly events: RunEventsReader,
  ) {}

  get label(): Record<string, string> {
    return { runId: this.runId };
  }

  follow(listener: FeedListener<RunEvent>): Promise<() => void> {
    return this.feed.follow(this.runId, listener);
  }

  readAfter(afterSeq: number, limit: number): Promise<RunEvent[]> {
    return this.events.readAfter(this.runId, afterSeq, limit);
  }

  isTerminal(event: RunEvent): boolean {
    return isTerminalRunEvent(event);
  }
}

/** An SSE response as a follower's sink: frames of one turn corked into one write, a heartbeat. */
class SseSink<E extends { seq: number; type: string }> implements Sink<E>, Beating {
  private corked = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly feed: RunFeed,
  ) {
    feed.beat(this);
  }

  heartbeat(): void {
    this.res.write(': heartbeat\n\n');
  }

  deliver(e: E): boolean {
    // Frames sent in one turn (a batch of events arrives in one NATS read) leave in one write.
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      process.nextTick(uncorkSink, this);
    }
    return this.res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
  }

  uncork(): void {
    if (!this.corked) return; // the end has uncorked already
    this.corked = false;
    this.res.uncork();
  }

  end(): void {
    this.feed.unbeat(this);
    // The last frame may still be corked: Node 22 drops what a response holds when it is ended
    // corked (Node 20 flushed it), so the terminal frame would never leave.
    this.uncork();
    this.res.end();
  }

  drained(resume: () => void): void {
    this.res.once('drain', resume);
  }
}

function uncorkSink(sink: SseSink<{ seq: number; type: string }>): void {
  sink.uncork();
}

/**
 * One consumer of a log: subscribes to the live events first, replays what the log keeps after
 * `afterSeq`, then follows live, filling a gap in the live feed from the log (see `StreamRelay.follow`).
 * Its state is fields, not closures: thousands are open at once on a gateway.
 */
class Follower<E extends { seq: number; type: string }> implements FeedListener<E> {
  private lastSent: number;
  private done = false;
  private blocked = false;
  /** The subscription is in place and the first read queued: live events count from here. */
  private following = false;
  private chain: Promise<void> = Promise.resolve();
  private unsubscribe: () => void = () => undefined;

  constructor(
    private readonly log: EventLog<E>,
    private readonly afterSeq: number,
    private readonly sink: Sink<E>,
    private readonly logger: Logger,
  ) {
    this.lastSent = afterSeq;
  }

  start(): Following {
    const stop = () => this.finish();
    const subscribed = this.log.follow(this).then(
      (off) => {
        if (this.done) return off(); // stopped while subscribing
        this.unsubscribe = off;
        this.following = true;
        // The first read starts one event early: the event the caller already has tells whether
        // the stream had ended there.
        this.enqueue(() => this.catchUp(Math.max(this.afterSeq - 1, 0)));
      },
      (err: Error) => this.failed(err),
    );
    return Object.assign(stop, { subscribed });
  }

  finish(): void {
    if (this.done) return;
    this.done = true;
    this.unsubscribe();
    this.sink.end();
  }

  heard(event: E): void {
    // Heard before the subscription was confirmed: every event is stored before it is published, so
    // the first read (made once subscribed) has it; filling the "gap" before it would read twice.
    if (!this.following) return;
    this.enqueue(async () => {
      if (event.seq > this.lastSent + 1) await this.catchUp();
      this.send(event, true);
    });
  }

  missed(): void {
    // Before the subscription was confirmed, the first read (queued once it is) covers the gap.
    if (!this.following) return;
    this.enqueue(() => this.catchUp());
  }

  private failed(err: Error): void {
    this.logger.warn({ ...this.log.label, err: err.message }, 'event stream failed');
    this.finish();
  }

  // A terminal event ends the stream only when it is the newest: a resumed run goes on after it.
  // A caller that resumes at the newest event of a finished run is ended at once, without frames.
  private send(e: E, newest: boolean): void {
    if (this.done || this.blocked) return;
    if (e.seq <= this.lastSent) {
      if (newest && e.seq === this.lastSent && this.log.isTerminal(e)) this.finish();
      return;
    }
    const room = this.sink.deliver(e) !== false;
    this.lastSent = e.seq;
    if (newest && this.log.isTerminal(e)) return this.finish();
    if (!room && this.sink.drained) {
      this.blocked = true;
      this.sink.drained(() => {
        this.blocked = false;
        this.enqueue(() => this.catchUp());
      });
    }
  }

  private async catchUp(from = this.lastSent): Promise<void> {
    for (let after = from; ; after = this.lastSent) {
      if (this.done || this.blocked) return;
      const page = await this.log.readAfter(after, PAGE);
      page.forEach((e, i) => this.send(e, page.length < PAGE && i === page.length - 1));
      if (page.length < PAGE) return;
    }
  }

  // One queue keeps replay and live delivery in order.
  private enqueue(work: () => Promise<void> | void): void {
    this.chain = this.chain.then(work).catch((err: Error) => this.failed(err));
  }
}

/**
 * The SSE relay. It subscribes to the live events first, then replays what Postgres holds after
 * Last-Event-ID, then follows live: every event is sent once, in sequence order, and a gap in the
 * live feed (plain NATS is at-most-once) is filled from Postgres before going on, as is what was
 * published while the NATS connection was away (the stream stays open across the drop). Works on plain
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

  /**
   * Refuses (AppError, nothing written) unless the caller may see the run; then streams it. `head`:
   * more response headers (see `relay`).
   */
  async open(
    runId: string,
    afterSeq: number,
    caller: Principal,
    req: IncomingMessage,
    res: ServerResponse,
    head?: Readonly<Record<string, string>>,
  ): Promise<void> {
    await this.events.assertVisible(runId, caller.owner.role === 'admin' ? null : caller.owner.id);
    return this.relayRun(runId, afterSeq, req, res, head);
  }

  /**
   * Streams a run the caller has just started (`POST /api/agent/run/stream`) from its first event,
   * naming it in the response's head: no visibility check, the caller owns it.
   */
  relayStarted(
    runId: string,
    req: IncomingMessage,
    res: ServerResponse,
    head?: Readonly<Record<string, string>>,
  ): Promise<void> {
    return this.relayRun(runId, 0, req, res, { ...head, [RUN_ID_HEADER]: runId });
  }

  /** Streams a run `open` checked, or one the caller started. `head` as in `relay`. */
  private relayRun(
    runId: string,
    afterSeq: number,
    req: IncomingMessage,
    res: ServerResponse,
    head?: Readonly<Record<string, string>>,
  ): Promise<void> {
    return this.relay(new RunLog(runId, this.feed, this.events), afterSeq, req, res, head);
  }

  /**
   * Streams a log's events after `afterSeq` until a terminal one (the caller checked access).
   * `head`: more response headers, sent with the SSE ones (headers set on `res` beforehand are sent
   * too, but Node keeps those for the response's life).
   */
  async relay<E extends { seq: number; type: string }>(
    log: EventLog<E>,
    afterSeq: number,
    req: IncomingMessage,
    res: ServerResponse,
    head?: Readonly<Record<string, string>>,
  ): Promise<void> {
    res.writeHead(200, { ...SSE_HEADERS, ...head });
    res.write(': connected\n\n');
    flattenSentHead(res);
    const sink = new SseSink<E>(res, this.feed);
    const stop = new Follower(log, afterSeq, sink, this.logger).start();
    req.on('close', stop);
    await stop.subscribed;
  }

  /** A run's events after `afterSeq`, as `follow` delivers them (the caller checked access). */
  followRun(runId: string, afterSeq: number, deliver: (event: RunEvent) => void, end: () => void): Following {
    return this.follow(new RunLog(runId, this.feed, this.events), afterSeq, deliver, end);
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
    return new Follower(
      log,
      afterSeq,
      { deliver, end, ...(drained ? { drained } : {}) },
      this.logger,
    ).start();
  }
}
