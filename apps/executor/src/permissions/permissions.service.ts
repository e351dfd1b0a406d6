import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  AppError,
  PERMISSIONS_CHANGED_SUBJECT,
  PermissionsChanged,
  type Hook,
  type HookBody,
  type HookEvent,
  type PermissionDecision,
  type PermissionSettings,
  type PlanStep,
  type RuleLists,
  type RunConfig,
} from '@switchyard/contracts';
import {
  COMMAND_TOOL,
  DEFAULT_DANGEROUS_COMMANDS,
  evaluateRules,
  floorHit,
  matchesCall,
  parseMatcher,
  parseRules,
  segmentCommand,
  type Rule,
  type ToolCall,
} from '@switchyard/permissions';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { GLOBAL_SCOPE, PermissionsRepository } from '@switchyard/server-db';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { AddressPolicy, APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { authorize } from '../runs/permission-gate';
import { HookRunner } from './hook-runner';

/** How long rules and hooks are trusted without a change event (a lost broadcast heals by then). */
const CACHE_MS = 5_000;

export interface GateRequest {
  readonly ownerId: string;
  readonly call: ToolCall;
  readonly step: PlanStep;
  readonly config: Pick<RunConfig, 'permissionMode' | 'stepApproval' | 'capabilityMode' | 'unattended'>;
  readonly runId?: string;
  /** evaluate: hooks are told it is a dry run. */
  readonly dryRun?: boolean;
}

interface OwnerView {
  readonly rules: Rule[];
  readonly hooks: ReadonlyArray<{ hook: Hook; matcher: ReturnType<typeof parseMatcher> }>;
  readonly at: number;
}

function scopeOf(ctx: CallContext, scope: 'owner' | 'global'): string {
  if (scope === 'global') {
    if (ctx.role !== 'admin') throw new AppError('forbidden', 'only admins may change the global rules');
    return GLOBAL_SCOPE;
  }
  return requireOwner(ctx, 'rules');
}

/**
 * The permission gate every tool call passes, in the seed's order: pre-tool-use hooks → deny rules
 * → ask rules → allow rules → permission-mode default (global rules and the owner's together: a
 * deny anywhere beats an allow anywhere). An ask in a run nobody can answer is a denial naming what
 * asked. Also the store of rules and hooks (the executor owns them) and the runner of observing hooks.
 */
@Injectable()
export class PermissionsService implements OnModuleInit, OnModuleDestroy {
  private readonly views = new Map<string, OwnerView>();
  private readonly runner: HookRunner;
  private readonly policy: AddressPolicy;
  private readonly floor: readonly string[];
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly repo: PermissionsRepository,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.floor = config.permissions.dangerousCommands ?? DEFAULT_DANGEROUS_COMMANDS;
    this.policy = new AddressPolicy({
      allowPrivate: config.tools.webFetch.allowPrivate,
      privateHosts: config.tools.webFetch.privateHosts,
    });
    this.runner = new HookRunner(this.policy, { PATH: config.tools.commandPath });
  }

  onModuleInit(): void {
    this.unsubscribe = this.bus.subscribe(PERMISSIONS_CHANGED_SUBJECT, (payload) => {
      const msg = PermissionsChanged.safeParse(payload);
      if (!msg.success) return;
      if (msg.data.scope === GLOBAL_SCOPE) this.views.clear();
      else this.views.delete(msg.data.scope);
    });
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  // ── the gate ────────────────────────────────────────────────────────────────────────────────

  /** Loads (or refreshes) what the gate needs for an owner; later decisions need no round trip. */
  async prepare(ownerId: string): Promise<void> {
    const [own, global, hooks] = await Promise.all([
      this.repo.rules(ownerId),
      this.repo.rules(GLOBAL_SCOPE),
      this.repo.hooks(ownerId, { enabledOnly: true }),
    ]);
    const parsedOwn = parseRules(own, 'owner');
    const parsedGlobal = parseRules(global, 'global');
    // Stored rules were valid when saved; a line a newer parser refuses is logged and left out.
    for (const [scope, parsed] of [
      ['owner', parsedOwn],
      ['global', parsedGlobal],
    ] as const) {
      if (!parsed.ok)
        this.logger.error(
          { ownerId, scope, errors: parsed.errors },
          'stored permission rules no longer parse',
        );
    }
    this.views.set(ownerId, {
      rules: [...(parsedOwn.ok ? parsedOwn.rules : []), ...(parsedGlobal.ok ? parsedGlobal.rules : [])],
      hooks: hooks.map((hook) => ({ hook, matcher: parseMatcher(hook.matcher) })),
      at: Date.now(),
    });
  }

  /** Loads what the gate needs for an owner unless a fresh copy is already here. */
  async warm(ownerId: string): Promise<void> {
    if (!this.fresh(ownerId)) await this.prepare(ownerId);
  }

  private fresh(ownerId: string): OwnerView | undefined {
    const view = this.views.get(ownerId);
    return view && Date.now() - view.at <= CACHE_MS ? view : undefined;
  }

  /** The decision for one tool call: synchronous when nothing needs a hook or a reload. */
  decide(req: GateRequest): PermissionDecision | Promise<PermissionDecision> {
    const view = this.fresh(req.ownerId);
    if (!view) return this.prepare(req.ownerId).then(() => this.decide(req));
    if (req.config.capabilityMode === 'read-only' && req.call.effect !== 'read') {
      return {
        decision: 'deny',
        reason: `${req.call.tool} is a ${req.call.effect} tool and this run is read-only`,
      };
    }
    const pre = this.hooksFor(view, 'pre_tool_use', req.call);
    if (!pre.length) return this.byRules(req, view);
    return this.runPreHooks(pre, req).then((denied) => denied ?? this.byRules(req, view));
  }

  private byRules(req: GateRequest, view: OwnerView): PermissionDecision {
    const ruled = evaluateRules(req.call, view.rules, { floor: this.floor });
    const rule = ruled.rule !== undefined ? { rule: ruled.rule } : {};
    if (ruled.decision === 'deny') return { decision: 'deny', reason: ruled.reason, ...rule };
    if (ruled.decision === 'ask')
      return this.askOrDeny(req, { decision: 'ask', reason: ruled.reason, ...rule });
    // The run's own gates (stepApproval, requiresApproval) still ask after an allow rule.
    const byMode = authorize({
      step: req.step,
      tool: { name: req.call.tool, effect: req.call.effect },
      config: req.config,
    });
    if (ruled.decision === 'allow') {
      const explicit =
        req.config.stepApproval === 'all' ||
        (req.config.stepApproval === 'non-read' && req.call.effect !== 'read') ||
        (req.step.requiresApproval === true && req.config.permissionMode !== 'full-access');
      if (explicit) return this.askOrDeny(req, { decision: 'ask', reason: byMode.reason, ...rule });
      return { decision: 'allow', reason: ruled.reason, ...rule };
    }
    if (byMode.decision === 'ask') return this.askOrDeny(req, byMode);
    const floor =
      byMode.decision === 'allow' &&
      req.config.permissionMode === 'approve-for-me' &&
      this.floorAsks(req.call);
    return floor ? this.askOrDeny(req, { decision: 'ask', reason: floor }) : byMode;
  }

  /**
   * approve-for-me runs non-read tools without asking, but not what the dangerous-command floor
   * lists, nor a command the parser cannot analyse (full-access is the explicit way to run those).
   */
  private floorAsks(call: ToolCall): string | undefined {
    if (call.tool !== COMMAND_TOOL) return undefined;
    const command = typeof call.arguments['command'] === 'string' ? call.arguments['command'] : '';
    const parsed = segmentCommand(command);
    if (!parsed.ok) return `the command cannot be analysed (${parsed.reason}); approve-for-me asks for it`;
    for (const segment of parsed.segments) {
      const hit = floorHit(segment, this.floor);
      if (hit)
        return `"${segment.text}" hits the dangerous-command floor entry "${hit}"; approve-for-me asks for it`;
    }
    return undefined;
  }

  private askOrDeny(req: GateRequest, d: PermissionDecision): PermissionDecision {
    if (!req.config.unattended) return d;
    return {
      ...d,
      decision: 'deny',
      reason: `nobody can answer an approval in this run, and it would ask: ${d.reason}`,
    };
  }

  private hooksFor(view: OwnerView, event: HookEvent, call?: ToolCall): Hook[] {
    return view.hooks
      .filter(({ hook, matcher }) => {
        if (hook.event !== event) return false;
        if (!call || !hook.matcher.trim()) return true;
        return matcher.ok && matchesCall(matcher.matcher, call);
      })
      .map(({ hook }) => hook);
  }

  /** Runs the matching pre-tool-use hooks in order; the first deny decides. */
  private async runPreHooks(hooks: Hook[], req: GateRequest): Promise<PermissionDecision | undefined> {
    for (const hook of hooks) {
      const outcome = await this.runner.run(hook, this.envelope('pre_tool_use', hook, req));
      if (outcome.kind === 'deny') return { decision: 'deny', reason: outcome.reason, hook: hook.name };
      if (outcome.kind === 'failed') {
        this.logger.warn(
          { hook: hook.name, runId: req.runId, reason: outcome.reason, failClosed: hook.failClosed },
          'pre_tool_use hook failed',
        );
        if (hook.failClosed)
          return {
            decision: 'deny',
            reason: `hook ${hook.name} failed and is fail-closed: ${outcome.reason}`,
            hook: hook.name,
          };
      }
    }
    return undefined;
  }

  private envelope(event: HookEvent, hook: Hook, req: GateRequest, extra: Record<string, unknown> = {}) {
    return {
      event,
      hook: hook.name,
      ownerId: req.ownerId,
      ...(req.runId ? { runId: req.runId } : {}),
      stepId: req.step.id,
      tool: req.call.tool,
      effect: req.call.effect,
      arguments: req.call.arguments,
      ...(req.dryRun ? { dryRun: true } : {}),
      at: new Date().toISOString(),
      ...extra,
    };
  }

  /** Observing hooks (post_tool_use, post_tool_use_failure, run_complete, run_error): never awaited by runs. */
  fire(
    event: Exclude<HookEvent, 'pre_tool_use'>,
    ownerId: string,
    data: { runId: string; call?: ToolCall; stepId?: string; [k: string]: unknown },
  ): void {
    const view = this.views.get(ownerId);
    if (!view) return;
    for (const hook of this.hooksFor(view, event, data.call)) {
      const { call, ...rest } = data;
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

  async settings(scope: 'owner' | 'global', ctx: CallContext): Promise<PermissionSettings> {
    const key = scope === 'global' ? GLOBAL_SCOPE : scopeOf(ctx, 'owner');
    const [own, global] = await Promise.all([this.repo.rules(key), this.repo.rules(GLOBAL_SCOPE)]);
    return {
      scope,
      allow: own.allow,
      ask: own.ask,
      deny: own.deny,
      updatedAt: own.updatedAt,
      global: { allow: global.allow, ask: global.ask, deny: global.deny },
    };
  }

  async replace(scope: 'owner' | 'global', lists: RuleLists, ctx: CallContext): Promise<PermissionSettings> {
    const key = scopeOf(ctx, scope);
    const parsed = parseRules(lists, scope);
    if (!parsed.ok) {
      throw new AppError(
        'validation_failed',
        `${parsed.errors.length} bad rule${parsed.errors.length === 1 ? '' : 's'}; nothing was saved: ` +
          parsed.errors
            .slice(0, 3)
            .map((e) => `${e.list} line ${e.line}: ${e.message}`)
            .join('; '),
        {
          issues: parsed.errors.map((e) => ({
            path: `${e.list}[${e.line - 1}]`,
            message: `line ${e.line}: ${e.message}`,
          })),
          details: { errors: parsed.errors },
        },
      );
    }
    await this.repo.putRules(key, lists);
    this.changed(key);
    return this.settings(scope, ctx);
  }

  async hooks(ctx: CallContext): Promise<Hook[]> {
    return this.repo.hooks(requireOwner(ctx, 'hooks'));
  }

  async createHook(body: HookBody, ctx: CallContext): Promise<Hook> {
    const ownerId = await this.checkHook(body, ctx);
    const hook = await this.repo.createHook(body.global ? null : ownerId, body);
    this.changed(body.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  async updateHook(id: string, body: HookBody, ctx: CallContext): Promise<Hook> {
    const ownerId = await this.checkHook(body, ctx);
    const before = await this.repo.ownHook(id, ownerId, ctx.role === 'admin');
    const hook = await this.repo.updateHook(id, body.global ? null : ownerId, body);
    this.changed(before.global || body.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  async deleteHook(id: string, ctx: CallContext): Promise<Hook> {
    const ownerId = requireOwner(ctx, 'hooks');
    const before = await this.repo.ownHook(id, ownerId, ctx.role === 'admin');
    const hook = await this.repo.deleteHook(id);
    this.changed(before.global ? GLOBAL_SCOPE : ownerId);
    return hook;
  }

  /** Who may have this hook; the matcher parses; an HTTP URL passes the address checks. */
  private async checkHook(body: HookBody, ctx: CallContext): Promise<string> {
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
    if (scope === GLOBAL_SCOPE) this.views.clear();
    else this.views.delete(scope);
    this.bus.publish(PERMISSIONS_CHANGED_SUBJECT, { scope });
  }
}
