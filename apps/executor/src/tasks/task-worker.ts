import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { AppError, Events, Rpc, type FinishTask } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import type { Logger } from '@switchyard/server-observability';
import { createWorker, taskQueueNames } from '@switchyard/server-queue';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import type { RunDriver } from '../runs/run-driver';
import { WorkflowRuns } from '../workflows/workflow-runs.service';

/** Bodies one executor replica runs at once; the scheduler keeps the cluster-wide limit (16). */
const CONCURRENCY = 16;
/** How long a kill for a task this replica has not started yet is remembered. */
const KILL_MEMORY_MS = 60_000;
/** Reporting a task's end is retried for about ten minutes (a scheduler restart, a NATS blip). */
const REPORT_ATTEMPTS = 130;

/**
 * Runs background-task bodies handed over by the scheduler through BullMQ: claim the task (a task
 * killed meanwhile is refused), run its published workflow unattended, attach the run (a kill that
 * arrived before the run existed cancels it at once), report how it ended. A job BullMQ hands on
 * after its first worker died is refused by the claim and reported interrupted: never replayed.
 */
@Injectable()
export class TaskWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private worker: ReturnType<typeof createWorker<{ taskId: string }>> | undefined;
  private readonly running = new Map<string, RunDriver>();
  private readonly killed = new Map<string, number>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly workflows: WorkflowRuns,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.unsubscribe = this.bus.on(Events.taskKill, (msg) => {
      const driver = this.running.get(msg.id);
      if (driver) void driver.cancel('the task was killed').catch(() => undefined);
      else this.killed.set(msg.id, Date.now() + KILL_MEMORY_MS);
    });
    const names = taskQueueNames(this.config.nats.subjectPrefix);
    this.worker = createWorker<{ taskId: string }>(
      names.queue,
      {
        url: this.config.redis.url,
        name: `${this.config.service}-tasks`,
        prefix: names.bullPrefix,
        concurrency: CONCURRENCY,
      },
      (job) => this.process(job.data.taskId),
    );
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'task worker error'));
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.unsubscribe?.();
    // The runs themselves are interrupted by ActiveRuns; their bodies then report and end.
    await this.worker?.close(true).catch(() => undefined);
  }

  private async process(taskId: string): Promise<void> {
    const claim = await this.bus.call(Rpc.tasks.claim, { id: taskId });
    if (!claim.go || !claim.task) {
      this.logger.info({ taskId, reason: claim.reason }, 'task not started');
      return;
    }
    const task = claim.task;
    const ctx = { correlationId: `task-${taskId}`, ownerId: task.ownerId, role: 'user' as const };
    let driver: RunDriver;
    try {
      ({ driver } = await this.workflows.startPublished(
        task.workflowId,
        task.inputs,
        task.permissionMode,
        { taskId },
        ctx,
      ));
    } catch (err) {
      await this.report({
        id: taskId,
        state: 'failed',
        runId: null,
        error: err instanceof AppError ? err.message : `the task could not start: ${(err as Error).message}`,
      });
      return;
    }
    this.running.set(taskId, driver);
    try {
      const { cancel } = await this.bus.call(Rpc.tasks.attach, { id: taskId, runId: driver.runId });
      this.forgetOldKills();
      if (cancel || this.killed.delete(taskId))
        await driver.cancel('the task was killed').catch(() => undefined);
      const end = await driver.settled;
      await this.report(
        end.type === 'complete'
          ? {
              id: taskId,
              state: 'completed',
              runId: driver.runId,
              output: end.data.result ?? null,
              error: null,
            }
          : {
              id: taskId,
              state: end.type === 'error' ? 'failed' : end.type,
              runId: driver.runId,
              error: end.data.message,
            },
      );
    } finally {
      this.running.delete(taskId);
    }
  }

  /**
   * Tells the scheduler how a body ended, retrying while it is unreachable (a restart): an end that
   * is never reported would leave the task running and its slot taken.
   */
  private async report(f: FinishTask): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.bus.call(Rpc.tasks.finish, f);
        return;
      } catch (err) {
        if (attempt >= REPORT_ATTEMPTS) {
          this.logger.error({ taskId: f.id, err: (err as Error).message }, 'gave up reporting a task end');
          return;
        }
        if (attempt === 1)
          this.logger.warn(
            { taskId: f.id, err: (err as Error).message },
            'task end not reported yet; retrying',
          );
        await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * attempt)));
      }
    }
  }

  private forgetOldKills(): void {
    const now = Date.now();
    for (const [id, until] of this.killed) if (until < now) this.killed.delete(id);
  }
}
