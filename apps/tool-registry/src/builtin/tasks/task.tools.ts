import { Inject } from '@nestjs/common';
import { z } from 'zod';
import {
  AppError,
  FINISHED_TASK_STATES,
  Rpc,
  Schedule,
  ScheduleBody,
  Task,
  TaskCapacity,
  TaskPage,
  TaskPriority,
  TaskState,
  type ToolResult,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { BuiltinTool, outputSchemaOf, type BuiltinToolHandler, type ToolRunContext } from '../builtin-tool';

const POLL_MS = 200;

function json(value: unknown, isError = false): ToolResult {
  return { content: [{ type: 'json', json: value }], isError, truncated: false };
}

/** Waits `ms` unless the call is aborted first (then rejects with the abort reason). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      },
      { once: true },
    );
  });
}

const TaskId = z.string().uuid().describe('the id task_submit_workflow returned');
const Timeout = z
  .number()
  .int()
  .min(0)
  .max(600_000)
  .default(0)
  .describe('how long to wait for the end, in ms; 0 answers at once');

const SubmitParams = z
  .object({
    workflowId: z.string().uuid().describe('a published workflow of yours'),
    inputs: z.record(z.string(), z.unknown()).default({}).describe("the workflow's inputs"),
    priority: TaskPriority.default('normal'),
  })
  .strict();

/** The scheduler's answers to the calling owner, as tools: every call carries the caller's identity. */
abstract class TaskTool {
  constructor(@Inject(BUS) protected readonly bus: Bus) {}

  protected get(id: string, ctx: ToolRunContext): Promise<Task> {
    return this.bus.call(Rpc.tasks.get, { id }, { ctx: ctx.caller });
  }

  /** Polls until every (or any) of the tasks has ended, or the timeout passes. */
  protected async until(
    ids: string[],
    mode: 'any' | 'all',
    timeoutMs: number,
    ctx: ToolRunContext,
  ): Promise<Task[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const tasks = await Promise.all(ids.map((id) => this.get(id, ctx)));
      const ended = tasks.filter((t) => FINISHED_TASK_STATES.has(t.state));
      if ((mode === 'all' ? ended.length === tasks.length : ended.length > 0) || Date.now() >= deadline)
        return tasks;
      await pause(Math.min(POLL_MS, Math.max(1, deadline - Date.now())), ctx.signal);
    }
  }
}

@BuiltinTool({
  name: 'task_submit_workflow',
  description:
    'Run a published workflow in the background and return its taskId at once. When capacity is full the answer says ' +
    'retryable: true with retryAfterSeconds and capacityScope (owner, global, owner-priority, global-priority): wait and submit again.',
  params: SubmitParams,
  effect: 'external',
  idempotent: false,
  outputSchema: outputSchemaOf(
    z.object({ taskId: Task.shape.id, state: TaskState, queued: Task.shape.queued, priority: TaskPriority }),
    {
      examples: [
        { taskId: '1b4e28ba-2fa1-4d3b-a3f5-ef19b5a7633b', state: 'queued', queued: true, priority: 'normal' },
      ],
    },
  ),
})
export class TaskSubmitTool extends TaskTool implements BuiltinToolHandler<typeof SubmitParams> {
  async run(args: z.infer<typeof SubmitParams>, ctx: ToolRunContext): Promise<ToolResult> {
    try {
      const task = await this.bus.call(Rpc.tasks.submit, args, { ctx: ctx.caller });
      return json({ taskId: task.id, state: task.state, queued: task.queued, priority: task.priority });
    } catch (err) {
      if (err instanceof AppError && err.code === 'capacity_exceeded') {
        return json({ error: err.message, ...(err.details ?? {}) }, true);
      }
      throw err;
    }
  }
}

const OutputParams = z.object({ taskId: TaskId, timeoutMs: Timeout }).strict();

@BuiltinTool({
  name: 'task_output',
  description:
    "A background task's state and (capped) output; with timeoutMs, waits up to that long for it to end.",
  params: OutputParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(Task),
})
export class TaskOutputTool extends TaskTool implements BuiltinToolHandler<typeof OutputParams> {
  async run(args: z.infer<typeof OutputParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const [task] = await this.until([args.taskId], 'all', args.timeoutMs, ctx);
    return json(task);
  }
}

