import { SandboxPosture } from './plugins';
import { z } from 'zod';
import {
  ElicitationAction,
  ElicitationContent,
  ElicitationMode,
  InputAnsweredBy,
  InputRequest,
  RequestedSchema,
} from './elicitation';
import { ErrorCode } from './errors';
import { InjectedMemory } from './memory';
import { isRecord } from './records';
import { PermissionDecision } from './permissions';
import { AgentPlan, PlanIssue } from './plan';
import { Budget, BudgetLimit, BudgetUsage, RunConfig, RunStatus, RunSummary, StepExecution } from './runs';
import { SamplingNote, ToolEffect } from './tools';
import { RunFileGrantView } from './files';

/**
 * The run event catalog: every event a run writes to its audit log (and the SSE stream relays), one
 * schema per type. Wire-stable and kept for ever: add optional fields, never change a field's
 * meaning. The writer parses each event against its schema before storing it.
 */

const StepRef = { stepId: z.string(), tool: z.string() };

/**
 * How a stored value (a result, a step's arguments) stands for the real one. Postgres cannot store
 * NUL characters or unpaired UTF-16 surrogates in JSON; a value holding one is kept as its JSON text
 * instead (`JSON.parse` gives it back exactly) and marked `encoded: 'json'`.
 */
export const ValueEncoding = z.literal('json');
export type ValueEncoding = z.infer<typeof ValueEncoding>;

export const RunCreated = z.object({
  goal: z.string(),
  config: RunConfig,
  source: z.enum(['goal', 'workflow']),
  sourceRunId: z.string().uuid().optional(),
  batchId: z.string().uuid().optional(),
  forkedFrom: z.string().uuid().optional(),
  rewoundFrom: z.string().uuid().optional(),
  keepSteps: z.number().int().min(0).optional(),
  workflowId: z.string().uuid().optional(),
  version: z.number().int().nullable().optional().describe('the workflow version; null: its draft'),
  taskId: z.string().uuid().optional(),
  asTool: z.literal(true).optional().describe('a workflow run as one tool call of another run'),
  viaMcp: z.literal(true).optional().describe('a workflow run as one tool call of an MCP client (/mcp)'),
  agentId: z.number().int().optional().describe('the agent driving the run'),
});
export type RunCreated = z.infer<typeof RunCreated>;

export const PlanningStarted = z.object({});
export type PlanningStarted = z.infer<typeof PlanningStarted>;

export const PlanToken = z.object({
  text: z.string(),
  attempt: z.number().int().min(1).describe('the draft attempt these tokens belong to'),
});
export type PlanToken = z.infer<typeof PlanToken>;

export const MemoryInjected = z.object({
  memories: z.array(InjectedMemory).describe("the owner's memories added to the planning prompt, best first"),
});
export type MemoryInjected = z.infer<typeof MemoryInjected>;

export const PlanReady = z.object({
  plan: AgentPlan,
  attempts: z.number().int().min(1).optional().describe('drafts the planner needed'),
  edited: z.literal(true).optional().describe('an edited plan adopted at a gate'),
  tokens: z.number().int().min(0).optional().describe('model tokens the drafts spent'),
});
export type PlanReady = z.infer<typeof PlanReady>;

export const PlanApprovalRequested = z.object({
  gate: z.literal('plan'),
  steps: z.number().int().min(1),
  nonReadSteps: z.array(z.string()),
  reusedSteps: z.array(z.string()).describe('completed earlier; not run again'),
  resumed: z.literal(true).optional(),
});
export type PlanApprovalRequested = z.infer<typeof PlanApprovalRequested>;

export const PlanApproved = z.discriminatedUnion('edited', [
  z.object({ edited: z.literal(false) }),
  z.object({ edited: z.literal(true), plan: AgentPlan }),
]);
export type PlanApproved = z.infer<typeof PlanApproved>;

export const RunStarted = z.object({
  steps: z.number().int().min(1),
  reused: z.number().int().min(0).describe('steps taken over from an earlier run'),
});
export type RunStarted = z.infer<typeof RunStarted>;

const ShownArguments = {
  arguments: z.unknown().describe('resolved arguments as stored (see argumentsTruncated/argumentsEncoded)'),
  argumentsTruncated: z.literal(true).optional().describe('arguments is the first part of their JSON text'),
  argumentsEncoded: ValueEncoding.optional(),
};

export const StepStarted = z.object({
  ...StepRef,
  effect: ToolEffect,
  attempt: z.number().int().min(1),
  description: z.string(),
  ...ShownArguments,
  permission: PermissionDecision,
});
export type StepStarted = z.infer<typeof StepStarted>;

