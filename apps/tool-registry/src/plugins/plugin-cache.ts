import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Events, type PluginChangedEvent } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { PluginRepository, type PluginRow } from '@switchyard/server-db-tools';
import { BUS } from '@switchyard/server-runtime';
import { PluginServers } from './plugin-servers';

/** Safety net for a missed change event (plain NATS is at-most-once). */
const MAX_AGE_MS = 30_000;

/**
 * The enabled plugins, cached per replica so a tool call does not read Postgres. A change on any
 * replica is published; every replica then forgets its list and stops that plugin's servers, so a
 * disable, upgrade, grant or uninstall takes effect everywhere at once.
 */
@Injectable()
export class PluginCache implements OnModuleInit, OnModuleDestroy {
  private cached: { at: number; rows: Promise<PluginRow[]> } | undefined;
  private unsubscribe: (() => void) | undefined;
  private readonly origin = randomUUID();

  constructor(
    private readonly plugins: PluginRepository,
    private readonly servers: PluginServers,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.pluginChanged, (event) => {
      // Our own echo: acting on it would stop a server started since (enable starts one at once).
      if (event.origin === this.origin) return;
      this.cached = undefined;
      void this.servers.stop(event.id);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  /** Tell every replica (this one first, before the answer goes out) that a plugin changed. */
  async changed(event: Omit<PluginChangedEvent, 'origin'>): Promise<void> {
    this.cached = undefined;
    await this.servers.stop(event.id);
    this.bus.emit(Events.pluginChanged, { ...event, origin: this.origin });
    // A trusted plugin's hooks run only while it is installed and enabled: every executor reloads
    // the global hooks now rather than when its permissions cache expires.
    if (event.reason !== 'grants' && event.reason !== 'settings')
      this.bus.emit(Events.permissionsChanged, { scope: 'global' }); // GLOBAL_SCOPE of the executor's rules
  }

  async enabled(): Promise<PluginRow[]> {
    if (!this.cached || Date.now() - this.cached.at > MAX_AGE_MS) {
      const rows = this.plugins.enabled();
      this.cached = { at: Date.now(), rows };
      rows.catch(() => (this.cached = undefined));
    }
    return this.cached.rows;
  }

  /** The enabled plugin that declares `tool`, if any. */
  async owning(tool: string): Promise<PluginRow | undefined> {
    return (await this.enabled()).find((p) => Object.hasOwn(p.manifest.tools, tool));
  }
}
