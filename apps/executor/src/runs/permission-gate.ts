import type { PlanStep, RunConfig, ToolDescriptor } from '@switchyard/contracts';

export type GateDecision =
  | { readonly decision: 'allow'; readonly reason: string }
  | { readonly decision: 'ask'; readonly reason: string }
  | { readonly decision: 'deny'; readonly reason: string };

export interface GateRequest {
  readonly step: PlanStep;
  readonly tool: Pick<ToolDescriptor, 'name' | 'effect'>;
  readonly config: Pick<RunConfig, 'permissionMode' | 'stepApproval' | 'capabilityMode'>;
}

/**
 * The one authorization gate every tool call of a run passes before `registry.tools.invoke`. For now
 * the permission-mode defaults decide; owner rules and hooks plug in here (they may only tighten
 * what a deny says).
 */
export function authorize({ step, tool, config }: GateRequest): GateDecision {
  if (config.capabilityMode === 'read-only' && tool.effect !== 'read')
    return { decision: 'deny', reason: `${tool.name} is a ${tool.effect} tool and this run is read-only` };
  if (config.stepApproval === 'all')
    return { decision: 'ask', reason: 'stepApproval is "all": every step asks' };
  if (config.stepApproval === 'non-read' && tool.effect !== 'read')
    return {
      decision: 'ask',
      reason: `stepApproval is "non-read" and ${tool.name} is a ${tool.effect} tool`,
    };
  if (step.requiresApproval && config.permissionMode !== 'full-access')
    return { decision: 'ask', reason: `step ${step.id} is marked requiresApproval` };
  if (config.permissionMode === 'ask' && tool.effect !== 'read')
    return { decision: 'ask', reason: `permission mode "ask": ${tool.name} is a ${tool.effect} tool` };
  return {
    decision: 'allow',
    reason:
      tool.effect === 'read'
        ? `${tool.name} only reads`
        : `permission mode "${config.permissionMode}" lets ${tool.effect} tools run without asking`,
  };
}
