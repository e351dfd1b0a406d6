import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { z } from 'zod';
import { Events, type ChatEvent, type EventContract, type RunEvent } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each entry's listeners take its own event type
type Listener = (event: any) => void;

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

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Calls `listener` with each event of the run published from now on; resolves (with the
   * unsubscribe function) once the NATS server has the subscription, so nothing published after
   * that is missed.
   */
  follow(runId: string, listener: (event: RunEvent) => void): Promise<() => void> {
    return this.share(`run:${runId}`, Events.run(runId), (e) => e.runId === runId, listener);
  }

  /** The same for a chat session's events. */
  followChat(sessionId: string, listener: (event: ChatEvent) => void): Promise<() => void> {
    return this.share(
      `chat:${sessionId}`,
      Events.chat(sessionId),
      (e) => e.sessionId === sessionId,
      listener,
    );
  }

  /** One subscription per key, shared by every listener of it. */
  private async share<E>(
    key: string,
    contract: EventContract<z.ZodType<E>>,
    belongs: (event: E) => boolean,
    listener: (event: E) => void,
  ): Promise<() => void> {
    let entry = this.runs.get(key);
    if (!entry) {
      const listeners = new Set<Listener>();
      const unsubscribe = this.bus.on(contract, (event: E) => {
        if (!belongs(event)) return;
        for (const l of listeners) l(event);
      });
      entry = { listeners, unsubscribe, ready: this.bus.flush() };
      this.runs.set(key, entry);
    }
    const { listeners, ready } = entry;
    listeners.add(listener);
    await ready;
    return () => {
      listeners.delete(listener);
      if (!listeners.size && this.runs.get(key)?.listeners === listeners) {
        this.runs.get(key)?.unsubscribe();
        this.runs.delete(key);
      }
    };
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
    if (this.ticker) clearInterval(this.ticker);
    for (const { unsubscribe } of this.runs.values()) unsubscribe();
    this.runs.clear();
  }
}
