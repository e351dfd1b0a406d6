import { z } from 'zod';
import { PageQuery, pageOf } from './identity';
import { PermissionMode } from './runs';

/** Webhook deliveries are interactive, model-submitted workflows normal, schedule fires batch. */
export const TaskPriority = z.enum(['interactive', 'normal', 'batch']);
export type TaskPriority = z.infer<typeof TaskPriority>;

export const TaskState = z.enum(['queued', 'running', 'completed', 'failed', 'cancelled', 'interrupted']);
export type TaskState = z.infer<typeof TaskState>;

export const FINISHED_TASK_STATES: ReadonlySet<TaskState> = new Set([
  'completed',
  'failed',
  'cancelled',
  'interrupted',
]);

export const SubmitTaskBody = z
  .object({
    workflowId: z.string().uuid(),
    inputs: z.record(z.string(), z.unknown()).default({}),
    priority: TaskPriority.default('normal'),
    permissionMode: PermissionMode.default('ask').describe(
      'the unattended run cannot ask anyone: under "ask" every non-read step without an allow rule is refused',
    ),
  })
  .strict();
export type SubmitTaskBody = z.infer<typeof SubmitTaskBody>;

export const Task = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  workflowId: z.string().uuid(),
  priority: TaskPriority,
  state: TaskState,
  queued: z.boolean().describe('waiting for a slot (not running yet)'),
  runId: z
    .string()
    .uuid()
    .nullable()
    .describe(
      "the body's run: named when the body starts (the run itself is written a moment later); null when none was started",
    ),
  createdAt: z.string(),
  queueWaitMs: z.number().int().describe('time spent waiting; grows until the task starts or ends'),
  startedAt: z
    .string()
    .nullable()
    .describe('when the scheduler handed the task to an executor replica; it runs from then'),
  runDurationMs: z.number().int().nullable().describe('grows while running'),
  finishedAt: z.string().nullable(),
  output: z.unknown().nullable().describe('the run result, capped'),
  outputTruncated: z.boolean(),
  error: z.string().nullable(),
});
export type Task = z.infer<typeof Task>;

export const TaskIdParam = z.object({ id: z.string().uuid() });

export const TaskListQuery = PageQuery.extend({ state: TaskState.optional() });
export type TaskListQuery = z.infer<typeof TaskListQuery>;

export const TaskPage = pageOf(Task);
export type TaskPage = z.infer<typeof TaskPage>;

const ByPriority = z.object({
  interactive: z.number().int(),
  normal: z.number().int(),
  batch: z.number().int(),
});

export const TaskCapacity = z.object({
  policy: z.literal('owner-round-robin-weighted-priority'),
  weights: ByPriority,
  running: z.number().int(),
  runningLimit: z.number().int(),
  queued: z.number().int(),
  globalQueueLimit: z.number().int(),
  queuedByPriority: ByPriority,
  batchGlobalLimit: z.number().int(),
  nonInteractiveGlobalLimit: z.number().int(),
  activeOwners: z.number().int(),
  saturated: z.boolean().describe('every running slot is busy and the global queue is full'),
  oldestQueueWaitMs: z.number().int().nullable(),
  oldestInteractiveQueueWaitMs: z.number().int().nullable(),
  oldestNormalQueueWaitMs: z.number().int().nullable(),
  oldestBatchQueueWaitMs: z.number().int().nullable(),
  owner: z.object({
    queued: z.number().int(),
    running: z.number().int(),
    queuedByPriority: ByPriority,
    ownerQueueLimit: z.number().int(),
    ownedQueueAvailable: z.number().int(),
    batchOwnerLimit: z.number().int(),
    nonInteractiveOwnerLimit: z.number().int(),
    ownerSaturated: z.boolean(),
  }),
});
export type TaskCapacity = z.infer<typeof TaskCapacity>;

/** Executor → scheduler: a dispatched task's body is about to start (or must not: killed meanwhile). */
export const ClaimTask = z.object({ id: z.string().uuid() });

