import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Events, ownerFeedEventsOf, type OwnerFeedEvent } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { flattenSentHead, SSE_HEADERS } from './held-stream';
import { RunFeed, type FeedListener } from './run-feed';

/** Events kept per owner for reconnects. */
export const FEED_RING_SIZE = 500;
/** How long an owner's buffer (and its subscription) outlives the owner's last open stream. */
export const FEED_RETENTION_MS = 5 * 60_000;

interface Numbered {
  readonly n: number;
  readonly event: OwnerFeedEvent;
}

/** A stream hears the events of one bus message together (one write for them all). */
type Listener = FeedListener<readonly Numbered[]>;

/** One owner's live subscription, the events it buffered, and the streams that follow it. */
interface OwnerState {
  readonly ring: Numbered[];
  readonly listeners: Set<Listener>;
  readonly unsubscribe: () => void;
  readonly ready: Promise<void>;
  /** Every event of this owner numbered above this is in `ring` or was dropped from it. */
  coveredFrom: number;
  /** The highest number dropped from the ring (a reconnect from before it cannot be served). */
  droppedUpTo: number;
  /** Open streams of the owner on this process. */
  streams: number;
  expiry: NodeJS.Timeout | undefined;
}

/** The frame id to resume after: the Last-Event-ID header wins over `?lastEventId=`. */
export function feedResumeIdOf(req: IncomingMessage, fallback: string | undefined): string | undefined {
  const header = req.headers['last-event-id'];
  return typeof header === 'string' && header.trim() ? header.trim() : fallback;
}

