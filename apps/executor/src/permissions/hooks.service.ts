import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppError, type Hook, type HookBody, type HookEvent } from '@switchyard/contracts';
import {
  matchesCall,
  parseMatcher,
  type HookVerdict,
  type ParsedMatcher,
  type ToolCall,
} from '@switchyard/permissions';
import type { AppConfig } from '@switchyard/server-config';
import type { BusPort } from '@switchyard/server-bus';
import { GLOBAL_SCOPE, PermissionsRepository } from '@switchyard/server-db-runs';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER, type AddressPolicy } from '@switchyard/server-runtime';
import { HOOK_RUNNER, hookAddressPolicy, type HookRun, type RunnableHook } from './hook-runner';
import { announceChange, OwnerCache } from './owner-cache';

/**
 * An owner's enabled hooks (their own, the global ones and trusted plugins' hooks), with matchers
 * parsed once. A hook matches a call if any of its matchers does; one without matchers matches every
 * call (an owner's hook has at most one, a plugin's hook may list several).
 */
export type OwnerHooks = ReadonlyArray<{
  readonly hook: RunnableHook;
  readonly matchers: readonly ParsedMatcher[];
}>;

/** An owner's hook's matcher text as the matchers of OwnerHooks: empty text matches every call. */
function matchersOf(text: string): ParsedMatcher[] {
  return text.trim() ? [parseMatcher(text)] : [];
}

/** The hooks of trusted, enabled plugins (global: they join every owner's). */
export interface PluginHookSource {
  active(): Promise<OwnerHooks>;
}
export const PLUGIN_HOOK_SOURCE = Symbol('PLUGIN_HOOK_SOURCE');

/** What hooks need of the permissions repository (an in-memory store in unit tests). */
export type HookStore = Pick<
  PermissionsRepository,
  'hooks' | 'ownHook' | 'createHook' | 'updateHook' | 'deleteHook'
>;

/** What a pre-tool-use hook is told about the call, besides the event and its own name. */
export interface PreToolUse {
  readonly ownerId: string;
  readonly runId?: string | undefined;
  readonly stepId: string;
  readonly call: ToolCall;
  /** The evaluate endpoint's dry run. */
  readonly dryRun?: boolean | undefined;
}

/**
 * Hooks: their settings (owner and global, command hooks for admins only), which ones match a call,
 * running the pre-tool-use ones for the gate, and firing the observing ones.
 */
