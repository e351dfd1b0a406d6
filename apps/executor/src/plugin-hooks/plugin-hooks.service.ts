import { createHash } from 'node:crypto';
import { lstat, mkdir, open, realpath } from 'node:fs/promises';
import { join, relative, isAbsolute } from 'node:path';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  parsePluginHooks,
  PLUGIN_HOOKS_FILE,
  PLUGIN_HOOKS_MAX_BYTES,
  type FieldIssue,
  type PluginHook,
  type PluginHooksEntry,
} from '@switchyard/contracts';
import { parseMatcher } from '@switchyard/permissions';
import { pluginDataDir, type AppConfig } from '@switchyard/server-config';
import type { BusPort } from '@switchyard/server-bus';
import { GLOBAL_SCOPE, PluginHooksRepository, type PluginHookRow } from '@switchyard/server-db-runs';
import { requireAdmin, type CallContext, type Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import type { RunnableHook } from '../permissions/hook-runner';
import type { OwnerHooks, PluginHookSource } from '../permissions/hooks.service';
import { announceChange } from '../permissions/owner-cache';

const ADMIN_ONLY = "only admins may see or trust plugins' hooks: they run on the executor host";

/** A bundle's hooks file as read now: its digest, and its hooks with problems by path. */
interface HooksFile {
  readonly digest: string;
  readonly hooks: ReadonlyArray<PluginHook & { readonly dir: string }>;
  readonly issues: FieldIssue[];
  readonly ignored: FieldIssue[];
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || !(rel.startsWith('..') || isAbsolute(rel));
}

/**
 * Plugins' hooks (`hooks/hooks.json` of a bundle) and the trust an admin gives them. Enabling a
 * plugin never runs its hooks; trusting them does, while the plugin is enabled, from the next call on
 * every replica (the rules-or-hooks-changed broadcast). Trust binds the file's SHA-256: a changed
 * file (an upgrade, a tampered bundle) runs nothing until trusted again. Hooks run on the executor
 * host like an admin's command hooks, in the bundle (or a directory inside it, never outside: `..`
 * and symlinks out are refused) with SWITCHYARD_PLUGIN_ROOT and SWITCHYARD_PLUGIN_DATA set, and are
 * named `plugin/<id>/<name>` in decisions and logs.
 */
@Injectable()
export class PluginHooksService implements PluginHookSource {
  constructor(
    private readonly repo: PluginHooksRepository,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The hooks that run: trusted, enabled plugins whose file is unchanged and valid. */
  async active(): Promise<OwnerHooks> {
    const rows = await this.repo.trustedEnabled();
    const out: Array<OwnerHooks[number]> = [];
    for (const row of rows) {
      const file = await this.read(row).catch((err: Error) => {
        this.logger.warn(
          { plugin: row.id, err: err.message },
          'plugin hooks file unreadable: its hooks do not run',
        );
        return undefined;
      });
      if (!file) continue;
      if (file.digest !== row.hooksDigest || file.issues.length) {
        this.logger.warn(
          { plugin: row.id, changed: file.digest !== row.hooksDigest, issues: file.issues.length },
          'plugin hooks changed since they were trusted (or are invalid): they do not run until trusted again',
        );
        continue;
      }
      const data = pluginDataDir(this.config, row.id);
      await mkdir(data, { recursive: true, mode: 0o700 });
      for (const h of file.hooks) out.push(this.runnable(row, h, data));
    }
    return out;
  }

  async list(ctx: CallContext): Promise<PluginHooksEntry[]> {
    requireAdmin(ctx, ADMIN_ONLY);
    const entries: PluginHooksEntry[] = [];
    for (const row of await this.repo.all()) {
      const file = await this.read(row).catch(() => undefined);
      if (file) entries.push(this.entry(row, file));
    }
    return entries;
  }

  async trust(id: string, ctx: CallContext): Promise<PluginHooksEntry> {
    requireAdmin(ctx, ADMIN_ONLY);
    const row = await this.repo.get(id);
    const file = await this.read(row);
    if (!file)
      throw new AppError(
        'conflict',
        `plugin ${id} ships no hooks (${PLUGIN_HOOKS_FILE} is not in its bundle)`,
      );
    if (file.issues.length)
      throw new AppError(
        'validation_failed',
        `plugin ${id}'s ${PLUGIN_HOOKS_FILE} has ${file.issues.length} problem(s); nothing was trusted`,
        {
          issues: file.issues.map((i) => ({
            ...i,
            path: i.path ? `${PLUGIN_HOOKS_FILE}:${i.path}` : PLUGIN_HOOKS_FILE,
          })),
        },
      );
    const saved = await this.repo.setTrust(id, file.digest, new Date());
    this.logger.info({ plugin: id, by: ctx.ownerId, hooks: file.hooks.length }, 'plugin hooks trusted');
    announceChange(this.bus, GLOBAL_SCOPE);
    return this.entry(saved, file);
  }

  async untrust(id: string, ctx: CallContext): Promise<PluginHooksEntry> {
    requireAdmin(ctx, ADMIN_ONLY);
    await this.repo.get(id);
    const saved = await this.repo.setTrust(id, null, new Date());
    this.logger.info({ plugin: id, by: ctx.ownerId }, 'plugin hooks untrusted');
    announceChange(this.bus, GLOBAL_SCOPE);
    const file = await this.read(saved).catch(() => undefined);
    return this.entry(saved, file ?? { digest: '', hooks: [], issues: [], ignored: [] });
  }

  private runnable(row: PluginHookRow, h: HooksFile['hooks'][number], data: string): OwnerHooks[number] {
    const name = `plugin/${row.id}/${h.name}`;
    const hook: RunnableHook = {
      id: `plugin:${row.id}:${h.name}`,
      ownerId: null,
      name,
      event: h.event,
      matcher: h.matchers.join(' | '),
      type: h.type,
      ...(h.command !== undefined ? { command: h.command } : {}),
      ...(h.url !== undefined ? { url: h.url } : {}),
      timeoutSeconds: h.timeoutSeconds,
      enabled: true,
      failClosed: h.failClosed,
      global: true,
      createdAt: row.hooksTrustedAt?.toISOString() ?? '',
      updatedAt: row.hooksTrustedAt?.toISOString() ?? '',
      plugin: { id: row.id, root: row.installDir, data, cwd: h.dir },
    };
    return { hook, matchers: h.matchers.map((m) => parseMatcher(m)) };
  }

  private entry(row: PluginHookRow, file: HooksFile): PluginHooksEntry {
    const changed = row.hooksTrusted && row.hooksDigest !== file.digest;
    return {
      id: row.id,
      name: row.name,
      version: row.version,
      enabled: row.enabled,
      trusted: row.hooksTrusted,
      trustedAt: row.hooksTrustedAt?.toISOString() ?? null,
      digest: file.digest || null,
      trustedDigest: row.hooksTrusted ? row.hooksDigest : null,
      changed,
      active: row.enabled && row.hooksTrusted && !changed && file.issues.length === 0,
      hooks: file.hooks.map(({ dir: _dir, ...h }) => ({ ...h, name: `plugin/${row.id}/${h.name}` })),
      issues: file.issues,
      ignored: file.ignored,
    };
  }

  /**
   * Reads and checks the bundle's hooks file: undefined when the bundle has none. A symlinked file,
   * one beyond the size limit, a working directory outside the bundle (by `..` or a symlink) and a
   * matcher that does not parse are issues; the file's content is never echoed back.
   */
  private async read(row: PluginHookRow): Promise<HooksFile | undefined> {
    const root = await realpath(row.installDir).catch(() => undefined);
    if (!root) return undefined;
    const path = join(root, PLUGIN_HOOKS_FILE);
    const st = await lstat(path).catch(() => undefined);
    if (!st) return undefined;
    const issues: FieldIssue[] = [];
    if (!st.isFile() || !within(root, await realpath(join(root, 'hooks')))) {
      issues.push({ path: '', message: 'must be a regular file inside the bundle (not a symlink)' });
      return { digest: '', hooks: [], issues, ignored: [] };
    }
    if (st.size > PLUGIN_HOOKS_MAX_BYTES) {
      issues.push({
        path: '',
        message: `the hooks file has ${st.size} bytes; at most ${PLUGIN_HOOKS_MAX_BYTES} are read`,
      });
      return { digest: '', hooks: [], issues, ignored: [] };
    }
    const handle = await open(path, 'r');
    let bytes: Buffer;
    try {
      bytes = Buffer.alloc(PLUGIN_HOOKS_MAX_BYTES + 1);
      const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
      bytes = bytes.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
    const digest = createHash('sha256').update(bytes).digest('hex');
    const parsed = parsePluginHooks(bytes.toString('utf8'));
    const hooks: Array<HooksFile['hooks'][number]> = [];
    for (const h of parsed.hooks) {
      const bad = h.matchers.map((m) => ({ m, p: parseMatcher(m) })).find(({ p }) => !p.ok);
      if (bad && !bad.p.ok) {
        parsed.issues.push({ path: `${h.name}.matcher`, message: `${bad.m}: ${bad.p.message}` });
        continue;
      }
      const dir = await realpath(join(root, h.cwd)).catch(() => undefined);
      if (!dir || !within(root, dir)) {
        parsed.issues.push({
          path: `${h.name}.cwd`,
          message: dir ? 'leads outside the bundle (through a symlink)' : 'no such directory in the bundle',
        });
        continue;
      }
      hooks.push({ ...h, dir });
    }
    return { digest, hooks, issues: parsed.issues, ignored: parsed.ignored };
  }
}
