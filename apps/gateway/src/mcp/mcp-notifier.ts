import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { Events, ownerFeedEventsOf } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';

/** At most one notification of a kind per stream in this window; the last change is always told. */
export const LIST_CHANGED_WINDOW_MS = 1_000;

type ListChanged = 'notifications/tools/list_changed' | 'notifications/resources/list_changed';
type Notify = (notification: ServerNotification) => Promise<unknown>;

/**
 * One stream's list-changed notifications, coalesced: the first of a kind goes at once, the ones
 * that follow within LIST_CHANGED_WINDOW_MS become one sent when the window ends. A client re-lists
 * on each anyway; an owner starting runs in a loop would otherwise send one per run down every
 * open stream.
 */
class Coalescer {
  private readonly sentAt = new Map<ListChanged, number>();
  private readonly timers = new Map<ListChanged, NodeJS.Timeout>();

  constructor(private readonly notify: Notify) {}

  changed(method: ListChanged): void {
    if (this.timers.has(method)) return; // one is due already
    const wait = (this.sentAt.get(method) ?? -Infinity) + LIST_CHANGED_WINDOW_MS - Date.now();
    if (wait <= 0) return this.send(method);
    this.timers.set(
      method,
      setTimeout(() => {
        this.timers.delete(method);
        this.send(method);
      }, wait),
    );
  }

  stop(): void {
    this.timers.forEach((t) => clearTimeout(t));
    this.timers.clear();
  }

  private send(method: ListChanged): void {
    this.sentAt.set(method, Date.now());
    this.notify({ method }).catch(() => undefined); // the client left
  }
}

/**
 * Server-to-client notifications for the standalone (GET) streams open on this replica:
 * tools/list_changed when an owner's workflow is published, unpublished or deleted or their MCP
 * access changes, and resources/list_changed when they start a run. One NATS subscription per event
 * (per owner for the owner feed), however many streams listen.
 */
@Injectable()
export class McpNotifier implements OnModuleInit, OnModuleDestroy {
  private readonly owners = new Map<string, { streams: Set<Coalescer>; off: () => void }>();
  private offs: Array<() => void> = [];

  constructor(@Inject(BUS) private readonly bus: Bus) {}

  onModuleInit(): void {
    this.offs = [
      this.bus.on(Events.workflowsChanged, (e) => this.each(e.ownerId, 'notifications/tools/list_changed')),
      this.bus.on(Events.mcpAccessChanged, (e) => this.each(e.ownerId, 'notifications/tools/list_changed')),
    ];
  }

  onModuleDestroy(): void {
    this.offs.forEach((off) => off());
    for (const { off, streams } of this.owners.values()) {
      off();
      streams.forEach((s) => s.stop());
    }
    this.owners.clear();
  }

  /** Sends `ownerId`'s notifications through `notify` until the returned function is called; resolves once subscribed. */
  async listen(ownerId: string, notify: Notify): Promise<() => void> {
    let entry = this.owners.get(ownerId);
    if (!entry) {
      const off = this.bus.on(Events.ownerFeed(ownerId), (m) => {
        if (ownerFeedEventsOf(m).some((e) => e.kind === 'run' && e.type === 'run_created'))
          this.each(ownerId, 'notifications/resources/list_changed');
      });
      entry = { streams: new Set(), off };
      this.owners.set(ownerId, entry);
    }
    const stream = new Coalescer(notify);
    entry.streams.add(stream);
    await this.bus.flush();
    return () => {
      stream.stop();
      const now = this.owners.get(ownerId);
      if (!now) return;
      now.streams.delete(stream);
      if (!now.streams.size) {
        now.off();
        this.owners.delete(ownerId);
      }
    };
  }

  private each(ownerId: string, method: ListChanged): void {
    for (const stream of this.owners.get(ownerId)?.streams ?? []) stream.changed(method);
  }
}
