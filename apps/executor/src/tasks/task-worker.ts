import { randomUUID } from 'node:crypto';
import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  AppError,
  describeIssues,
  Events,
  TASK_BATCH_LIMIT,
  FinishTask,
  Rpc,
  type ClaimResult,
  TASK_BODY_STOPPED,
  type TaskBody,
  toFieldIssues,
} from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { Logger } from '@switchyard/server-observability';
import { BUS, Coalescer, LOGGER } from '@switchyard/server-runtime';
import type { RunDriver } from '../runs/run-driver';
import { WorkflowRuns } from '../workflows/workflow-runs.service';
import { TASK_JOBS, type HandedTask, type TaskJobSource } from './task-jobs';

/** How long a kill for a task this replica has not started yet is remembered. */
export const KILL_MEMORY_MS = 60_000;
/** Reporting a task's end is retried for about ten minutes (a scheduler restart, a NATS blip). */
export const REPORT_ATTEMPTS = 130;
/** The longest error text a task keeps (FinishTask's limit); a longer one is cut, marked with an ellipsis. */
export const TASK_ERROR_LIMIT = 10_000;

/** The worker's sense of time: kills are forgotten and reports retried by it, so tests move it by hand. */
export interface WorkerTime {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const TASK_WORKER_TIME = Symbol('TASK_WORKER_TIME');

export const systemWorkerTime: WorkerTime = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** An error text within FinishTask's limit, never cut between the halves of a surrogate pair. */
export function taskError(message: string): string {
  if (message.length <= TASK_ERROR_LIMIT) return message;
  let end = TASK_ERROR_LIMIT - 1;
  if (/[\ud800-\udbff]/.test(message.charAt(end - 1))) end--;
  return `${message.slice(0, end)}…`;
}

/**
 * Runs background-task bodies handed over by the scheduler (BullMQ, see `TaskJobSource`): the task
 * is running already and its job names the id its run will have; run its published workflow
 * unattended under that id (a kill heard before the run existed cancels it before any tool is
 * called), report how it ended. A job BullMQ hands on after its first worker died is reported
 * interrupted: never replayed.
 */
@Injectable()
export class TaskWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly running = new Map<string, RunDriver>();
  private readonly killed = new Map<string, number>();
  private unsubscribe: (() => void) | undefined;
  /** Claims and ends made while the previous ones are on their way leave together. */
  private readonly claims = new Coalescer<{ id: string; runId: string }, ClaimResult>(
    async (claims) =>
      (
        await this.bus.call(Rpc.tasks.claimBatch, {
          ids: claims.map((c) => c.id),
          runIds: claims.map((c) => c.runId),
        })
      ).claims,
    { maxBatch: TASK_BATCH_LIMIT, now: () => this.time.now() },
  );
  private readonly ends = new Coalescer<FinishTask, undefined>(
    async (ends) => {
      await this.bus.call(Rpc.tasks.finishBatch, { ends });
      return ends.map(() => undefined);
    },
    { maxBatch: TASK_BATCH_LIMIT, now: () => this.time.now() },
  );

  constructor(
    private readonly workflows: WorkflowRuns,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(TASK_JOBS) private readonly jobs: TaskJobSource,
    @Inject(TASK_WORKER_TIME) private readonly time: WorkerTime,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.bus.on(Events.taskKill, (msg) => {
      const driver = this.running.get(msg.id);
      if (driver) void driver.cancel('the task was killed').catch(() => undefined);
      else this.killed.set(msg.id, this.time.now() + KILL_MEMORY_MS);
    });
    this.jobs.start((job) => this.process(job));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    // The runs themselves are interrupted by ActiveRuns; their bodies then report and end.
    await this.jobs.close();
  }

