import type { AgentPlan, RunStatus, TerminalRunEvent } from '@switchyard/contracts';

/** An approval gate a run waits at: released by an approval, refused when the run stops. */
export interface Gate {
  readonly release: () => void;
  readonly refuse: (err: Error) => void;
}

/** How a run ended on this replica: its final status and terminal event. */
export type RunEnd = TerminalRunEvent & { readonly status: RunStatus };

/**
 * Where a run is in its life on this replica. The plan exists from the plan gate on, and only a
 * running run can complete; the finer status (`awaiting_step_approval`) is the row's, not a phase.
 *
 * planning → awaiting-approval → running → finishing → closed; any phase but closed may go straight to
 * finishing (a failure, a cancel, a failed write), and any to closed (this replica gives the run up).
 */
export type RunPhase =
  | { readonly kind: 'planning' }
  | { readonly kind: 'awaiting-approval'; readonly plan: AgentPlan; readonly gate: Gate }
  | { readonly kind: 'running'; readonly plan: AgentPlan }
  /** The terminal event is being written; nothing new starts. */
  | { readonly kind: 'finishing'; readonly plan: AgentPlan | undefined }
  | { readonly kind: 'closed'; readonly end: RunEnd };

/** The plan of a run in this phase, if it has one yet. */
export function planOf(phase: RunPhase): AgentPlan | undefined {
  return phase.kind === 'planning' || phase.kind === 'closed' ? undefined : phase.plan;
}
