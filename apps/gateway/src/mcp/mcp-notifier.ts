import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Events } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';

/**
 * Server-to-client notifications for the open GET streams of this replica: tools/list_changed when
 * an owner's workflow is published, unpublished or deleted or their MCP access changes, and
 * resources/list_changed when they start a run. One NATS subscription per event (per owner for
 * the owner feed), however many streams listen.
 */
@Injectable()
export class McpNotifier implements OnModuleInit, OnModuleDestroy {
  private readonly owners = new Map<string, { servers: Set<Server>; off: () => void }>();
  private offs: Array<() => void> = [];

  constructor(@Inject(BUS) private readonly bus: Bus) {}

  onModuleInit(): void {
    this.offs = [
      this.bus.on(Events.workflowsChanged, (e) => this.each(e.ownerId, (s) => s.sendToolListChanged())),
      this.bus.on(Events.mcpAccessChanged, (e) => this.each(e.ownerId, (s) => s.sendToolListChanged())),
    ];
  }

  onModuleDestroy(): void {
    this.offs.forEach((off) => off());
    for (const { off } of this.owners.values()) off();
    this.owners.clear();
  }

  /** Notifies `server`'s client until the returned function is called; resolves once subscribed. */
  async listen(ownerId: string, server: Server): Promise<() => void> {
    let entry = this.owners.get(ownerId);
    if (!entry) {
      const off = this.bus.on(Events.ownerFeed(ownerId), (e) => {
        if (e.kind === 'run' && e.type === 'run_created')
          this.each(ownerId, (s) => s.sendResourceListChanged());
      });
      entry = { servers: new Set(), off };
      this.owners.set(ownerId, entry);
    }
    entry.servers.add(server);
    await this.bus.flush();
    return () => {
      const now = this.owners.get(ownerId);
      if (!now) return;
      now.servers.delete(server);
      if (!now.servers.size) {
        now.off();
        this.owners.delete(ownerId);
      }
    };
  }

  private each(ownerId: string, notify: (server: Server) => Promise<void>): void {
    for (const server of this.owners.get(ownerId)?.servers ?? []) notify(server).catch(() => undefined);
  }
}
