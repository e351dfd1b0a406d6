import { isTerminalRunEvent } from '@switchyard/contracts';
import { pendingOfEvent, pendingOfRequest, type PendingInput } from '../elicitation/model';
import type {
  AgentPlan,
  ErrorCode,
  PermissionDecision,
  RunDetail,
  RunEvent,
  RunFileGrantView,
  RunStatus,
  ToolEffect,
} from '@switchyard/contracts';

/** A node's status on the run page (the seed's words: queued, waiting approval, running…). */
export type NodeStatus =
  'queued' | 'awaiting_approval' | 'running' | 'completed' | 'failed' | 'cancelled' | 'pinned';

export interface StepView {
  readonly id: string;
  readonly tool: string;
  readonly description: string;
  readonly dependsOn: readonly string[];
  status: NodeStatus;
  effect?: ToolEffect;
  attempt: number;
  retries: number;
  result?: unknown;
  hasResult: boolean;
  truncated?: boolean;
  error?: string;
  code?: ErrorCode;
  arguments?: unknown;
  /** Why a step gate asks, and the decision that asked. */
  reason?: string;
  permission?: PermissionDecision;
  durationMs?: number;
  /** Its call waits for a person's answer to its server's input request. */
  waitingForInput?: boolean;
}

export interface RunView {
  readonly runId: string;
  status: RunStatus;
  goal: string;
  plan: AgentPlan | null;
  planText: string;
  steps: Map<string, StepView>;
  /** The plan gate is open (awaiting_plan_approval). */
  planGate: boolean;
  summary?: string;
  result?: unknown;
  error?: { message: string; code: ErrorCode; stepId?: string };
  lastSeq: number;
  /** The files granted to the run (they never change after its start). */
  files: readonly RunFileGrantView[];
  /** Input requests of the run's MCP servers still waiting for an answer, by id (a new map on change). */
  inputs: ReadonlyMap<string, PendingInput>;
}

function stepsOf(plan: AgentPlan | null, previous?: Map<string, StepView>): Map<string, StepView> {
  const steps = new Map<string, StepView>();
  for (const s of plan?.steps ?? []) {
    const before = previous?.get(s.id);
    steps.set(s.id, {
      id: s.id,
      tool: s.tool,
      description: s.description ?? '',
      dependsOn: s.dependsOn ?? [],
      status: before?.status ?? 'queued',
      attempt: before?.attempt ?? 0,
      retries: before?.retries ?? 0,
      hasResult: before?.hasResult ?? false,
      ...(before?.result !== undefined ? { result: before.result } : {}),
    });
  }
  return steps;
}

export function emptyRun(runId: string): RunView {
  return {
    runId,
    status: 'planning',
    goal: '',
    plan: null,
    planText: '',
    steps: new Map(),
    planGate: false,
    lastSeq: 0,
    files: [],
    inputs: new Map(),
  };
}

const RUN_STATUS_AFTER: Partial<Record<RunEvent['type'], RunStatus>> = {
  planning_started: 'planning',
  plan_approval_requested: 'awaiting_plan_approval',
  run_started: 'running',
  step_approval_requested: 'awaiting_step_approval',
  complete: 'completed',
  error: 'failed',
  cancelled: 'cancelled',
  interrupted: 'interrupted',
};

/**
 * Folds one event into the view (in place; the caller copies for React). Events at or below
 * `lastSeq` are ignored, so a replayed frame after a reconnect never counts twice.
 */
