import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppError, LocalServerConfig, RemoteServerConfig } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { SecretBox } from '@switchyard/server-db';
import { type McpToolRow } from '@switchyard/server-db-tools';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';
import { AddressPolicy } from '@switchyard/server-runtime';
import { connectMcp, type McpConnection, type ProcessLaunch, type Sampler } from './mcp-connection';
import { McpSampler } from './mcp-sampling';
import { OAuthGrants } from './oauth-grants';
import type { RecordOAuthProvider } from './record-oauth';
import { FAILURE_THRESHOLD, RecordHealth } from './record-health';

const MAX_BACKOFF_MS = 30_000;

interface Entry {
  readonly version: string;
  readonly connection: Promise<McpConnection>;
}

const recordKey = (id: number) => `record:${id}`;

/**
 * MCP clients, created on first use and cached per key: a tool record (`record:<id>`) or a launched
 * server such as a plugin's (`plugin:<id>#<key>`, see `launched`). A record edited since (its updatedAt
 * changed, on any replica) gets a new client; a client whose server died is replaced on the next
 * use, with exponential backoff between failed attempts so a crashing server is not relaunched in a
 * tight loop.
 */
@Injectable()
export class McpClientPool implements OnModuleDestroy {
  private readonly live = new Map<string, Entry>();
  private readonly failures = new Map<string, { count: number; at: number }>();

