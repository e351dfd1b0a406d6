import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import {
  AppError,
  PLUGIN_HOOKS_FILE,
  describeIssues,
  type DeletedPlugin,
  type FieldIssue,
  type Plugin,
  type PluginGrantsBody,
  type PluginList,
  type PluginSandboxStatus,
  type PluginServerStatus,
  type PluginSettingsBody,
} from '@switchyard/contracts';
import { pluginDataDir, pluginIncomingDir, type AppConfig } from '@switchyard/server-config';
import { SecretBox } from '@switchyard/server-db';
import { PluginRepository, type PluginRow } from '@switchyard/server-db-tools';
import { requireAdmin, type CallContext, type Logger } from '@switchyard/server-observability';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';
import { BuiltinRegistry } from '../tools/builtin-registry';
import { loadBundle } from './bundle-loader';
import { PluginCache } from './plugin-cache';
import { PluginSandbox } from './plugin-sandbox';
import { openSettings, PluginServers } from './plugin-servers';
import { PluginToolsService } from './plugin-tools.service';

const ADMIN_ONLY = 'managing plugins needs an admin';

const STALE_SCRATCH_MS = 60 * 60_000;

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

/**
 * Installing, upgrading, toggling, granting, configuring and removing plugins. Files:
 * `<PLUGINS_DIR>/bundles/<id>@<version>` (the bundle as installed), `<PLUGINS_DIR>/data/<id>` (its
 * private data: kept across upgrades, removed on uninstall), `<PLUGINS_DIR>/incoming` (scratch:
 * uploads and unpacked archives, moved into place on the same file system).
 */
@Injectable()
export class PluginsUseCases implements OnApplicationBootstrap {
  /** One install at a time per replica: two uploads of one id must not interleave their moves. */
  private installing: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly plugins: PluginRepository,
    private readonly builtins: BuiltinRegistry,
    private readonly cache: PluginCache,
    private readonly servers: PluginServers,
    private readonly tools: PluginToolsService,
    private readonly sandbox: PluginSandbox,
    private readonly box: SecretBox,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Scratch left by a crash or an upload nobody installed: gone after an hour, at the next start. */
  async onApplicationBootstrap(): Promise<void> {
    const names = await readdir(this.incomingDir).catch(() => [] as string[]);
    const stale = Date.now() - STALE_SCRATCH_MS;
    for (const name of names) {
      const path = join(this.incomingDir, name);
      const st = await stat(path).catch(() => undefined);
      if (st && st.mtimeMs < stale) await rm(path, { recursive: true, force: true });
    }
  }

  get incomingDir(): string {
    return pluginIncomingDir(this.config);
  }

  posture(): PluginSandboxStatus {
    return this.sandbox.status();
  }

  async list(caller: CallContext): Promise<PluginList> {
    requireAdmin(caller, ADMIN_ONLY);
    const rows = await this.plugins.all();
    return { items: await Promise.all(rows.map((r) => this.view(r, false))), sandbox: this.posture() };
  }

