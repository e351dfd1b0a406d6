import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppError, LocalServerConfig, RemoteServerConfig } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { SecretBox } from '@switchyard/server-db';
import { type McpToolRow } from '@switchyard/server-db-tools';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';
import { AddressPolicy } from '@switchyard/server-runtime';
import { connectMcp, type McpConnection } from './mcp-connection';
import { FAILURE_THRESHOLD, RecordHealth } from './record-health';

const MAX_BACKOFF_MS = 30_000;

interface Entry {
  readonly version: string;
  readonly connection: Promise<McpConnection>;
}

/**
 * MCP clients, created on first use and cached per record. A record edited since (its updatedAt
 * changed, on any replica) gets a new client; a client whose server died is replaced on the next
 * use, with exponential backoff between failed attempts so a crashing server is not relaunched in a
 * tight loop.
 */
@Injectable()
export class McpClientPool implements OnModuleDestroy {
  private readonly live = new Map<number, Entry>();
  private readonly failures = new Map<number, { count: number; at: number }>();

  constructor(
    private readonly box: SecretBox,
    private readonly addresses: AddressPolicy,
    private readonly health: RecordHealth,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async get(record: McpToolRow, opts: { fresh?: boolean } = {}): Promise<McpConnection> {
    const version = record.updatedAt;
    const cached = this.live.get(record.id);
    if (cached && !opts.fresh && cached.version === version) {
      const conn = await cached.connection.catch(() => undefined);
      if (conn && !conn.closed()) return conn;
    }
    await this.drop(record.id);
    if (!opts.fresh) {
      const until = await this.health.disabledUntil(record.id);
      if (until) {
        throw new AppError(
          'unavailable',
          `${record.name} is disabled until ${new Date(until).toISOString()} after ${FAILURE_THRESHOLD} failed connections; a successful Test re-enables it`,
          { details: { disabledUntil: new Date(until).toISOString() } },
        );
      }
      this.respectBackoff(record);
    }
    const connection = this.connect(record);
    this.live.set(record.id, { version, connection });
    try {
      const conn = await connection;
      this.failures.delete(record.id);
      await this.health.clear(record.id);
      return conn;
    } catch (err) {
      this.live.delete(record.id);
      const previous = this.failures.get(record.id);
      this.failures.set(record.id, { count: (previous?.count ?? 0) + 1, at: Date.now() });
      const { disabledUntil } = await this.health.recordFailure(record.id);
      if (disabledUntil)
        this.logger.warn(
          { record: record.name, disabledUntil: new Date(disabledUntil).toISOString() },
          'mcp record disabled after repeated failures',
        );
      throw err;
    }
  }

  async drop(recordId: number): Promise<void> {
    const entry = this.live.get(recordId);
    if (!entry) return;
    this.live.delete(recordId);
    const conn = await entry.connection.catch(() => undefined);
    await conn?.close();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.live.keys()].map((id) => this.drop(id)));
  }

  private respectBackoff(record: McpToolRow): void {
    const f = this.failures.get(record.id);
    if (!f) return;
    const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (f.count - 1)) - (Date.now() - f.at);
    if (wait > 0) {
      throw new AppError(
        'unavailable',
        `${record.name} failed to start ${f.count} time(s); next attempt in ${Math.ceil(wait / 100) / 10} s`,
        {
          details: { retryAfterMs: wait },
        },
      );
    }
  }

  private async connect(record: McpToolRow): Promise<McpConnection> {
    if (record.type === 'BUILTIN') throw new Error('built-in records have no MCP server');
    if (!record.configEnc)
      throw new AppError('validation_failed', `${record.name} has no connection settings`);
    const raw: unknown = JSON.parse(this.box.open(record.configEnc));
    const deps = {
      logger: this.logger,
      addresses: this.addresses,
      timeoutMs: this.config.tools.mcpHandshakeTimeoutMs,
      label: `MCP server ${record.name}`,
    };
    const conn =
      record.type === 'LOCAL'
        ? await connectMcp({ type: 'LOCAL', config: LocalServerConfig.parse(raw) }, deps)
        : await connectMcp({ type: 'REMOTE', config: RemoteServerConfig.parse(raw) }, deps);
    this.logger.info({ record: record.name, tools: conn.tools.length }, 'mcp client connected');
    return conn;
  }
}