const WaitParams = z
  .object({
    taskIds: z.array(TaskId).min(1).max(20),
    mode: z.enum(['any', 'all']).default('all'),
    timeoutMs: Timeout,
  })
  .strict();

@BuiltinTool({
  name: 'task_wait',
  description:
    'Wait for up to 20 background tasks: until any or all of them end, or the timeout; returns their states.',
  params: WaitParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(
    z.object({
      done: z.array(Task).describe('the tasks that have ended'),
      pending: z.array(Task.shape.id).describe('the ids of those still queued or running'),
    }),
  ),
})
export class TaskWaitTool extends TaskTool implements BuiltinToolHandler<typeof WaitParams> {
  async run(args: z.infer<typeof WaitParams>, ctx: ToolRunContext): Promise<ToolResult> {
    const tasks = await this.until(args.taskIds, args.mode, args.timeoutMs, ctx);
    const ended = tasks.filter((t) => FINISHED_TASK_STATES.has(t.state));
    return json({
      done: ended,
      pending: tasks.filter((t) => !FINISHED_TASK_STATES.has(t.state)).map((t) => t.id),
    });
  }
}

const KillParams = z.object({ taskId: TaskId }).strict();

@BuiltinTool({
  name: 'task_kill',
  description:
    'Stop a background task: a queued one is cancelled before it starts, a running one is cancelled.',
  params: KillParams,
  effect: 'write',
  idempotent: true,
  outputSchema: outputSchemaOf(Task),
})
export class TaskKillTool extends TaskTool implements BuiltinToolHandler<typeof KillParams> {
  async run(args: z.infer<typeof KillParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.tasks.kill, { id: args.taskId }, { ctx: ctx.caller }));
  }
}

const ListParams = z
  .object({ state: TaskState.optional(), limit: z.number().int().min(1).max(200).default(50) })
  .strict();

@BuiltinTool({
  name: 'task_list',
  description:
    'Your background tasks, newest first, with priority, queued/running state, waits and durations.',
  params: ListParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(TaskPage),
})
export class TaskListTool extends TaskTool implements BuiltinToolHandler<typeof ListParams> {
  async run(args: z.infer<typeof ListParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.tasks.list, args, { ctx: ctx.caller }));
  }
}

const CapacityParams = z.object({}).strict();

@BuiltinTool({
  name: 'task_capacity',
  description:
    'Background capacity: running and waiting by priority, limits and reservations, oldest waits, the policy, and your own share.',
  params: CapacityParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(TaskCapacity),
})
export class TaskCapacityTool extends TaskTool implements BuiltinToolHandler<typeof CapacityParams> {
  async run(_: z.infer<typeof CapacityParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.tasks.capacity, {}, { ctx: ctx.caller }));
  }
}

@BuiltinTool({
  name: 'task_schedule',
  description:
    'Run a published workflow on a schedule as background tasks (priority batch): recurrence daily, weekly (weekdays 1–7, Monday = 1) ' +
    'or monthly (dayOfMonth 1–31 or "last") at time "HH:mm" in timeZone (IANA; default daily 09:00 UTC); interval (everySeconds, whole minutes, ' +
    '≥ 60; expires after 7 days); once (delaySeconds). fireNow also fires right away. At most 50 active schedules. Under permissionMode "ask" a ' +
    'workflow with a non-read step no allow rule covers is refused, naming the modes that would work. Answers the schedule with its next five fires.',
  params: ScheduleBody,
  effect: 'write',
  idempotent: false,
  outputSchema: outputSchemaOf(Schedule),
})
export class TaskScheduleTool extends TaskTool implements BuiltinToolHandler<typeof ScheduleBody> {
  async run(args: z.infer<typeof ScheduleBody>, ctx: ToolRunContext): Promise<ToolResult> {
    return json(await this.bus.call(Rpc.schedules.create, args, { ctx: ctx.caller }));
  }
}

export const TASK_TOOLS = [
  TaskSubmitTool,
  TaskOutputTool,
  TaskWaitTool,
  TaskKillTool,
  TaskListTool,
  TaskCapacityTool,
  TaskScheduleTool,
] as const;
