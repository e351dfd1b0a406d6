import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { mkdir } from 'node:fs/promises';
import type { PluginServerStatus } from '@switchyard/contracts';
import { pluginDataDir, type AppConfig } from '@switchyard/server-config';
import { SecretBox } from '@switchyard/server-db';
import type { PluginRow } from '@switchyard/server-db-tools';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { McpClientPool } from '../mcp/mcp-client.pool';
import type { McpConnection } from '../mcp/mcp-connection';
import { PluginSandbox, type ExtraBind } from './plugin-sandbox';

/** The default server of a plugin: the one the catalog lists and calls go to. */
export const DEFAULT_KEY = 'default';

/** The admin's settings of a plugin (secrets decrypted), as its server's SWITCHYARD_PLUGIN_CONFIG. */
export function openSettings(box: SecretBox, row: PluginRow): Record<string, string> {
  if (!row.settingsEnc) return {};
  return JSON.parse(box.open(row.settingsEnc)) as Record<string, string>;
}

/**
 * Plugin server processes, through the one MCP client pool. Each is keyed by (plugin, key): the
 * default server under DEFAULT_KEY, and any number of others a caller asks for with extra binds
 * (e.g. one per run, seeing that run's granted files), each its own process in its own sandbox.
 * A plugin's row version is part of the key's version, so an upgrade, a grant or new settings
 * start a new process on next use.
 */
/** A keyed server (one run's) stops after this long without a call: its run ended or waits on a person. */
export const KEYED_IDLE_MS = 60_000;

@Injectable()
export class PluginServers implements OnModuleDestroy {
  private readonly errors = new Map<string, string>();
  private readonly idle = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly pool: McpClientPool,
    private readonly sandbox: PluginSandbox,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private poolKey(id: string, key: string): string {
    return `plugin:${id}#${key}`;
  }

  /** The plugin's server under `key` (started if needed), with `binds` shown to that process only. */
  async connection(
    plugin: PluginRow,
    opts: { key?: string; binds?: readonly ExtraBind[] } = {},
  ): Promise<McpConnection> {
    const key = opts.key ?? DEFAULT_KEY;
    const posture = this.sandbox.status().posture;
    const version = `${plugin.version}|${plugin.updatedAt}|${posture}|${JSON.stringify(opts.binds ?? [])}`;
    try {
      const conn = await this.pool.launched(
        this.poolKey(plugin.id, key),
        version,
        `plugin ${plugin.id}`,
        async () => {
          const dataDir = pluginDataDir(this.config, plugin.id);
          await mkdir(dataDir, { recursive: true });
          return this.sandbox.launch({
            id: plugin.id,
            manifest: plugin.manifest,
            installDir: plugin.installDir,
            dataDir,
            network: plugin.manifest.permissions.network && plugin.networkGranted,
            configJson: JSON.stringify(openSettings(this.box, plugin)),
            binds: opts.binds ?? [],
          });
        },
      );
      if (key === DEFAULT_KEY) this.errors.delete(plugin.id);
      return conn;
    } catch (err) {
      if (key === DEFAULT_KEY) this.errors.set(plugin.id, (err as Error).message);
      throw err;
    }
  }

  /** The default server if it runs on this replica; nothing is started. */
  running(id: string): Promise<McpConnection | undefined> {
    return this.pool.current(this.poolKey(id, DEFAULT_KEY));
  }

  /** A call to a keyed server starts: it must not be stopped for idleness meanwhile. */
  busy(id: string, key: string): void {
    const k = this.poolKey(id, key);
    clearTimeout(this.idle.get(k));
    this.idle.delete(k);
  }

  /** A call to a keyed server ended: stop it once it has been idle for KEYED_IDLE_MS. */
  idleAfterCall(id: string, key: string, idleMs = KEYED_IDLE_MS): void {
    if (key === DEFAULT_KEY) return;
    const k = this.poolKey(id, key);
    clearTimeout(this.idle.get(k));
    const timer = setTimeout(() => {
      this.idle.delete(k);
      void this.release(id, key);
    }, idleMs);
    timer.unref();
    this.idle.set(k, timer);
  }

  onModuleDestroy(): void {
    for (const timer of this.idle.values()) clearTimeout(timer);
    this.idle.clear();
  }

  /** Stops one keyed server of a plugin (e.g. when the run it served ends). */
  release(id: string, key: string): Promise<void> {
    return this.pool.dropKey(this.poolKey(id, key));
  }

  /** Stops every server of the plugin on this replica; the next use starts afresh. */
  async stop(id: string): Promise<void> {
    this.errors.delete(id);
    this.pool.forgetFailures(`plugin:${id}#`);
    await this.pool.dropPrefix(`plugin:${id}#`);
  }

  /** What this replica knows of the default server, given its live connection if any. */
  status(plugin: PluginRow, conn: McpConnection | undefined): PluginServerStatus {
    if (!plugin.enabled) return { state: 'disabled', missingTools: [] };
    if (conn) {
      const listed = new Set(conn.tools.map((t) => t.name));
      return {
        state: 'running',
        missingTools: Object.keys(plugin.manifest.tools).filter((t) => !listed.has(t)),
      };
    }
    const error = this.errors.get(plugin.id);
    return error ? { state: 'failed', error, missingTools: [] } : { state: 'stopped', missingTools: [] };
  }
}