  private async process(job: HandedTask): Promise<void> {
    const taskId = job.taskId;
    const handed = await this.handed(job);
    if (!handed) return;
    const { runId, task } = handed;
    const ctx = { correlationId: `task-${taskId}`, ownerId: task.ownerId, role: 'user' as const };
    let driver: RunDriver;
    try {
      ({ driver } = await this.workflows.startPublished(
        task.workflowId,
        task.inputs,
        task.permissionMode,
        { taskId },
        ctx,
        {
          runId,
          // A kill heard from now on cancels the run itself (its tools are called once their starts
          // are stored, with its row).
          attach: (d) => this.running.set(taskId, d),
          // A kill heard before cancels the run before any tool is called.
          beforeWork: async () => {
            this.forgetOldKills();
            return this.killed.delete(taskId) ? 'the task was killed' : undefined;
          },
        },
      ));
    } catch (err) {
      this.running.delete(taskId);
      await this.report({
        id: taskId,
        state: 'failed',
        runId: null,
        error: taskError(
          err instanceof AppError ? err.message : `the task could not start: ${(err as Error).message}`,
        ),
      });
      return;
    }
    try {
      const end = await driver.settled;
      await this.report(
        end.type === 'complete'
          ? {
              id: taskId,
              state: 'completed',
              runId: driver.runId,
              output: end.data.result ?? null,
              ...(end.data.truncated?.length ? { outputTruncated: true } : {}),
              error: null,
            }
          : {
              id: taskId,
              state: end.type === 'error' ? 'failed' : end.type,
              runId: driver.runId,
              error: taskError(end.data.message),
            },
      );
    } finally {
      this.running.delete(taskId);
    }
  }

  /**
   * What the body runs and under which run id. A dispatched task is running already and its job
   * says both; a job BullMQ hands on (its replica stopped) is reported interrupted and not started
   * again. A job from a scheduler of the previous version names the task alone: the body claims it,
   * naming the id its run will have (refused when it was killed meanwhile or is a second body).
   */
  private async handed(job: HandedTask): Promise<{ runId: string; task: TaskBody } | undefined> {
    const taskId = job.taskId;
    if (job.task && job.runId) {
      if (job.attempt <= 1) return { runId: job.runId, task: job.task };
      this.logger.warn(
        { taskId, attempt: job.attempt },
        'task handed on after its replica stopped; not started again',
      );
      // No run named: the task keeps the one recorded (its first body's, if it wrote one).
      await this.report({ id: taskId, state: 'interrupted', runId: null, error: TASK_BODY_STOPPED });
      return undefined;
    }
    const runId = randomUUID();
    const claim = await this.claims.call({ id: taskId, runId });
    if (claim.go && claim.task) return { runId, task: claim.task };
    this.logger.info({ taskId, reason: claim.reason }, 'task not started');
    return undefined;
  }

  /**
   * Tells the scheduler how a body ended, retrying while it is unreachable (a restart): an end that
   * is never reported would leave the task running and its slot taken. Ends learnt while a report is
   * on its way go together in the next one (one message for many bodies under load). A report the
   * scheduler refuses as invalid is not retried: it would be refused again; so each end is checked
   * here first, and one that does not fit is given up alone instead of taking a batch down with it.
   */
  private async report(f: FinishTask): Promise<void> {
    const checked = FinishTask.safeParse(f);
    if (!checked.success) {
      this.logger.error(
        { taskId: f.id, err: describeIssues(toFieldIssues(checked.error)) },
        'gave up reporting a task end: it does not fit the report',
      );
      return;
    }
    try {
      await this.untilReached(f.id, 'task end not reported yet', () => this.ends.call(f));
    } catch (err) {
      this.logger.error({ taskId: f.id, err: (err as Error).message }, 'gave up reporting a task end');
    }
  }

  /**
   * Calls the scheduler, retrying while it cannot be reached (a restart) with a growing pause, up
   * to REPORT_ATTEMPTS; a call it refuses as invalid is not retried (it would be refused again).
   */
  private async untilReached<T>(taskId: string, retrying: string, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        const refused = err instanceof AppError && err.code === 'validation_failed';
        if (refused || attempt >= REPORT_ATTEMPTS) throw err;
        if (attempt === 1) this.logger.warn({ taskId, err: (err as Error).message }, `${retrying}; retrying`);
        await this.time.sleep(Math.min(5_000, 250 * attempt));
      }
    }
  }

  private forgetOldKills(): void {
    const now = this.time.now();
    for (const [id, until] of this.killed) if (until < now) this.killed.delete(id);
  }
}