export function applyEvent(view: RunView, e: RunEvent): boolean {
  if (e.seq <= view.lastSeq) return false;
  view.lastSeq = e.seq;
  const status = RUN_STATUS_AFTER[e.type];
  if (status) view.status = status;
  switch (e.type) {
    case 'run_created':
      view.goal = e.data.goal;
      break;
    case 'plan_token':
      view.planText += e.data.text;
      break;
    case 'plan_ready':
      view.plan = e.data.plan;
      view.steps = stepsOf(e.data.plan, view.steps);
      break;
    case 'plan_approval_requested':
      view.planGate = true;
      break;
    case 'plan_approved':
      view.planGate = false;
      if (e.data.edited) {
        view.plan = e.data.plan;
        view.steps = stepsOf(e.data.plan, view.steps);
      }
      break;
    case 'run_started':
      view.planGate = false;
      break;
    case 'step_approval_requested': {
      const s = view.steps.get(e.data.stepId);
      if (s) {
        s.status = 'awaiting_approval';
        s.effect = e.data.effect;
        s.arguments = e.data.arguments;
        s.reason = e.data.reason;
        s.permission = e.data.permission;
      }
      break;
    }
    case 'step_approved': {
      const s = view.steps.get(e.data.stepId);
      if (s && s.status === 'awaiting_approval') s.status = 'queued';
      if (view.status === 'awaiting_step_approval') view.status = 'running';
      break;
    }
    case 'step_start': {
      const s = view.steps.get(e.data.stepId);
      if (s) {
        s.status = 'running';
        s.effect = e.data.effect;
        s.attempt = e.data.attempt;
        s.arguments = e.data.arguments;
        s.permission = e.data.permission;
        delete s.error;
        delete s.code;
      }
      if (view.status === 'awaiting_step_approval') view.status = 'running';
      break;
    }
    case 'step_input_requested': {
      view.inputs = new Map(view.inputs).set(e.data.elicitationId, pendingOfEvent(e.data));
      const s = view.steps.get(e.data.stepId);
      if (s) s.waitingForInput = true;
      break;
    }
    case 'step_input_answered': {
      const inputs = new Map(view.inputs);
      inputs.delete(e.data.elicitationId);
      view.inputs = inputs;
      const s = view.steps.get(e.data.stepId);
      if (s) s.waitingForInput = [...inputs.values()].some((i) => i.stepId === s.id);
      break;
    }
    case 'step_retry': {
      const s = view.steps.get(e.data.stepId);
      if (s) {
        s.retries += 1;
        s.error = e.data.error;
        s.code = e.data.code;
      }
      break;
    }
    case 'step_complete': {
      const s = view.steps.get(e.data.stepId);
      if (s) {
        s.status = e.data.pinned ? 'pinned' : 'completed';
        s.result = e.data.result;
        s.hasResult = true;
        s.truncated = e.data.truncated;
        s.attempt = e.data.attempt;
        if (e.data.durationMs !== undefined) s.durationMs = e.data.durationMs;
        delete s.error;
        delete s.code;
        delete s.waitingForInput;
      }
      break;
    }
    case 'step_failed': {
      const s = view.steps.get(e.data.stepId);
      if (s) {
        s.status = e.data.cancelled ? 'cancelled' : 'failed';
        s.error = e.data.error;
        if (!e.data.cancelled) s.code = e.data.code;
        delete s.waitingForInput;
      }
      break;
    }
    case 'resumed':
      view.status = 'running';
      delete view.error;
      for (const s of view.steps.values()) {
        if (!e.data.reusedSteps.includes(s.id) && s.status !== 'completed' && s.status !== 'pinned') {
          s.status = 'queued';
        }
      }
      break;
    case 'complete':
      view.summary = e.data.summary;
      view.result = e.data.result;
      break;
    case 'error':
      view.error = {
        message: e.data.message,
        code: e.data.code,
        ...(e.data.stepId !== undefined ? { stepId: e.data.stepId } : {}),
      };
      break;
    case 'cancelled':
    case 'interrupted':
      for (const s of view.steps.values()) {
        if (s.status === 'running' || s.status === 'awaiting_approval') s.status = 'cancelled';
        delete s.waitingForInput;
      }
      view.inputs = new Map();
      break;
    default:
      break;
  }
  return true;
}

/** The view of a run from its detail (plan + events so far). */
export function viewOf(detail: RunDetail): RunView {
  const view = emptyRun(detail.id);
  view.goal = detail.goal;
  view.status = detail.status;
  view.files = detail.files ?? [];
  for (const e of detail.events) applyEvent(view, e);
  // The log in the detail may be cut: the plan and status from the row are authoritative, unless
  // the whole log ends with the run's end (the row and the log are read one after the other, so a
  // run that finished in between shows its end in the log first).
  const last = detail.events.at(-1);
  if (detail.eventsTruncated || !last || !isTerminalRunEvent(last)) view.status = detail.status;
  if (detail.plan && !view.plan) {
    view.plan = detail.plan;
    view.steps = stepsOf(detail.plan, view.steps);
  }
  view.planGate = detail.status === 'awaiting_plan_approval';
  // What waits now is the table's word (the log may be cut, or a wait may have ended unrecorded).
  if (detail.inputRequests) {
    view.inputs = new Map(detail.inputRequests.map((r) => [r.id, pendingOfRequest(r)]));
    for (const s of view.steps.values())
      s.waitingForInput = detail.inputRequests.some((r) => r.stepId === s.id);
  }
  if (detail.eventsTruncated) {
    for (const x of detail.executions) {
      const s = view.steps.get(x.stepId);
      if (!s) continue;
      s.status = x.status === 'waiting' ? 'queued' : x.status;
      s.attempt = x.attempt;
      if (x.result !== undefined) {
        s.result = x.result;
        s.hasResult = true;
      }
      if (x.error) s.error = x.error;
      if (x.code) s.code = x.code;
    }
  }
  return view;
}

/** Events that change steps without naming one (a new plan, a resume, the run's end). */
const ALL_STEPS: ReadonlySet<string> = new Set([
  'plan_ready',
  'plan_approved',
  'resumed',
  'cancelled',
  'interrupted',
]);

/** The steps an event changes: their ids, `null` for all of them, or none. */
export function touchedSteps(e: RunEvent): readonly string[] | null {
  if (ALL_STEPS.has(e.type)) return null;
  return 'stepId' in e.data && typeof e.data.stepId === 'string' ? [e.data.stepId] : [];
}

/**
 * The next view for React: the steps named in `dirty` (all when null) are copied from the live
 * view, the others keep the objects `shown` had, so memoised nodes that did not change skip
 * rendering (64 steps changing at 500 events a second).
 */
export function nextView(
  live: RunView,
  shown: RunView | undefined,
  dirty: ReadonlySet<string> | null,
): RunView {
  if (!shown || dirty === null) return copyView(live);
  const steps = new Map(shown.steps);
  for (const id of dirty) {
    const s = live.steps.get(id);
    if (s) steps.set(id, { ...s });
  }
  return { ...live, steps };
}

export function copyView(v: RunView): RunView {
  return { ...v, steps: new Map([...v.steps].map(([k, s]) => [k, { ...s }])) };
}

export const FINISHED: ReadonlySet<RunStatus> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