  constructor(
    private readonly box: SecretBox,
    private readonly addresses: AddressPolicy,
    private readonly health: RecordHealth,
    private readonly oauth: OAuthGrants,
    private readonly sampler: McpSampler,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async get(record: McpToolRow, opts: { fresh?: boolean } = {}): Promise<McpConnection> {
    const key = recordKey(record.id);
    const cached = await this.cached(key, record.updatedAt, opts.fresh);
    if (cached) return cached;
    if (!opts.fresh) {
      const until = await this.health.disabledUntil(record.id);
      if (until) {
        await this.dropKey(key);
        throw new AppError(
          'unavailable',
          `${record.name} is disabled until ${new Date(until).toISOString()} after ${FAILURE_THRESHOLD} failed connections; a successful Test re-enables it`,
          { details: { disabledUntil: new Date(until).toISOString() } },
        );
      }
    }
    // A record that must sign in and cannot is refused before connecting: not a failed connection.
    const settings = this.settingsOf(record);
    const authProvider =
      settings.type === 'REMOTE' && settings.config.oauth
        ? await this.oauth.forConnection(record, settings.config.oauth, () => this.retire(key))
        : undefined;
    return this.open(key, record.updatedAt, record.name, () => this.connect(record, settings, authProvider), {
      fresh: opts.fresh === true,
      onSuccess: () => this.health.clear(record.id),
      onFailure: async () => {
        const { disabledUntil } = await this.health.recordFailure(record.id);
        if (disabledUntil)
          this.logger.warn(
            { record: record.name, disabledUntil: new Date(disabledUntil).toISOString() },
            'mcp record disabled after repeated failures',
          );
      },
    });
  }

  /**
   * A stdio server this registry launches itself (a plugin's), cached under `key` while `version`
   * is unchanged; failed starts back off like records' (without the records' shared three strikes).
   */
  async launched(
    key: string,
    version: string,
    label: string,
    launch: () => Promise<ProcessLaunch>,
  ): Promise<McpConnection> {
    const entry = this.live.get(key);
    if (entry && entry.version === version) {
      // Concurrent first uses (a listing and a call) share one start instead of killing each other's.
      const conn = await entry.connection.catch(() => undefined);
      if (conn && !conn.closed()) return conn;
      if (this.live.get(key) !== entry) return this.launched(key, version, label, launch);
    }
    return this.open(
      key,
      version,
      label,
      async () => {
        const conn = await connectMcp(
          { type: 'PROCESS', launch: await launch() },
          {
            logger: this.logger,
            addresses: this.addresses,
            timeoutMs: this.config.tools.mcpHandshakeTimeoutMs,
            label,
          },
        );
        this.logger.info({ server: label, tools: conn.tools.length }, 'mcp server launched');
        return conn;
      },
      { fresh: false },
    );
  }

  /** The live connection under `key` if it is of `version` and open (not when `fresh`). */
  private async cached(key: string, version: string, fresh: boolean | undefined) {
    const cached = this.live.get(key);
    if (cached && !fresh && cached.version === version) {
      const conn = await cached.connection.catch(() => undefined);
      if (conn && !conn.closed()) return conn;
    }
    return undefined;
  }

  private async open(
    key: string,
    version: string,
    label: string,
    connect: () => Promise<McpConnection>,
    opts: { fresh: boolean; onSuccess?: () => Promise<void>; onFailure?: () => Promise<void> },
  ): Promise<McpConnection> {
    if (!opts.fresh) this.respectBackoff(key, label);
    // The new entry replaces the old one before any await: a concurrent caller finds and shares it.
    const old = this.live.get(key);
    const connection = connect();
    this.live.set(key, { version, connection });
    if (old)
      void old.connection.then(
        (c) => c.close(),
        () => undefined,
      );
    try {
      const conn = await connection;
      this.failures.delete(key);
      await opts.onSuccess?.();
      return conn;
    } catch (err) {
      if (this.live.get(key)?.connection === connection) this.live.delete(key);
      const previous = this.failures.get(key);
      this.failures.set(key, { count: (previous?.count ?? 0) + 1, at: Date.now() });
      await opts.onFailure?.();
      throw err;
    }
  }

  /**
   * Takes the client under `key` out of use without cutting the call in progress on it (that call
   * reports why); it is closed once that call has had its answer.
   */
  private retire(key: string): void {
    const entry = this.live.get(key);
    if (!entry) return;
    this.live.delete(key);
    setTimeout(
      () =>
        void entry.connection.then(
          (c) => c.close(),
          () => undefined,
        ),
      1_000,
    ).unref();
  }

  drop(recordId: number): Promise<void> {
    return this.dropKey(recordKey(recordId));
  }

  /** Closes the client under `key` (a launched server's process ends). */
  async dropKey(key: string): Promise<void> {
    const entry = this.live.get(key);
    if (!entry) return;
    this.live.delete(key);
    const conn = await entry.connection.catch(() => undefined);
    await conn?.close();
  }

  /** Closes every client whose key starts with `prefix` (all of one plugin's servers). */
  async dropPrefix(prefix: string): Promise<void> {
    await Promise.all([...this.live.keys()].filter((k) => k.startsWith(prefix)).map((k) => this.dropKey(k)));
  }

  /** Forgets failed starts under `key`, so the next use launches at once (a changed configuration). */
  forgetFailures(prefix: string): void {
    for (const k of [...this.failures.keys()]) if (k.startsWith(prefix)) this.failures.delete(k);
  }

  /** The open client under `key`, if any (for status reports: nothing is started). */
  async current(key: string): Promise<McpConnection | undefined> {
    const conn = await this.live.get(key)?.connection.catch(() => undefined);
    return conn && !conn.closed() ? conn : undefined;
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.live.keys()].map((k) => this.dropKey(k)));
  }

  private respectBackoff(key: string, label: string): void {
    const f = this.failures.get(key);
    if (!f) return;
    const wait = Math.min(MAX_BACKOFF_MS, 500 * 2 ** (f.count - 1)) - (Date.now() - f.at);
    if (wait > 0) {
      throw new AppError(
        'unavailable',
        `${label} failed to start ${f.count} time(s); next attempt in ${Math.ceil(wait / 100) / 10} s`,
        {
          details: { retryAfterMs: wait },
        },
      );
    }
  }

  /** The record's connection settings, opened. */
  settingsOf(
    record: McpToolRow,
  ):
    | { readonly type: 'LOCAL'; readonly config: LocalServerConfig }
    | { readonly type: 'REMOTE'; readonly config: RemoteServerConfig } {
    if (record.type === 'BUILTIN') throw new Error('built-in records have no MCP server');
    if (!record.configEnc)
      throw new AppError('validation_failed', `${record.name} has no connection settings`);
    const raw: unknown = JSON.parse(this.box.open(record.configEnc));
    return record.type === 'LOCAL'
      ? { type: 'LOCAL', config: LocalServerConfig.parse(raw) }
      : { type: 'REMOTE', config: RemoteServerConfig.parse(raw) };
  }

  private async connect(
    record: McpToolRow,
    settings: ReturnType<McpClientPool['settingsOf']>,
    authProvider: RecordOAuthProvider | undefined,
  ): Promise<McpConnection> {
    const deps = {
      logger: this.logger,
      addresses: this.addresses,
      timeoutMs: this.config.tools.mcpHandshakeTimeoutMs,
      label: `MCP server ${record.name}`,
      ...(record.sampling.enabled
        ? {
            sample: async (params: Parameters<Sampler>[0], signal: AbortSignal) => {
              const o = await this.sampler.sample(record, params, signal);
              const { model, stopReason } = o.result;
              const note = {
                model,
                inputTokens: o.inputTokens,
                outputTokens: o.outputTokens,
                durationMs: o.durationMs,
              };
              return { result: o.result, note: stopReason ? { ...note, stopReason } : note };
            },
          }
        : {}),
    };
    const conn =
      settings.type === 'LOCAL'
        ? await connectMcp(settings, deps)
        : await connectMcp({ ...settings, ...(authProvider ? { authProvider } : {}) }, deps);
    this.logger.info({ record: record.name, tools: conn.tools.length }, 'mcp client connected');
    return conn;
  }
}
