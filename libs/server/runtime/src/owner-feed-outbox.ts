import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Events, OWNER_FEED_BATCH_LIMIT, type OwnerFeedEvent } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from './tokens';

/**
 * Tells owner feeds (`Events.ownerFeed`) what changed: the events told for an owner in one turn of
 * the event loop leave in one message, in the order told (a stored batch of several runs' events, a
 * dispatched or ended batch of tasks). One event alone leaves as it is. The feed is a hint (at most
 * once, like all plain NATS: clients refetch on `resync` and on reload), so a message that cannot be
 * sent is logged and never fails the work that told it.
 */
@Injectable()
export class OwnerFeedOutbox implements OnModuleDestroy {
  private readonly pending = new Map<string, OwnerFeedEvent[]>();
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  tell(ownerId: string, event: OwnerFeedEvent): void {
    const told = this.pending.get(ownerId);
    if (told) told.push(event);
    else this.pending.set(ownerId, [event]);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  /** Sends what was told since the last flush: one message per owner (more past OWNER_FEED_BATCH_LIMIT). */
  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    for (const [ownerId, events] of this.pending) {
      for (let i = 0; i < events.length; i += OWNER_FEED_BATCH_LIMIT) {
        const part = events.slice(i, i + OWNER_FEED_BATCH_LIMIT);
        try {
          this.bus.emit(
            Events.ownerFeed(ownerId),
            part.length === 1 ? (part[0] as OwnerFeedEvent) : { kind: 'batch', events: part },
          );
        } catch (err) {
          this.logger.warn({ ownerId, err: (err as Error).message }, 'owner feed not told');
        }
      }
    }
    this.pending.clear();
  }

  onModuleDestroy(): void {
    this.flush();
  }
}
