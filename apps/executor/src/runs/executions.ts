import type { AgentPlan, StepExecution } from '@switchyard/contracts';
import type { StoredRunEvent } from '@switchyard/server-db';

export const STEP_EVENT_TYPES = [
  'step_approval_requested',
  'step_start',
  'step_retry',
  'step_complete',
  'step_failed',
] as const;

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
    reused: false,
    startedAt: null,
    finishedAt: null,
  };
}

/** Each step's latest execution, folded from the run's step events (plan order; unseen steps wait). */
export function foldExecutions(plan: AgentPlan | null, events: readonly StoredRunEvent[]): StepExecution[] {
  const byId = new Map<string, StepExecution>();
  for (const step of plan?.steps ?? []) byId.set(step.id, notStarted(step.id, step.tool));
  for (const e of events) {
    const stepId = typeof e.data['stepId'] === 'string' ? e.data['stepId'] : undefined;
    if (!stepId) continue;
    const prev = byId.get(stepId) ?? notStarted(stepId, String(e.data['tool'] ?? ''));
    const attempt = typeof e.data['attempt'] === 'number' ? e.data['attempt'] : prev.attempt;
    switch (e.type) {
      case 'step_approval_requested':
        byId.set(stepId, { ...prev, status: 'awaiting_approval' });
        break;
      case 'step_start':
        byId.set(stepId, {
          ...prev,
          status: 'running',
          attempt,
          arguments: e.data['arguments'],
          error: null,
          reused: false,
          startedAt: e.at,
          finishedAt: null,
        });
        break;
      case 'step_retry':
        byId.set(stepId, { ...prev, attempt, error: String(e.data['error'] ?? '') });
        break;
      case 'step_complete':
        byId.set(stepId, {
          ...prev,
          status: 'completed',
          attempt,
          result: e.data['result'],
          truncated: e.data['truncated'] === true,
          reused: e.data['reused'] === true,
          error: null,
          finishedAt: e.at,
        });
        break;
      case 'step_failed':
        byId.set(stepId, {
          ...prev,
          status: e.data['cancelled'] === true ? 'cancelled' : 'failed',
          attempt,
          error: String(e.data['error'] ?? ''),
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
