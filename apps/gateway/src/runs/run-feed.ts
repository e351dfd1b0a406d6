import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { z } from 'zod';
import { Events, type ChatEvent, type EventContract, type RunEvent } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';

/** What follows a run's (or chat session's) live events: a stream's own object, no closure per stream. */
export interface FeedListener<E> {
  /** An event published now. */
  heard(event: E): void;
  /**
   * The live feed may have missed events: the NATS connection dropped and came back (the
   * subscription is in place again). What was published meanwhile is only in the store.
   */
  missed(): void;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry's listeners take its own event type
type Listener = FeedListener<any>;
const NONE: readonly never[] = [];

/** What a heartbeat reaches: an open stream's own object (no closure per stream). */
export interface Beating {
  heartbeat(): void;
}

/**
 * Live run (and chat session) events for the SSE streams of this gateway: one NATS subscription per run however many
 * clients watch it, and one heartbeat timer for every open stream. Keeps an idle stream down to its
 * socket and a few objects.
 */
@Injectable()
export class RunFeed implements OnModuleDestroy {
  private readonly runs = new Map<
    string,
    { listeners: Set<Listener>; unsubscribe: () => void; ready: Promise<void> }
  >();
  private readonly beats = new Set<Beating>();
  private ticker: NodeJS.Timeout | undefined;
  private readonly offReconnect: () => void;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.offReconnect = bus.onReconnect(() => this.reconnected());
  }

  /**
   * Calls `listener` with each event of the run published from now on; resolves (with the
   * unsubscribe function) once the NATS server has the subscription, so nothing published after
   * that is missed. A drop of the NATS connection on the way delays it until the subscription is in
   * place again; after a drop while following, `listener.missed()` is called.
   */
  follow(runId: string, listener: FeedListener<RunEvent>): Promise<() => void> {
    // A message is a batch of the run's events (the executor's outbox sends them together).
    return this.share(
      `run:${runId}`,
      Events.run(runId),
      (batch) => (batch.events.every((e) => e.runId === runId) ? batch.events : NONE),
      listener,
    );
  }

  /** The same for a chat session's events. */
  followChat(sessionId: string, listener: FeedListener<ChatEvent>): Promise<() => void> {
    return this.share(
      `chat:${sessionId}`,
      Events.chat(sessionId),
      (e) => (e.sessionId === sessionId ? [e] : NONE),
      listener,
    );
  }

  /**
   * One subscription per key, shared by every listener of it. `eventsOf`: a message's events that
   * belong to the key, in order (none when the message names another run or session).
   */
  private async share<M, E>(
    key: string,
    contract: EventContract<z.ZodType<M>>,
    eventsOf: (message: M) => readonly E[],
    listener: FeedListener<E>,
  ): Promise<() => void> {
    let entry = this.runs.get(key);
    if (!entry) {
      const listeners = new Set<Listener>();
      const unsubscribe = this.bus.on(contract, (message: M) => {
        for (const event of eventsOf(message)) for (const l of listeners) l.heard(event);
      });
      const created = { listeners, unsubscribe, ready: this.bus.subscribed() };
      // A subscription that cannot be confirmed (the connection closed for good) is not kept.
      created.ready.catch(() => this.drop(key, listeners));
      entry = created;
      this.runs.set(key, entry);
    }
    const { listeners, ready } = entry;
    listeners.add(listener);
    try {
      await ready;
    } catch (err) {
      listeners.delete(listener);
      throw err;
    }
    return () => {
      listeners.delete(listener);
      if (!listeners.size) this.drop(key, listeners);
    };
  }

  private drop(key: string, listeners: Set<Listener>): void {
    const entry = this.runs.get(key);
    if (entry?.listeners !== listeners) return;
    entry.unsubscribe();
    this.runs.delete(key);
  }

  /** The connection came back with the subscriptions in place: every follower reads what it may have missed. */
  private reconnected(): void {
    for (const { listeners } of this.runs.values()) for (const l of listeners) l.missed();
  }

  /** Calls `beat` every SSE_HEARTBEAT_MS until the returned function is called. */
  heartbeat(beat: () => void): () => void {
    const target: Beating = { heartbeat: beat };
    this.beat(target);
    return () => this.unbeat(target);
  }

  /** Calls `target.heartbeat()` every SSE_HEARTBEAT_MS until `unbeat(target)`. */
  beat(target: Beating): void {
    this.beats.add(target);
    this.ticker ??= setInterval(
      () => this.beats.forEach((b) => b.heartbeat()),
      this.config.http.sseHeartbeatMs,
    );
  }

  unbeat(target: Beating): void {
    this.beats.delete(target);
    if (!this.beats.size && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
  }

  onModuleDestroy(): void {
    this.offReconnect();
    if (this.ticker) clearInterval(this.ticker);
    for (const { unsubscribe } of this.runs.values()) unsubscribe();
    this.runs.clear();
  }
}