/**
 * Executor → scheduler: the body's run id, once it exists. An executor that names its run in the
 * claim (`ClaimTasks.runIds`) does not attach; this is kept for executors of the previous version
 * during a rolling upgrade.
 */
export const AttachRun = z.object({ id: z.string().uuid(), runId: z.string().uuid() });

/**
 * Broadcast on a kill: the executor running the task cancels its run; one that has claimed it but
 * not started its run yet remembers the kill and cancels the run the moment it exists.
 */
export const TASK_KILL_SUBJECT = 'events.scheduler.task.kill';
export const TaskKill = z.object({ id: z.string().uuid() });
/** What a task's body runs: the task's owner, published workflow, inputs and permission mode. */
export const TaskBody = z.object({
  ownerId: z.string().uuid(),
  workflowId: z.string().uuid(),
  inputs: z.record(z.string(), z.unknown()),
  permissionMode: PermissionMode,
});
export type TaskBody = z.infer<typeof TaskBody>;

export const ClaimResult = z.object({
  go: z.boolean(),
  reason: z.string().optional(),
  task: TaskBody.optional(),
});
export type ClaimResult = z.infer<typeof ClaimResult>;

/** Executor → scheduler: how a task's body ended. */
export const FinishTask = z.object({
  id: z.string().uuid(),
  state: z.enum(['completed', 'failed', 'cancelled', 'interrupted']),
  runId: z
    .string()
    .uuid()
    .nullable()
    .describe('the run, or null when none was written (a run id named at the claim is then cleared)'),
  output: z.unknown().optional(),
  outputTruncated: z
    .boolean()
    .optional()
    .describe('the run cut the output already (RUN_RESULT_LIMIT_BYTES): it is a JSON prefix'),
  error: z.string().max(10_000).nullable(),
});
export type FinishTask = z.infer<typeof FinishTask>;

/** The most claims, attachments or ends one message carries (a replica runs 16 bodies at once). */
export const TASK_BATCH_LIMIT = 256;

/**
 * Executor → scheduler: several claims in one message, answered in their order. `runIds[i]` is the
 * id the body of `ids[i]` will write its run with: the claim records it, so the run needs no second
 * message to be known (a run that then fails to start is reported with `runId: null`).
 */
export const ClaimTasks = z
  .object({
    ids: z.array(z.string().uuid()).min(1).max(TASK_BATCH_LIMIT),
    runIds: z.array(z.string().uuid()).max(TASK_BATCH_LIMIT).optional(),
  })
  .refine((c) => c.runIds === undefined || c.runIds.length === c.ids.length, {
    message: 'runIds must name one run per id, in the same order',
    path: ['runIds'],
  });
export const ClaimResults = z.object({ claims: z.array(ClaimResult) });

/** Executor → scheduler: several attachments in one message, answered in their order. */
export const AttachRuns = z.object({ runs: z.array(AttachRun).min(1).max(TASK_BATCH_LIMIT) });
export const AttachResults = z.object({ answers: z.array(z.object({ cancel: z.boolean() })) });

/** Executor → scheduler: how several bodies ended, in one message (each recorded once, as `finish`). */
export const FinishTasks = z.object({ ends: z.array(FinishTask).min(1).max(TASK_BATCH_LIMIT) });
export type FinishTasks = z.infer<typeof FinishTasks>;

/**
 * The BullMQ job an executor replica runs. The scheduler moves a task to running as it dispatches
 * it, and the job carries what the body needs and the id its run will have: the body starts
 * without asking. A job with the id alone comes from a scheduler of the previous version: its body
 * claims the task first (`Rpc.tasks.claimBatch`).
 */
/** Why a task whose body's replica stopped ends interrupted: a body is never started twice. */
export const TASK_BODY_STOPPED = 'the executor running this task stopped; it was not started again';

export const TaskJob = z.object({
  taskId: z.string().uuid(),
  runId: z.string().uuid().optional(),
  task: TaskBody.optional(),
});
export type TaskJob = z.infer<typeof TaskJob>;