function frame(id: string, e: OwnerFeedEvent): string {
  return `id: ${id}\nevent: ${e.kind}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * The owner feed (`GET /api/events`): one multiplexed stream per browser tab of what changed for the
 * caller (run status and gates, task states), from `Events.ownerFeed(<the caller's own id>)` only;
 * an admin sees their own feed, never another owner's. Frames are numbered per gateway process
 * under a random epoch (`<epoch>-<n>`); each owner's last FEED_RING_SIZE events are kept, and the
 * subscription with them, until FEED_RETENTION_MS after the owner's last stream closed, so a
 * reconnect replays what it missed. A reconnect this process cannot serve exactly (another
 * replica's or a restarted process's epoch, a number older than the buffer) gets one
 * `event: resync` frame first: the client refetches what it shows. Every open ends with an id-only
 * frame naming the current position, so a client that heard nothing yet still resumes from there.
 */
@Injectable()
export class OwnerFeed implements OnModuleDestroy {
  readonly epoch = randomBytes(8).toString('hex');
  private counter = 0;
  private readonly owners = new Map<string, OwnerState>();
  private readonly offReconnect: () => void;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly runs: RunFeed,
  ) {
    this.offReconnect = bus.onReconnect(() => this.reconnected());
  }

  /**
   * Streams the caller's feed on plain node:http objects (the fast path and the framework route).
   * `head`: more response headers, sent with the SSE ones.
   */
  async open(
    caller: Principal,
    resumeId: string | undefined,
    req: IncomingMessage,
    res: ServerResponse,
    head?: Readonly<Record<string, string>>,
  ): Promise<void> {
    const ownerId = caller.owner.id;
    const state = this.stateOf(ownerId);
    state.streams += 1;
    if (state.expiry) clearTimeout(state.expiry);
    state.expiry = undefined;
    let done = false;
    const listener: Listener = {
      heard: (events) => {
        if (done) return;
        let out = '';
        for (const e of events) out += frame(`${this.epoch}-${e.n}`, e.event);
        res.write(out);
      },
      // What changed while NATS was away was never heard: the client refetches what it shows.
      missed: () => {
        if (!done) res.write('event: resync\ndata: {}\n\n');
      },
    };
    let stopHeartbeat: () => void = () => undefined;
    const finish = () => {
      if (done) return;
      done = true;
      stopHeartbeat();
      state.listeners.delete(listener);
      this.letGo(ownerId, state);
      res.end();
    };
    req.on('close', finish);
    res.on('close', finish);
    try {
      await state.ready;
    } catch (err) {
      done = true;
      this.letGo(ownerId, state);
      throw err;
    }
    if (done) return; // the client left while subscribing
    res.writeHead(200, { ...SSE_HEADERS, ...head });
    // From here to the listener's registration nothing awaits: no event can fall in between.
    const after = this.resumable(state, resumeId);
    let out = ': connected\n\n';
    if (resumeId !== undefined && after === undefined) out += 'event: resync\ndata: {}\n\n';
    if (after !== undefined)
      for (const e of state.ring) if (e.n > after) out += frame(`${this.epoch}-${e.n}`, e.event);
    out += `id: ${this.epoch}-${this.counter}\n\n`;
    res.write(out);
    flattenSentHead(res);
    state.listeners.add(listener);
    stopHeartbeat = this.runs.heartbeat(() => res.write(': heartbeat\n\n'));
  }

  /** The number to replay after, when this process holds every event of the owner since then. */
  private resumable(state: OwnerState, resumeId: string | undefined): number | undefined {
    const m = resumeId === undefined ? null : /^([0-9a-f]{16})-(\d{1,15})$/.exec(resumeId);
    if (!m || m[1] !== this.epoch) return undefined;
    const n = Number(m[2]);
    if (n > this.counter || n < state.coveredFrom || n < state.droppedUpTo) return undefined;
    return n;
  }

  private stateOf(ownerId: string): OwnerState {
    const existing = this.owners.get(ownerId);
    if (existing) return existing;
    const listeners = new Set<Listener>();
    const ring: Numbered[] = [];
    // A message carries one event or several (told in one turn): each is a frame of its own.
    const unsubscribe = this.bus.on(Events.ownerFeed(ownerId), (message) => {
      const heard = ownerFeedEventsOf(message).map((event) => ({ n: ++this.counter, event }));
      ring.push(...heard);
      if (ring.length > FEED_RING_SIZE) {
        const dropped = ring.splice(0, ring.length - FEED_RING_SIZE);
        state.droppedUpTo = dropped[dropped.length - 1]?.n ?? state.droppedUpTo;
      }
      for (const l of listeners) l.heard(heard);
    });
    const state: OwnerState = {
      ring,
      listeners,
      unsubscribe,
      // Covered once the NATS server has the subscription: numbers given out before may have missed events.
      ready: this.bus.subscribed().then(() => {
        state.coveredFrom = this.counter;
      }),
      coveredFrom: Number.MAX_SAFE_INTEGER,
      droppedUpTo: 0,
      streams: 0,
      expiry: undefined,
    };
    // A subscription that never became ready is not kept: the next stream tries again.
    state.ready.catch(() => {
      if (this.owners.get(ownerId) !== state) return;
      state.unsubscribe();
      this.owners.delete(ownerId);
    });
    this.owners.set(ownerId, state);
    return state;
  }

  /** A stream of the owner closed; after the last one, the buffer is kept FEED_RETENTION_MS, then dropped. */
  private letGo(ownerId: string, state: OwnerState): void {
    state.streams -= 1;
    if (state.streams > 0) return;
    state.expiry = setTimeout(() => {
      if (this.owners.get(ownerId) !== state || state.streams > 0) return;
      state.unsubscribe();
      this.owners.delete(ownerId);
    }, FEED_RETENTION_MS);
    state.expiry.unref();
  }

  /**
   * The NATS connection came back (the subscriptions in place again): events of the gap were lost to
   * them, so a resume from before now cannot be served exactly, and open streams are told to refetch.
   */
  private reconnected(): void {
    for (const state of this.owners.values()) {
      state.coveredFrom = this.counter;
      for (const l of state.listeners) l.missed();
    }
  }

  onModuleDestroy(): void {
    this.offReconnect();
    for (const state of this.owners.values()) {
      if (state.expiry) clearTimeout(state.expiry);
      state.unsubscribe();
    }
    this.owners.clear();
  }
}
