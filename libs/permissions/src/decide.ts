/**
 * The permission gate as one pure function. Every tool call of every run, and the evaluate
 * endpoint's dry run, is decided here, in this order:
 *
 *   read-only capability → pre-tool-use hooks → deny rules → ask rules → what the rules cannot be
 *   checked against → dangerous-command floor → allow rules → the run's approval gates
 *   (stepApproval, the step's and the tool's requiresApproval) → permission-mode default
 *
 * An ask in a run nobody can answer (`unattended`) is a denial naming what asked. No I/O: the
 * executor loads the rules, runs the hooks and hands both in as data.
 */

import type { PermissionDecision, RunConfig } from '@switchyard/contracts';
import { evaluateRules, type EvaluateOptions } from './evaluate';
import type { ToolCall } from './matchers';
import type { Rule } from './rules';

/** What one pre-tool-use hook said, in the order the hooks ran. */
export type HookVerdict =
  | { readonly hook: string; readonly verdict: 'pass' }
  | { readonly hook: string; readonly verdict: 'deny'; readonly reason: string }
  | {
      readonly hook: string;
      readonly verdict: 'failed';
      readonly reason: string;
      readonly failClosed: boolean;
    };

export interface ToolCallRequest {
  readonly call: ToolCall;
  /** The plan step making the call; `requiresApproval` is the plan's own request for a gate. */
  readonly step: { readonly id: string; readonly requiresApproval?: boolean | undefined };
  readonly config: Pick<RunConfig, 'permissionMode' | 'stepApproval' | 'capabilityMode' | 'unattended'>;
  /** The owner's and the global rules together. */
  readonly rules: readonly Rule[];
  /** Verdicts of the matching pre-tool-use hooks; empty when none matched or the capability refused. */
  readonly hooks: readonly HookVerdict[];
  /** The dangerous-command floor and analysis limits; defaults as in evaluateRules. */
  readonly options?: EvaluateOptions;
}

/** `decision` with its reason and what decided: a rule, a hook or a floor entry (else the mode). */
export type ToolCallDecision = PermissionDecision;

export function decideToolCall(req: ToolCallRequest): ToolCallDecision {
  const refused = capabilityRefusal(req.call, req.config.capabilityMode);
  if (refused) return refused;
  const hooked = hookDecision(req.hooks);
  if (hooked) return hooked;

  const ruled = evaluateRules(req.call, req.rules, req.options);
  const by = {
    ...(ruled.rule !== undefined ? { rule: ruled.rule } : {}),
    ...(ruled.floor !== undefined ? { floor: ruled.floor } : {}),
  };
  switch (ruled.decision) {
    case 'deny':
      return { decision: 'deny', reason: ruled.reason, ...by };
    case 'ask':
      return askOrDeny(req, { decision: 'ask', reason: ruled.reason, ...by });
    case 'allow': {
      // An allow rule answers for the rules only; the run's own gates still ask.
      const gate = approvalGate(req);
      return gate
        ? askOrDeny(req, { decision: 'ask', reason: gate, ...by })
        : { decision: 'allow', reason: ruled.reason, ...by };
    }
    case 'none':
      return modeDefault(req);
  }
}

/** A read-only run refuses every tool that is not a read, before any hook is asked. */
export function capabilityRefusal(
  call: Pick<ToolCall, 'tool' | 'effect'>,
  capability: RunConfig['capabilityMode'],
): ToolCallDecision | undefined {
  if (capability !== 'read-only' || call.effect === 'read') return undefined;
  return { decision: 'deny', reason: `${call.tool} is a ${call.effect} tool and this run is read-only` };
}

/** The first hook that denies, or that failed and is fail-closed, decides; the others go on. */
function hookDecision(hooks: readonly HookVerdict[]): ToolCallDecision | undefined {
  for (const h of hooks) {
    if (h.verdict === 'deny') return { decision: 'deny', reason: h.reason, hook: h.hook };
    if (h.verdict === 'failed' && h.failClosed)
      return {
        decision: 'deny',
        reason: `hook ${h.hook} failed and is fail-closed: ${h.reason}`,
        hook: h.hook,
      };
  }
  return undefined;
}

/**
 * stepApproval, and requiresApproval (the plan step's, or the tool's own) outside full-access: gates
 * that ask whatever the rules allow.
 */
function approvalGate({ call, step, config }: ToolCallRequest): string | undefined {
  if (config.stepApproval === 'all') return 'stepApproval is "all": every step asks';
  if (config.stepApproval === 'non-read' && call.effect !== 'read')
    return `stepApproval is "non-read" and ${call.tool} is a ${call.effect} tool`;
  if (step.requiresApproval === true && config.permissionMode !== 'full-access')
    return `step ${step.id} is marked requiresApproval`;
  if (call.requiresApproval === true && config.permissionMode !== 'full-access')
    return `${call.tool} requires approval before every call`;
  return undefined;
}

/** No rule spoke: `ask` asks before every non-read tool, the other modes let them run. */
function modeDefault(req: ToolCallRequest): ToolCallDecision {
  const { call, config } = req;
  const gate = approvalGate(req);
  if (gate) return askOrDeny(req, { decision: 'ask', reason: gate });
  if (config.permissionMode === 'ask' && call.effect !== 'read')
    return askOrDeny(req, {
      decision: 'ask',
      reason: `permission mode "ask": ${call.tool} is a ${call.effect} tool`,
    });
  return {
    decision: 'allow',
    reason:
      call.effect === 'read'
        ? `${call.tool} only reads`
        : `permission mode "${config.permissionMode}" lets ${call.effect} tools run without asking`,
  };
}

function askOrDeny(req: ToolCallRequest, d: ToolCallDecision): ToolCallDecision {
  if (!req.config.unattended) return d;
  return {
    ...d,
    decision: 'deny',
    reason: `nobody can answer an approval in this run, and it would ask: ${d.reason}`,
  };
}
