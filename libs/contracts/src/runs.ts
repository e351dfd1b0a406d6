import { z } from 'zod';
import { ModelSettings } from './agents';
import { ErrorCode } from './errors';
import { PageQuery, pageOf } from './identity';
import { AgentPlan, MAX_PLAN_STEPS, PlanIssue } from './plan';
import { InjectedMemory } from './memory';
import { ToolDescriptor } from './tools';
import { ElicitationAsk, InputAnswerControl } from './elicitation';
import { FileGrantKind, LegacyRunFiles, RunFilesInput } from './files';

/**
 * How much the run may do without asking. `ask` (default): every non-read tool call waits for step
 * approval. `approve-for-me`: tool calls go ahead unless a step is marked `requiresApproval`.
 * `full-access`: nothing asks. `stepApproval` adds gates on top in every mode.
 */
export const PermissionMode = z.enum(['ask', 'approve-for-me', 'full-access']);
export type PermissionMode = z.infer<typeof PermissionMode>;

export const StepApproval = z.enum(['none', 'non-read', 'all']);
export type StepApproval = z.infer<typeof StepApproval>;

export const RunStatus = z.enum([
  'planning',
  'awaiting_plan_approval',
  'running',
  'awaiting_step_approval',
  'completed',
  'failed',
  'cancelled',
  'interrupted',
]);
export type RunStatus = z.infer<typeof RunStatus>;

export const FINISHED_RUN_STATUSES: ReadonlySet<RunStatus> = new Set([
  'completed',
  'failed',
  'cancelled',
  'interrupted',
]);
/** Statuses a run can be resumed from. */
export const RESUMABLE_RUN_STATUSES: ReadonlySet<RunStatus> = new Set(['failed', 'cancelled', 'interrupted']);

export const RunLimits = z
  .object({
    maxParallelSteps: z
      .number()
      .int()
      .min(1)
      .max(MAX_PLAN_STEPS)
      .default(MAX_PLAN_STEPS)
      .describe('cap on the steps of this run that run at once; by default every ready step runs at once'),
    stepTimeoutMs: z
      .number()
      .int()
      .min(1)
      .max(3_600_000)
      .optional()
      .describe("per tool call; capped by the registry's TOOL_TIMEOUT_MS"),
  })
  .strict();
export type RunLimits = z.infer<typeof RunLimits>;

/**
 * Optional ceilings on one run or one chat turn (no anchor has them). Crossing one stops the work
 * cleanly with `budget_exceeded`, naming the limit; the figures spent are kept with the run or turn.
 */
export const Budget = z
  .object({
    maxTokens: z
      .number()
      .int()
      .min(1)
      .max(100_000_000)
      .optional()
      .describe('model tokens, prompt and answer'),
    maxToolCalls: z.number().int().min(1).max(10_000).optional(),
    maxWallMs: z.number().int().min(1).max(86_400_000).optional().describe('wall time from the start'),
  })
  .strict();
export type Budget = z.infer<typeof Budget>;

/** What a run or a chat turn has spent, beside its budget. */
export const BudgetUsage = z.object({
  tokens: z.number().int().min(0),
  toolCalls: z.number().int().min(0),
  wallMs: z.number().min(0),
});
export type BudgetUsage = z.infer<typeof BudgetUsage>;

/** Which limit was crossed (`details.limit` of a `budget_exceeded` error). */
export const BudgetLimit = z.enum(['maxTokens', 'maxToolCalls', 'maxWallMs']);
export type BudgetLimit = z.infer<typeof BudgetLimit>;

export const CapabilityMode = z.enum(['read-write', 'read-only']);
export type CapabilityMode = z.infer<typeof CapabilityMode>;