export const StepApprovalRequested = z.object({
  gate: z.literal('step'),
  ...StepRef,
  effect: ToolEffect,
  ...ShownArguments,
  reason: z.string(),
  permission: PermissionDecision,
});
export type StepApprovalRequested = z.infer<typeof StepApprovalRequested>;

export const StepApproved = z.object({ stepId: z.string() });
export type StepApproved = z.infer<typeof StepApproved>;

/** The step's MCP server asked for input during its call: the call waits for the person (or a decline). */
export const StepInputRequested = z.object({
  ...StepRef,
  elicitationId: z.string().uuid().describe('answer it at POST /api/elicitations/{elicitationId}'),
  server: z.string().describe('the MCP record that asks'),
  mode: ElicitationMode,
  message: z.string(),
  requestedSchema: RequestedSchema.optional().describe('form mode: the fields asked for'),
  fieldOrder: z
    .array(z.string())
    .optional()
    .describe("form mode: the fields' names in the server's order (the stored log does not keep key order)"),
  url: z
    .string()
    .optional()
    .describe('url mode: the page for the person to open (never fetched by the platform)'),
  expiresAt: z.string().describe('when the wait ends with cancel if nobody answers'),
});
export type StepInputRequested = z.infer<typeof StepInputRequested>;

/** How the input request was settled; what goes back to the server. */
export const StepInputAnswered = z.object({
  ...StepRef,
  elicitationId: z.string().uuid(),
  action: ElicitationAction,
  content: ElicitationContent.optional().describe('what was accepted'),
  by: InputAnsweredBy,
  reason: z.string().optional().describe('why the platform settled it (unattended run, timeout, cancelled…)'),
});
export type StepInputAnswered = z.infer<typeof StepInputAnswered>;

export const StepRetry = z.object({
  ...StepRef,
  attempt: z.number().int().min(1).describe('the attempt that failed'),
  code: ErrorCode,
  error: z.string(),
  delayMs: z.number().int().min(0),
});
export type StepRetry = z.infer<typeof StepRetry>;

export const StepCompleted = z.object({
  ...StepRef,
  attempt: z.number().int().min(0).describe('0: reused or pinned, the tool was not called'),
  result: z.unknown(),
  truncated: z.boolean().describe('result is the first part of its JSON text (or the tool cut its output)'),
  encoded: ValueEncoding.optional(),
  durationMs: z.number().min(0).optional(),
  sandboxed: z.boolean().optional().describe('execute_command: whether it ran inside the command sandbox'),
  sampling: z
    .array(SamplingNote)
    .optional()
    .describe("the MCP server's requests to the model during the call (a record with sampling on)"),
  reused: z.literal(true).optional(),
  pinned: z.literal(true).optional(),
});
export type StepCompleted = z.infer<typeof StepCompleted>;

const StepFailure = {
  ...StepRef,
  attempt: z.number().int().min(0).describe('0: ended before its tool was called'),
  error: z.string(),
};

/** A step ended without a result: it failed (with the error's code) or the run was cancelled. */
export const StepFailed = z.discriminatedUnion('cancelled', [
  z.object({
    ...StepFailure,
    cancelled: z.literal(false),
    code: ErrorCode.describe(
      'tool_failed: the tool reported it; forbidden: permissions or a guard refused the call; validation_failed: bad arguments or references; not_found: no such tool; timeout, unavailable: transient',
    ),
    permission: PermissionDecision.optional().describe('the decision that refused the call'),
    sandboxed: z.boolean().optional().describe('execute_command: whether it ran inside the command sandbox'),
  }),
  z.object({ ...StepFailure, cancelled: z.literal(true) }),
]);
export type StepFailed = z.infer<typeof StepFailed>;

export const CancelRequested = z.object({ message: z.string() });
export type CancelRequested = z.infer<typeof CancelRequested>;

export const RunResumed = z.object({
  from: RunStatus,
  reusedSteps: z.array(z.string()),
  budget: Budget.optional().describe('the budget the run resumed with, replacing its own'),
});
export type RunResumed = z.infer<typeof RunResumed>;

export const RunCancelled = z.object({ message: z.string() });
export type RunCancelled = z.infer<typeof RunCancelled>;

export const RunInterrupted = z.object({ message: z.string() });
export type RunInterrupted = z.infer<typeof RunInterrupted>;

