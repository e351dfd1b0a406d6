import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Events, type RecordChangedEvent } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { McpToolRepository, type McpToolRow } from '@switchyard/server-db-tools';
import { BUS } from '@switchyard/server-runtime';
import { McpClientPool } from './mcp-client.pool';

/** Safety net for a missed change event (plain NATS is at-most-once). */
const MAX_AGE_MS = 30_000;

/**
 * The enabled MCP records, cached per replica so a tool call does not read Postgres. Any replica
 * that changes a record publishes RECORD_CHANGED_SUBJECT; every replica then forgets its list and
 * drops that record's client, so an edit, toggle or delete takes effect everywhere at once.
 */
@Injectable()
export class RecordCache implements OnModuleInit, OnModuleDestroy {
  private cached: { at: number; rows: Promise<McpToolRow[]> } | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly records: McpToolRepository,
    private readonly pool: McpClientPool,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.recordChanged, (event) => {
      this.cached = undefined;
      if (event.id > 0) void this.pool.drop(event.id);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  /** Tell every replica (this one included) that a record changed. */
  changed(event: RecordChangedEvent): void {
    this.cached = undefined;
    void this.pool.drop(event.id);
    this.bus.emit(Events.recordChanged, event);
  }

  /** Forget the cached list here and on every replica, keeping clients (no version change). */
  forget(): void {
    this.cached = undefined;
    this.bus.emit(Events.recordChanged, { id: 0, reason: 'updated' });
  }

  async enabledMcpRecords(): Promise<McpToolRow[]> {
    if (!this.cached || Date.now() - this.cached.at > MAX_AGE_MS) {
      const rows = this.records
        .all({ status: 'ENABLED' })
        .then((all) => all.filter((r) => r.type !== 'BUILTIN'));
      this.cached = { at: Date.now(), rows };
      rows.catch(() => (this.cached = undefined));
    }
    return this.cached.rows;
  }
}
