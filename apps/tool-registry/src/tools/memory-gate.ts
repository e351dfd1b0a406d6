import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Events, Rpc } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';

/** A cached answer is this fresh at most; a change made on another replica arrives as an event sooner. */
const TTL_MS = 30_000;
/** Owners remembered at once; past this the cache starts over (it only saves a round trip). */
const MAX_OWNERS = 10_000;

interface Entry {
  readonly enabled: boolean;
  readonly at: number;
}

/**
 * Whether memory is on for the caller (the planner owns the setting): the memory tools exist in the
 * caller's catalog, and may be invoked, only while it is. Cached per owner briefly; the planner's
 * `memorySettingChanged` event replaces the cached value, so a switch shows in the next listing.
 */
@Injectable()
export class MemoryGate implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new Map<string, Entry>();
  /** Bumped by each event, so a lookup that was in flight when the setting changed is not cached. */
  private readonly generation = new Map<string, number>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.memorySettingChanged, ({ ownerId, enabled }) => {
      this.generation.set(ownerId, (this.generation.get(ownerId) ?? 0) + 1);
      this.remember(ownerId, enabled);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  async enabled(caller: CallContext): Promise<boolean> {
    const ownerId = caller.ownerId;
    if (!ownerId) return false;
    const cached = this.cache.get(ownerId);
    if (cached && Date.now() - cached.at < TTL_MS) return cached.enabled;
    const generation = this.generation.get(ownerId) ?? 0;
    try {
      const { enabled } = await this.bus.call(Rpc.memory.settingsGet, {}, { ctx: caller, timeoutMs: 3_000 });
      if ((this.generation.get(ownerId) ?? 0) === generation) this.remember(ownerId, enabled);
      return this.cache.get(ownerId)?.enabled ?? enabled;
    } catch (err) {
      // The planner is down: no memory tools this time (not cached, so they return with it).
      this.logger.warn(
        { err: (err as Error).message },
        'memory tools left out: the memory setting is unknown',
      );
      return false;
    }
  }

  private remember(ownerId: string, enabled: boolean): void {
    if (this.cache.size >= MAX_OWNERS && !this.cache.has(ownerId)) this.cache.clear();
    this.cache.set(ownerId, { enabled, at: Date.now() });
  }
}