export const RunConfig = z
  .object({
    permissionMode: PermissionMode.default('ask'),
    planApproval: z.boolean().default(true).describe('pause for approval once the plan is ready'),
    stepApproval: StepApproval.default('none'),
    model: ModelSettings.optional().describe('overrides of the configured LLM for planning'),
    limits: RunLimits.default({ maxParallelSteps: MAX_PLAN_STEPS }),
    capabilityMode: CapabilityMode.default('read-write').describe(
      'read-only: every step must use a read-effect tool, checked before any tool runs',
    ),
    unattended: z
      .boolean()
      .default(false)
      .describe(
        "nobody can answer an approval gate (schedules, webhooks, background tasks): an ask is a denial, and an MCP server's input request is declined at once",
      ),
    budget: Budget.optional().describe(
      "ceilings on the run's planning tokens, tool calls and working wall time; crossing one ends the run with budget_exceeded",
    ),
  })
  .strict();
export type RunConfig = z.infer<typeof RunConfig>;

/** Workspace-relative paths the run is about; shown to the planner and bound as `inputs.files`. */
export const RunFiles = LegacyRunFiles;

export const RunInputs = z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/), z.unknown());

export const StartRunBody = z
  .object({
    goal: z.string().max(20_000).default(''),
    config: RunConfig.default(RunConfig.parse({})),
    workflow: z
      .unknown()
      .optional()
      .describe('an AgentPlan to run as is (validated before any tool runs); omit to let the model plan'),
    inputs: RunInputs.default({}).describe('values for {{inputs.<name>}} references'),
    files: RunFilesInput.optional().describe(
      'workspace paths the goal is about (strings), or file grants: {name, refs} | {name, nativePath} | {name, createSharedDirectory: true}, bound as @file:<name> (docs/files.md)',
    ),
    agentId: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(
        'one of your agents: its system prompt and model settings drive the planner, and only its tool set may be planned with or used',
      ),
  })
  .strict()
  .refine((b) => b.goal.trim() !== '' || b.workflow !== undefined, {
    message: 'give a goal, a workflow, or both',
    path: ['goal'],
  });
export type StartRunBody = z.infer<typeof StartRunBody>;

export const BatchBody = z
  .object({
    runs: z.array(StartRunBody).min(1).max(8),
    capabilityMode: CapabilityMode.default('read-write').describe(
      'read-only: every step of every run must use a read-effect tool; checked before any tool runs',
    ),
  })
  .strict();
export type BatchBody = z.infer<typeof BatchBody>;

export const RunIdParam = z.object({ runId: z.string().uuid() });
export type RunIdParam = z.infer<typeof RunIdParam>;

export const StartedRun = z.object({ runId: z.string().uuid() });
export type StartedRun = z.infer<typeof StartedRun>;

export const StartedBatch = z.object({ runIds: z.array(z.string().uuid()) });
export type StartedBatch = z.infer<typeof StartedBatch>;

export const ApproveQuery = z.object({
  stepId: z.string().max(64).optional().describe('release only this step gate; default: every open gate'),
});

/** Empty (approve as is) or an edited AgentPlan to adopt before going on (validated like any plan). */
export const ApproveBody = z
  .unknown()
  .describe('nothing to approve the plan as it is, or an edited AgentPlan to adopt before continuing');

export const ResumeBody = z
  .object({
    budget: Budget.optional().describe(
      'replaces the run budget; needed to resume a run that has spent one of its limits (the figures carry on)',
    ),
  })
  .strict();
export type ResumeBody = z.infer<typeof ResumeBody>;

export const RewindBody = z
  .object({ keepSteps: z.number().int().min(0).max(64).describe('how many leading steps to keep') })
  .strict();
export type RewindBody = z.infer<typeof RewindBody>;

export const RunListQuery = PageQuery.extend({
  q: z.string().max(200).optional().describe('text in the goal, summary or error'),
  status: RunStatus.optional(),
});
export type RunListQuery = z.infer<typeof RunListQuery>;

export const RunSummary = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  status: RunStatus,
  goal: z.string(),
  summary: z.string().nullable(),
  error: z.string().nullable(),
  sourceRunId: z.string().uuid().nullable().describe('the run this one was forked or rewound from'),
  batchId: z.string().uuid().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
  finishedAt: z.string().nullable(),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const RunPage = pageOf(RunSummary);
export type RunPage = z.infer<typeof RunPage>;

