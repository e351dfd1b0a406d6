import { Inject, Injectable } from '@nestjs/common';
import type { HookEvent, PermissionDecision, PlanStep, RunConfig } from '@switchyard/contracts';
import {
  capabilityRefusal,
  decideToolCall,
  DEFAULT_DANGEROUS_COMMANDS,
  type HookVerdict,
  type ToolCall,
} from '@switchyard/permissions';
import type { AppConfig } from '@switchyard/server-config';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { HooksService } from './hooks.service';
import { PermissionSettingsService } from './permission-settings.service';

export interface GateRequest {
  readonly ownerId: string;
  readonly call: ToolCall;
  readonly step: Pick<PlanStep, 'id' | 'requiresApproval'>;
  readonly config: Pick<RunConfig, 'permissionMode' | 'stepApproval' | 'capabilityMode' | 'unattended'>;
  readonly runId?: string;
  /** evaluate: hooks are told it is a dry run. */
  readonly dryRun?: boolean;
  /**
   * The hooks are shown the call once this has resolved: a new run's row being written with its
   * first steps' starts (a hook may look the run up).
   */
  readonly shownAfter?: Promise<unknown>;
}

/**
 * The permission gate every tool call passes: loads the owner's rules and hooks (cached per owner),
 * runs the matching pre-tool-use hooks, and leaves the decision to `decideToolCall`
 * (libs/permissions), the one place the order read-only → hooks → deny → ask → floor → allow →
 * mode is written down. The evaluate endpoint asks the same gate.
 */
@Injectable()
export class PermissionsService {
  private readonly floor: readonly string[];

  constructor(
    private readonly settings: PermissionSettingsService,
    private readonly hooks: HooksService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.floor = config.permissions.dangerousCommands ?? DEFAULT_DANGEROUS_COMMANDS;
  }

  /** Loads (or refreshes) what the gate needs for an owner; later decisions need no round trip. */
  async prepare(ownerId: string): Promise<void> {
    await Promise.all([this.settings.load(ownerId), this.hooks.load(ownerId)]);
  }

  /** Loads what the gate needs for an owner unless a fresh copy is already here. */
  async warm(ownerId: string): Promise<void> {
    if (!this.settings.cached(ownerId) || !this.hooks.cached(ownerId)) await this.prepare(ownerId);
  }

  /** The decision for one tool call: synchronous when nothing needs a hook or a reload. */
  decide(req: GateRequest): PermissionDecision | Promise<PermissionDecision> {
    const rules = this.settings.cached(req.ownerId);
    const hooks = this.hooks.cached(req.ownerId);
    if (!rules || !hooks) return this.prepare(req.ownerId).then(() => this.decide(req));
    const decide = (verdicts: readonly HookVerdict[]) =>
      decideToolCall({
        call: req.call,
        step: req.step,
        config: req.config,
        rules,
        hooks: verdicts,
        options: { floor: this.floor },
      });
    // A call the run's capability refuses is not shown to any hook.
    if (capabilityRefusal(req.call, req.config.capabilityMode)) return decide([]);
    const pre = this.hooks.matching(hooks, 'pre_tool_use', req.call);
    if (pre.length === 0) return decide([]);
    const ask = () =>
      this.hooks.preToolUse(pre, {
        ownerId: req.ownerId,
        runId: req.runId,
        stepId: req.step.id,
        call: req.call,
        dryRun: req.dryRun,
      });
    return (req.shownAfter ? req.shownAfter.then(ask) : ask()).then(decide);
  }

  /** Observing hooks (post_tool_use, post_tool_use_failure, run_complete, run_error): never awaited by runs. */
  fire(
    event: Exclude<HookEvent, 'pre_tool_use'>,
    ownerId: string,
    data: { runId?: string; sessionId?: string; call?: ToolCall; stepId?: string; [k: string]: unknown },
  ): void {
    this.hooks.fire(event, ownerId, data);
  }
}