@Injectable()
export class HooksService implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new OwnerCache<OwnerHooks>();
  private readonly policy: AddressPolicy;
  private unfollow: (() => void) | undefined;

  constructor(
    @Inject(PermissionsRepository) private readonly repo: HookStore,
    @Inject(HOOK_RUNNER) private readonly runner: HookRun,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() @Inject(PLUGIN_HOOK_SOURCE) private readonly plugins?: PluginHookSource,
  ) {
    this.policy = hookAddressPolicy(config);
  }

  onModuleInit(): void {
    this.unfollow = this.cache.follow(this.bus);
  }

  onModuleDestroy(): void {
    this.unfollow?.();
  }

  cached(ownerId: string): OwnerHooks | undefined {
    return this.cache.fresh(ownerId);
  }

  /** Reads the owner's enabled hooks and the trusted plugins' (one read at a time per owner). */
  load(ownerId: string): Promise<OwnerHooks> {
    return this.cache.load(ownerId, async () => {
      const [hooks, plugins] = await Promise.all([
        this.repo.hooks(ownerId, { enabledOnly: true }),
        this.pluginHooks(),
      ]);
      return [...hooks.map((hook) => ({ hook, matchers: matchersOf(hook.matcher) })), ...plugins];
    });
  }

  /**
   * Trusted plugins' hooks: the same for every owner, so read (files, digests) once per cache period
   * rather than once per owner. Kept under GLOBAL_SCOPE (never an owner id): a global change, which
   * trust, untrust and every plugin change announce, drops it with everything else.
   */
  private async pluginHooks(): Promise<OwnerHooks> {
    if (!this.plugins) return [];
    const plugins = this.plugins;
    return this.cache.fresh(GLOBAL_SCOPE) ?? this.cache.load(GLOBAL_SCOPE, () => plugins.active());
  }

  /** The hooks for `event` whose matcher matches the call (an empty matcher matches every call). */
  matching(hooks: OwnerHooks, event: HookEvent, call?: ToolCall): RunnableHook[] {
    return hooks
      .filter(({ hook, matchers }) => {
        if (hook.event !== event) return false;
        if (!call || matchers.length === 0) return true;
        return matchers.some((m) => m.ok && matchesCall(m.matcher, call));
      })
      .map(({ hook }) => hook);
  }

  /** Runs the hooks in order until one denies or fails closed; failures are logged either way. */
  async preToolUse(hooks: readonly RunnableHook[], call: PreToolUse): Promise<HookVerdict[]> {
    const verdicts: HookVerdict[] = [];
    for (const hook of hooks) {
      const outcome = await this.runner.run(hook, {
        event: 'pre_tool_use',
        hook: hook.name,
        ownerId: call.ownerId,
        ...(call.runId ? { runId: call.runId } : {}),
        stepId: call.stepId,
        tool: call.call.tool,
        effect: call.call.effect,
        arguments: call.call.arguments,
        ...(call.dryRun ? { dryRun: true } : {}),
        at: new Date().toISOString(),
      });
      if (outcome.kind === 'deny')
        return [...verdicts, { hook: hook.name, verdict: 'deny', reason: outcome.reason }];
      if (outcome.kind === 'allow') {
        verdicts.push({ hook: hook.name, verdict: 'pass' });
        continue;
      }
      this.logger.warn(
        { hook: hook.name, runId: call.runId, reason: outcome.reason, failClosed: hook.failClosed },
        'pre_tool_use hook failed',
      );
      verdicts.push({
        hook: hook.name,
        verdict: 'failed',
        reason: outcome.reason,
        failClosed: hook.failClosed,
      });
      if (hook.failClosed) return verdicts;
    }
    return verdicts;
  }

  /** Observing hooks (post_tool_use, post_tool_use_failure, run_complete, run_error): never awaited by runs. */
  fire(
    event: Exclude<HookEvent, 'pre_tool_use'>,
    ownerId: string,
    data: { runId?: string; sessionId?: string; call?: ToolCall; stepId?: string; [k: string]: unknown },
  ): void {
    const hooks = this.cache.any(ownerId);
    if (!hooks) return;
    const { call, ...rest } = data;
    for (const hook of this.matching(hooks, event, call)) {
      const envelope = {
        event,
        hook: hook.name,
        ownerId,
        ...(call ? { tool: call.tool, effect: call.effect, arguments: call.arguments } : {}),
        ...rest,
        at: new Date().toISOString(),
      };
      void this.runner.run(hook, envelope).then((outcome) => {
        if (outcome.kind === 'failed')
          this.logger.warn(
            { hook: hook.name, event, runId: data.runId, reason: outcome.reason },
            'hook failed',
          );
      });
    }
  }

  // ── settings ────────────────────────────────────────────────────────────────────────────────

  async list(ctx: CallContext): Promise<Hook[]> {
    return this.repo.hooks(requireOwner(ctx, 'hooks'));
  }

  async create(body: HookBody, ctx: CallContext): Promise<Hook> {
    const ownerId = await this.check(body, ctx);
    const hook = await this.repo.createHook(body.global ? null : ownerId, body);
    this.changed(body.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  async update(id: string, body: HookBody, ctx: CallContext): Promise<Hook> {
    const ownerId = await this.check(body, ctx);
    const before = await this.repo.ownHook(id, ownerId, ctx.role === 'admin');
    const hook = await this.repo.updateHook(id, body.global ? null : ownerId, body);
    this.changed(before.global || body.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  async delete(id: string, ctx: CallContext): Promise<Hook> {
    const ownerId = requireOwner(ctx, 'hooks');
    const before = await this.repo.ownHook(id, ownerId, ctx.role === 'admin');
    const hook = await this.repo.deleteHook(id);
    this.changed(before.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  /** Who may have this hook; the matcher parses; an HTTP URL passes the address checks. */
  private async check(body: HookBody, ctx: CallContext): Promise<string> {
    const ownerId = requireOwner(ctx, 'hooks');
    if (body.type === 'command' && ctx.role !== 'admin')
      throw new AppError(
        'forbidden',
        'command hooks run on the executor host: only admins may create them; use an http hook',
      );
    if (body.global && ctx.role !== 'admin')
      throw new AppError('forbidden', 'only admins may create global hooks');
    if (body.matcher.trim()) {
      const m = parseMatcher(body.matcher.trim());
      if (!m.ok)
        throw new AppError('validation_failed', `matcher: ${m.message}`, {
          issues: [{ path: 'matcher', message: m.message }],
        });
    }
    if (body.type === 'http' && body.url) {
      try {
        await this.policy.vet(body.url);
      } catch (err) {
        if (err instanceof AppError)
          throw new AppError(
            err.code === 'forbidden' ? 'forbidden' : 'validation_failed',
            `url: ${err.message}`,
            {
              issues: [{ path: 'url', message: err.message }],
            },
          );
        throw err;
      }
    }
    return ownerId;
  }

  private changed(scope: string): void {
    this.cache.drop(scope);
    announceChange(this.bus, scope);
  }
}
