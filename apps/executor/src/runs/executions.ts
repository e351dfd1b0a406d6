import type { AgentPlan, BudgetUsage, StepExecution, StepRunEvent } from '@switchyard/contracts';
import { keptValue } from './step-result';

/** A completed step's outcome that a resumed or rewound run may reuse without running it again. */
export interface ReusableStep {
  readonly tool: string;
  /** The step's arguments as planned (before references were resolved), as JSON. */
  readonly plannedArguments: string;
  readonly result: unknown;
  readonly truncated: boolean;
}

function notStarted(stepId: string, tool: string): StepExecution {
  return {
    stepId,
    tool,
    status: 'waiting',
    attempt: 0,
    truncated: false,
    error: null,
    code: null,
    reused: false,
    startedAt: null,
    finishedAt: null,
  };
}

/**
 * Each step's latest execution, folded from the run's step events (plan order; unseen steps wait).
 * Results and arguments the log keeps encoded (`encoded: 'json'`) come back decoded.
 */
export function foldExecutions(plan: AgentPlan | null, events: readonly StepRunEvent[]): StepExecution[] {
  const byId = new Map<string, StepExecution>();
  for (const step of plan?.steps ?? []) byId.set(step.id, notStarted(step.id, step.tool));
  for (const e of events) {
    const { stepId } = e.data;
    const prev = byId.get(stepId) ?? notStarted(stepId, e.data.tool);
    switch (e.type) {
      case 'step_approval_requested':
        byId.set(stepId, { ...prev, status: 'awaiting_approval' });
        break;
      case 'step_start':
        byId.set(stepId, {
          ...prev,
          status: 'running',
          attempt: e.data.attempt,
          arguments: keptValue({ value: e.data.arguments, encoded: e.data.argumentsEncoded }),
          error: null,
          code: null,
          reused: false,
          startedAt: e.at,
          finishedAt: null,
        });
        break;
      case 'step_retry':
        byId.set(stepId, { ...prev, attempt: e.data.attempt, error: e.data.error, code: e.data.code });
        break;
      case 'step_complete':
        byId.set(stepId, {
          ...prev,
          status: 'completed',
          attempt: e.data.attempt,
          result: keptValue({ value: e.data.result, encoded: e.data.encoded }),
          truncated: e.data.truncated,
          reused: e.data.reused === true,
          error: null,
          code: null,
          finishedAt: e.at,
        });
        break;
      case 'step_failed':
        byId.set(stepId, {
          ...prev,
          status: e.data.cancelled ? 'cancelled' : 'failed',
          attempt: e.data.attempt,
          error: e.data.error,
          code: e.data.cancelled ? null : e.data.code,
          finishedAt: e.at,
        });
        break;
    }
  }
  return [...byId.values()];
}

/** Completed executions of `plan`'s steps, keyed by step id, for reuse. */
export function reusableSteps(
  plan: AgentPlan,
  executions: readonly StepExecution[],
): Map<string, ReusableStep> {
  const done = new Map(executions.filter((x) => x.status === 'completed').map((x) => [x.stepId, x]));
  const reuse = new Map<string, ReusableStep>();
  for (const step of plan.steps) {
    const x = done.get(step.id);
    if (x)
      reuse.set(step.id, {
        tool: step.tool,
        plannedArguments: JSON.stringify(step.arguments),
        result: x.result,
        truncated: x.truncated,
      });
  }
  return reuse;
}

/**
 * What a run has spent: tool calls from its log (one step_start each), exact at any moment even for a
 * run that died; tokens and working wall time as the run last wrote them (its plan, each gate, its end).
 */
export function spentOf(
  usage: { readonly tokens?: number; readonly wallMs?: number } | null | undefined,
  stepEvents: readonly StepRunEvent[],
): BudgetUsage {
  return {
    tokens: usage?.tokens ?? 0,
    toolCalls: stepEvents.filter((e) => e.type === 'step_start').length,
    wallMs: usage?.wallMs ?? 0,
  };
}