export const RunCompleted = z.object({
  summary: z.string(),
  result: z.unknown().describe("the only final step's result, or `results` when several steps are final"),
  results: z
    .record(z.string(), z.unknown())
    .describe('the result of each final step (no step depends on it)'),
  truncated: z.array(z.string()).optional().describe('steps whose result here is the first part of its JSON'),
  encoded: z
    .array(z.string())
    .optional()
    .describe("steps whose result here is its JSON text (ValueEncoding 'json')"),
});
export type RunCompleted = z.infer<typeof RunCompleted>;

/** `details` of a run stopped by its budget: the limit crossed and the figures. */
export const BudgetExceeded = z.object({ limit: BudgetLimit, budget: Budget, usage: BudgetUsage });
export type BudgetExceeded = z.infer<typeof BudgetExceeded>;

export const RunFailed = z.object({
  message: z.string(),
  code: ErrorCode,
  details: BudgetExceeded.optional().describe('budget_exceeded: which limit, the budget and what was spent'),
  stepId: z.string().optional().describe('the step whose failure ended the run'),
  issues: z.array(PlanIssue).optional().describe('why a drafted plan was refused'),
  attempts: z.number().int().min(1).optional(),
});
export type RunFailed = z.infer<typeof RunFailed>;

function body<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), data });
}

/** An event as it is emitted: its type and payload, before the log numbers it. */
export const RunEventBody = z.discriminatedUnion('type', [
  body('run_created', RunCreated),
  body('planning_started', PlanningStarted),
  body('plan_token', PlanToken),
  body('memory_injected', MemoryInjected),
  body('plan_ready', PlanReady),
  body('plan_approval_requested', PlanApprovalRequested),
  body('plan_approved', PlanApproved),
  body('run_started', RunStarted),
  body('step_start', StepStarted),
  body('step_approval_requested', StepApprovalRequested),
  body('step_approved', StepApproved),
  body('step_input_requested', StepInputRequested),
  body('step_input_answered', StepInputAnswered),
  body('step_retry', StepRetry),
  body('step_complete', StepCompleted),
  body('step_failed', StepFailed),
  body('cancel_requested', CancelRequested),
  body('resumed', RunResumed),
  body('cancelled', RunCancelled),
  body('interrupted', RunInterrupted),
  body('complete', RunCompleted),
  body('error', RunFailed),
]);
export type RunEventBody = z.infer<typeof RunEventBody>;

/** Where and when the log put an event. */
const stamp = { runId: z.string().uuid(), seq: z.number().int().positive(), at: z.string() };

function stored<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), data, ...stamp });
}

/**
 * A stored event: numbered 1, 2, 3… per run with no gap, in the order it was written. One object
 * per type, the same as `RunEventBody`'s with the stamp: not an intersection of the two, which zod
 * parses (both sides, then a deep merge) about five times slower — and the writer parses each.
 */
export const RunEvent = z.discriminatedUnion('type', [
  stored('run_created', RunCreated),
  stored('planning_started', PlanningStarted),
  stored('plan_token', PlanToken),
  stored('memory_injected', MemoryInjected),
  stored('plan_ready', PlanReady),
  stored('plan_approval_requested', PlanApprovalRequested),
  stored('plan_approved', PlanApproved),
  stored('run_started', RunStarted),
  stored('step_start', StepStarted),
  stored('step_approval_requested', StepApprovalRequested),
  stored('step_approved', StepApproved),
  stored('step_input_requested', StepInputRequested),
  stored('step_input_answered', StepInputAnswered),
  stored('step_retry', StepRetry),
  stored('step_complete', StepCompleted),
  stored('step_failed', StepFailed),
  stored('cancel_requested', CancelRequested),
  stored('resumed', RunResumed),
  stored('cancelled', RunCancelled),
  stored('interrupted', RunInterrupted),
  stored('complete', RunCompleted),
  stored('error', RunFailed),
]);
export type RunEvent = z.infer<typeof RunEvent>;

/**
 * What a run's live subject (`events.run.<runId>`) carries: events of that run in sequence order,
 * as the executor's outbox sends them together (one message per run per write, split so that no
 * message holds much more than RUN_EVENT_BATCH_BYTES of JSON).
 */
export const RunEventBatch = z.object({ events: z.array(RunEvent).min(1) });
export type RunEventBatch = z.infer<typeof RunEventBatch>;
/** The JSON a batch of run events holds before the next event goes into a message of its own. */
export const RUN_EVENT_BATCH_BYTES = 256 * 1024;