  async get(caller: CallContext, id: string): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    return this.view(await this.plugins.get(id), true);
  }

  install(caller: CallContext, req: { path: string; upload: boolean }): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const next = this.installing.then(() => this.installNow(req));
    this.installing = next.catch(() => undefined);
    return next;
  }

  private async installNow(req: { path: string; upload: boolean }): Promise<Plugin> {
    await mkdir(this.incomingDir, { recursive: true });
    try {
      const bundle = await loadBundle(req.path, this.incomingDir);
      try {
        const m = bundle.manifest;
        await this.refuseCollisions(m.id, Object.keys(m.tools));
        const bundles = join(this.config.plugins.dir, 'bundles');
        await mkdir(bundles, { recursive: true });
        const target = join(bundles, `${m.id}@${m.version}`);
        const staged = join(this.incomingDir, `stage-${randomUUID()}`);
        if (bundle.scratch) await rename(bundle.root, staged);
        else await cp(bundle.root, staged, { recursive: true, dereference: true });
        // Reinstalling the very same version: the old copy steps aside and goes once the row is written.
        const aside = (await exists(target)) ? join(this.incomingDir, `old-${randomUUID()}`) : undefined;
        if (aside) await rename(target, aside);
        await rename(staged, target);
        let written: { row: PluginRow; previous: PluginRow | undefined };
        try {
          written = await this.plugins.upsert({
            id: m.id,
            version: m.version,
            name: m.name ?? m.id,
            description: m.description,
            manifest: m,
            installDir: target,
          });
        } catch (err) {
          await rm(target, { recursive: true, force: true });
          if (aside) await rename(aside, target);
          throw err;
        }
        await mkdir(pluginDataDir(this.config, m.id), { recursive: true });
        await this.cache.changed({ id: m.id, reason: 'installed' });
        if (aside) await rm(aside, { recursive: true, force: true });
        const previousDir = written.previous?.installDir;
        if (previousDir && previousDir !== target) await rm(previousDir, { recursive: true, force: true });
        this.logger.info(
          { plugin: m.id, version: m.version, upgradedFrom: written.previous?.version },
          written.previous ? 'plugin upgraded' : 'plugin installed',
        );
        return this.view(written.row, false);
      } finally {
        await bundle.cleanup();
      }
    } finally {
      // Only a staged upload is ours to remove: never a path outside incoming/, whoever asks.
      if (req.upload && dirname(resolve(req.path)) === resolve(this.incomingDir))
        await rm(req.path, { force: true });
    }
  }

  /** A tool name already taken by a built-in or another plugin: 409 naming each, nothing installed. */
  private async refuseCollisions(id: string, names: string[]): Promise<void> {
    const others = (await this.plugins.all()).filter((p) => p.id !== id);
    const clashes: string[] = [];
    for (const name of names) {
      if (this.builtins.get(name)) clashes.push(`${name} (a built-in tool)`);
      const owner = others.find((p) => Object.hasOwn(p.manifest.tools, name));
      if (owner) clashes.push(`${name} (a tool of plugin ${owner.id})`);
    }
    if (clashes.length)
      throw new AppError(
        'conflict',
        `tool names already taken: ${clashes.join(', ')}; nothing was installed`,
        {
          details: { tools: clashes },
        },
      );
  }

  async enable(caller: CallContext, id: string): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const row = await this.plugins.update(id, { enabled: true });
    await this.cache.changed({ id, reason: 'enabled' });
    // Started now rather than on the first call; the answer says how that went (or that it is starting).
    return this.view(row, true);
  }

  async disable(caller: CallContext, id: string): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const row = await this.plugins.update(id, { enabled: false });
    await this.cache.changed({ id, reason: 'disabled' });
    return this.view(row, false);
  }

  async delete(caller: CallContext, id: string): Promise<DeletedPlugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const row = await this.plugins.delete(id);
    await this.cache.changed({ id, reason: 'deleted' });
    await rm(row.installDir, { recursive: true, force: true });
    await rm(pluginDataDir(this.config, id), { recursive: true, force: true });
    this.logger.info({ plugin: id, version: row.version }, 'plugin uninstalled');
    return { id, version: row.version };
  }

  async grants(caller: CallContext, id: string, body: PluginGrantsBody): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const row = await this.plugins.get(id);
    const asked = row.manifest.permissions;
    const issues: FieldIssue[] = [];
    if (body.network === true && !asked.network)
      issues.push({ path: 'body.network', message: `the manifest of ${id} does not ask for network access` });
    if (body.files === true && !asked.files)
      issues.push({ path: 'body.files', message: `the manifest of ${id} does not ask for run files` });
    if (issues.length)
      throw new AppError(
        'validation_failed',
        `cannot grant what the plugin does not ask for: ${describeIssues(issues)}`,
        { issues },
      );
    const updated = await this.plugins.update(id, {
      ...(body.network !== undefined ? { networkGranted: body.network } : {}),
      ...(body.files !== undefined ? { filesGranted: body.files } : {}),
    });
    await this.cache.changed({ id, reason: 'grants' });
    return this.view(updated, false);
  }

  async settings(caller: CallContext, id: string, body: PluginSettingsBody): Promise<Plugin> {
    requireAdmin(caller, ADMIN_ONLY);
    const row = await this.plugins.get(id);
    const declared = new Set(row.manifest.settings.map((s) => s.key));
    const unknown = Object.keys(body.values).filter((k) => !declared.has(k));
    if (unknown.length) {
      const issues = unknown.map((k) => ({
        path: `body.values.${k}`,
        message: `${id} declares no setting ${k}`,
      }));
      throw new AppError('validation_failed', `unknown settings: ${unknown.join(', ')}`, { issues });
    }
    const values = { ...openSettings(this.box, row) };
    for (const [k, v] of Object.entries(body.values)) {
      if (v === null) delete values[k];
      else values[k] = v;
    }
    const updated = await this.plugins.update(id, {
      settingsEnc: Object.keys(values).length ? this.box.seal(JSON.stringify(values)) : null,
    });
    await this.cache.changed({ id, reason: 'settings' });
    return this.view(updated, false);
  }

  /** The API's view; `launch` starts an enabled plugin's server to report on it. */
  private async view(row: PluginRow, launch: boolean): Promise<Plugin> {
    const m = row.manifest;
    let server: PluginServerStatus;
    if (row.enabled && launch) server = this.servers.status(row, await this.tools.live(row));
    else server = this.servers.status(row, row.enabled ? await this.servers.running(row.id) : undefined);
    const values = row.settingsEnc ? openSettings(this.box, row) : {};
    const nodes = new Set(m.flowNodes.map((n) => n.tool));
    return {
      id: row.id,
      version: row.version,
      name: row.name,
      description: row.description,
      enabled: row.enabled,
      permissions: { network: m.permissions.network, files: m.permissions.files },
      grants: {
        network: m.permissions.network && row.networkGranted,
        files: m.permissions.files && row.filesGranted,
      },
      tools: Object.entries(m.tools).map(([name, t]) => ({
        name,
        effect: t.effect,
        idempotent: t.idempotent,
        requiresApproval: t.requiresApproval,
        flowNode: nodes.has(name),
      })),
      flowNodes: m.flowNodes,
      settings: m.settings.map((s) => {
        const value = values[s.key];
        return {
          key: s.key,
          label: s.label,
          secret: s.secret,
          required: s.required,
          set: value !== undefined,
          ...(value !== undefined && !s.secret ? { value } : {}),
        };
      }),
      hooks: await exists(join(row.installDir, PLUGIN_HOOKS_FILE)),
      server,
      sandbox: this.posture(),
      installedAt: row.installedAt,
      updatedAt: row.updatedAt,
    };
  }
}
