import { Inject, Injectable } from '@nestjs/common';
import type { SandboxPosture, ToolDescriptor, ToolResult } from '@switchyard/contracts';
import type { PluginRow } from '@switchyard/server-db-tools';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import type { McpConnection } from '../mcp/mcp-connection';
import { CATALOG_WAIT_MS, McpToolsService, withoutDialect } from '../mcp/mcp-tools.service';
import { PluginCache } from './plugin-cache';
import { pluginFileAccess } from '../files/plugin-files';
import { PluginSandbox, type ExtraBind } from './plugin-sandbox';
import { PluginServers } from './plugin-servers';

/** A tool's catalog entry: the server's schema and text, the manifest's metadata and flow node. */
export function pluginDescriptors(
  plugin: PluginRow,
  conn: McpConnection,
  posture: SandboxPosture = 'sandboxed',
): ToolDescriptor[] {
  const nodes = new Map(plugin.manifest.flowNodes.map((n) => [n.tool, n]));
  const fileAccess = pluginFileAccess(plugin, posture);
  return conn.tools
    .filter((t) => Object.hasOwn(plugin.manifest.tools, t.name))
    .map((t): ToolDescriptor => {
      const meta = plugin.manifest.tools[t.name];
      const node = nodes.get(t.name);
      const outputSchema = node
        ? { ...node.outputs, ...(node.examples.length ? { examples: node.examples } : {}) }
        : t.outputSchema
          ? withoutDialect(t.outputSchema)
          : undefined;
      const description = [t.description || node?.label || t.name, node?.help].filter(Boolean).join('\n\n');
      return {
        name: t.name,
        description,
        inputSchema: withoutDialect(t.inputSchema),
        effect: meta?.effect ?? 'external',
        idempotent: meta?.idempotent ?? false,
        source: 'plugin',
        plugin: plugin.id,
        ...(meta?.requiresApproval ? { requiresApproval: true } : {}),
        ...(outputSchema ? { outputSchema } : {}),
        ...(fileAccess ? { fileAccess } : {}),
      };
    });
}

/** The tools of enabled plugins in the catalog, and calls to them (through the MCP call path). */
@Injectable()
export class PluginToolsService {
  constructor(
    private readonly cache: PluginCache,
    private readonly servers: PluginServers,
    private readonly mcp: McpToolsService,
    private readonly sandbox: PluginSandbox,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The default server of `plugin`, waiting at most `waitMs` (it goes on starting in the background). */
  async live(plugin: PluginRow, waitMs = CATALOG_WAIT_MS): Promise<McpConnection | undefined> {
    const pending = this.servers.connection(plugin);
    pending.catch(() => undefined);
    return Promise.race([
      pending,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), waitMs).unref()),
    ]).catch((err: Error) => {
      this.logger.warn({ plugin: plugin.id, err: err.message }, 'plugin server left out of the catalog');
      return undefined;
    });
  }

  async descriptors(): Promise<ToolDescriptor[]> {
    return (await this.contributions(await this.cache.enabled())).flatMap((p) => p.tools);
  }

  /** The tools of the enabled plugins among `ids`, per plugin, in that order; silent ones are left out. */
  async descriptorsOf(ids: readonly string[]): Promise<Array<{ pluginId: string; tools: ToolDescriptor[] }>> {
    const enabled = new Map((await this.cache.enabled()).map((p) => [p.id, p]));
    const chosen = [...new Set(ids)].flatMap((id) => enabled.get(id) ?? []);
    return (await this.contributions(chosen)).filter((p) => p.tools.length > 0);
  }

  private contributions(
    plugins: readonly PluginRow[],
  ): Promise<Array<{ pluginId: string; tools: ToolDescriptor[] }>> {
    return Promise.all(
      plugins.map(async (plugin) => {
        const conn = await this.live(plugin);
        return {
          pluginId: plugin.id,
          tools: conn ? pluginDescriptors(plugin, conn, this.sandbox.status().posture) : [],
        };
      }),
    );
  }

  /**
   * A runner for `tool` when an enabled plugin declares it, else undefined. `launch` sends the call
   * to a server of its own (keyed, with extra binds: e.g. one run's granted files) instead of the
   * plugin's default one.
   */
  async runner(
    tool: string,
    args: Record<string, unknown>,
    launch?: { key: string; binds: readonly ExtraBind[] },
  ): Promise<((signal: AbortSignal, timeoutMs: number) => Promise<ToolResult>) | undefined> {
    const plugin = await this.cache.owning(tool);
    if (!plugin) return undefined;
    return async (signal, timeoutMs) => {
      if (launch) this.servers.busy(plugin.id, launch.key);
      try {
        const conn = await this.servers.connection(plugin, launch ?? {});
        return await this.mcp.call(conn, {
          name: tool,
          tool,
          args,
          signal,
          timeoutMs,
          validatorKey: `plugin:${plugin.id}:${plugin.updatedAt}:${tool}`,
          server: `plugin ${plugin.id}'s server`,
          onExit: () => (launch ? this.servers.release(plugin.id, launch.key) : this.servers.stop(plugin.id)),
        });
      } finally {
        if (launch) this.servers.idleAfterCall(plugin.id, launch.key);
      }
    };
  }
}