export type RunEventType = RunEventBody['type'];
/** Every event type of the catalog, in catalog order (an SSE client listens for each by name). */
export const RUN_EVENT_TYPE_LIST: readonly RunEventType[] = RunEventBody.options.map(
  (o) => o.shape.type.value,
);
const catalogTypes: ReadonlySet<string> = new Set(RUN_EVENT_TYPE_LIST);

/** A stored event's stamp and type as the catalog has them; its data an object, not looked into. */
function isStoredEventShape(e: unknown): boolean {
  return (
    isRecord(e) &&
    typeof e['runId'] === 'string' &&
    Number.isInteger(e['seq']) &&
    (e['seq'] as number) > 0 &&
    typeof e['at'] === 'string' &&
    typeof e['type'] === 'string' &&
    catalogTypes.has(e['type']) &&
    isRecord(e['data'])
  );
}

/**
 * What a subscriber checks of a batch of run events it hears: each event's stamp, and that its type
 * is in the catalog; not its data. Every run event on the bus was parsed against the catalog once, by
 * its sender (the run writer parses each event it stores, the bus each one emitted unparsed), and a
 * gateway relays thousands a second: parsing each again was ~20 µs an event, half of the gateway's
 * CPU per relayed step. A message of another shape (another version) is still dropped; the SSE test
 * client parses every frame it reads against the full catalog.
 */
export const HeardRunEventBatch = z.custom<RunEventBatch>(
  (value) =>
    isRecord(value) &&
    Array.isArray(value['events']) &&
    value['events'].length > 0 &&
    value['events'].every(isStoredEventShape),
  { message: 'not a batch of stored run events' },
);

/** Each event type's stored event (a map, so generic code over event types can still read `data`). */
type RunEventByType = { [T in RunEventType]: Extract<RunEvent, { type: T }> };
export type RunEventOf<T extends RunEventType> = RunEventByType[T];
export type RunEventData<T extends RunEventType> = RunEventByType[T]['data'];

export const TERMINAL_RUN_EVENTS = [
  'complete',
  'error',
  'cancelled',
  'interrupted',
] as const satisfies readonly RunEventType[];
export type TerminalRunEventType = (typeof TERMINAL_RUN_EVENTS)[number];
/** How a run ended: one of the events after which its stream ends (until it is resumed). */
export type TerminalRunEvent = Extract<RunEventBody, { type: TerminalRunEventType }>;

/** The events that change a step's execution (folded into `StepExecution`). */
export const STEP_RUN_EVENTS = [
  'step_approval_requested',
  'step_start',
  'step_retry',
  'step_complete',
  'step_failed',
] as const satisfies readonly RunEventType[];
export type StepRunEvent = Extract<RunEvent, { type: (typeof STEP_RUN_EVENTS)[number] }>;

const terminal: ReadonlySet<string> = new Set(TERMINAL_RUN_EVENTS);
export function isTerminalRunEvent<E extends { type: string }>(
  e: E,
): e is E & { type: TerminalRunEventType } {
  return terminal.has(e.type);
}

/** Where a run's events are published live (after they are stored): `events.run.<runId>`. */
export function runEventsSubject(runId: string): string {
  return `events.run.${runId}`;
}

export const StreamQuery = z.object({
  runId: z.string().uuid(),
  /** For clients that cannot send the Last-Event-ID header: resume after this sequence number. */
  lastEventId: z.coerce.number().int().min(0).optional(),
});
export type StreamQuery = z.infer<typeof StreamQuery>;

/** A run with its plan, step executions and the start of its audit log. */
export const RunDetail = RunSummary.extend({
  config: z.record(z.string(), z.unknown()),
  inputs: z.record(z.string(), z.unknown()),
  plan: AgentPlan.nullable(),
  executions: z.array(StepExecution),
  events: z.array(RunEvent).describe('the audit log, oldest first (at most 1,000; the stream has them all)'),
  eventsTruncated: z.boolean(),
  agentId: z.number().int().nullable().describe('the agent that drove the run'),
  sandboxPosture: SandboxPosture.nullable().describe(
    'how plugin servers ran when the run was created; a sandboxed run resumes, forks and rewinds only while they still do (null: not known)',
  ),
  budget: Budget.nullable(),
  usage: BudgetUsage.describe(
    'spent so far: tool calls counted from the log; tokens and working wall time as of the last pause or end',
  ),
  files: z
    .array(RunFileGrantView)
    .optional()
    .describe("the run's file grants: names and kinds (host paths to admins only)"),
  inputRequests: z
    .array(InputRequest)
    .optional()
    .describe("the run's input requests still waiting for an answer (MCP elicitation), oldest first"),
});
export type RunDetail = z.infer<typeof RunDetail>;