export const StepStatus = z.enum([
  'waiting',
  'awaiting_approval',
  'running',
  'completed',
  'failed',
  'cancelled',
]);
export type StepStatus = z.infer<typeof StepStatus>;

/** A step's latest execution, folded from the run's events. */
export const StepExecution = z.object({
  stepId: z.string(),
  tool: z.string(),
  status: StepStatus,
  attempt: z.number().int(),
  arguments: z.unknown().optional(),
  result: z.unknown().optional(),
  truncated: z.boolean(),
  error: z.string().nullable(),
  code: ErrorCode.nullable().describe('why the last attempt failed'),
  reused: z.boolean().describe('taken over from an earlier run or attempt, not executed again'),
  startedAt: z.string().nullable(),
  finishedAt: z.string().nullable(),
});
export type StepExecution = z.infer<typeof StepExecution>;

/**
 * Sent to the replica that owns a run, on its control subject: approve and cancel (any executor
 * replica), a server's input request (the registry replica running the call) and its answer.
 */
export const RunControl = z.discriminatedUnion('action', [
  z.object({ action: z.literal('approve'), stepId: z.string().optional(), plan: z.unknown().optional() }),
  z.object({ action: z.literal('cancel'), reason: z.string().max(1_000).optional() }),
  ElicitationAsk,
  InputAnswerControl,
]);
export type RunControl = z.infer<typeof RunControl>;

export const RunControlReply = z.object({ status: RunStatus, released: z.array(z.string()) });
export type RunControlReply = z.infer<typeof RunControlReply>;

/** `executor.run.<runId>.control`: only the replica running the run listens. */
export function runControlSubject(runId: string): string {
  return `executor.run.${runId}.control`;
}

/** Token chunks of a plan being drafted, from the planner to the executor that owns the run. */
export function planTokensSubject(runId: string): string {
  return `planner.draft.${runId}.tokens`;
}

export const PlanTokens = z.object({ runId: z.string(), attempt: z.number().int().min(1), text: z.string() });
export type PlanTokens = z.infer<typeof PlanTokens>;

export const DraftPlanRequest = z.object({
  runId: z.string().uuid(),
  goal: z.string().min(1).max(20_000),
  model: ModelSettings.optional(),
  files: RunFiles.optional(),
  /** The run's file grants: the model passes one as `@file:<name>` in an argument. */
  grants: z
    .array(z.object({ name: z.string(), kind: FileGrantKind, directory: z.boolean(), writable: z.boolean() }))
    .max(50)
    .optional(),
  inputNames: z.array(z.string()).optional(),
  /** Only these tools may be planned with (the executor's view of the caller's catalog). */
  tools: z.array(ToolDescriptor),
  /** The run's agent's system prompt, put before the planner's own. */
  agentPrompt: z.string().max(100_000).optional(),
  /** Tokens the run may still spend: no repair is asked for once the drafts have spent more. */
  maxTokens: z.number().int().min(0).optional(),
});
export type DraftPlanRequest = z.infer<typeof DraftPlanRequest>;

/** Model tokens (prompt and answer) the drafts spent, as the model reported them. */
const DraftTokens = z.number().int().min(0).optional();

export const DraftPlanResult = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    plan: AgentPlan,
    attempts: z.number().int(),
    tokens: DraftTokens,
    /** The owner's memories the prompt carried (memory on and any relevant), best first. */
    memories: z.array(InjectedMemory).optional(),
  }),
  z.object({
    ok: z.literal(false),
    issues: z.array(PlanIssue),
    attempts: z.number().int(),
    message: z.string(),
    tokens: DraftTokens,
    memories: z.array(InjectedMemory).optional(),
  }),
]);
export type DraftPlanResult = z.infer<typeof DraftPlanResult>;

export const CheckModelRequest = z.object({ model: ModelSettings.optional() });
export type CheckModelRequest = z.infer<typeof CheckModelRequest>;
export const CheckModelResult = z.object({ provider: z.string(), model: z.string() });
export type CheckModelResult = z.infer<typeof CheckModelResult>;
