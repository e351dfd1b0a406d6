import { Inject, Injectable } from '@nestjs/common';
import { TaskJob } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import { createWorker, taskQueueNames } from '@switchyard/server-queue';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';

/**
 * Where the task bodies this replica runs come from: the scheduler's BullMQ queue in production, a
 * test's own hand in unit tests (so the worker's decisions are tested without Redis).
 */
export interface TaskJobSource {
  /** Starts handing over tasks; `body` resolves once that body has ended and been reported. */
  start(body: (job: HandedTask) => Promise<void>): void;
  /** Stops taking tasks; bodies under way are not waited for (their runs are interrupted). */
  close(): Promise<void>;
}

/** A task handed to this replica: its job, and how many times BullMQ has started that job (1 at first). */
export type HandedTask = TaskJob & { readonly attempt: number };

export const TASK_JOBS = Symbol('TASK_JOBS');

/** A worker on the scheduler's BullMQ task queue (a job whose worker died is handed on once). */
@Injectable()
export class BullTaskJobs implements TaskJobSource {
  private worker: ReturnType<typeof createWorker<TaskJob>> | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  start(body: (job: HandedTask) => Promise<void>): void {
    const names = taskQueueNames(this.config.nats.subjectPrefix);
    this.worker = createWorker<TaskJob>(
      names.queue,
      {
        ...this.config.redis,
        name: `${this.config.service}-tasks`,
        prefix: names.bullPrefix,
        // The scheduler keeps the cluster-wide limit on running bodies (TASK_RUNNING_LIMIT): it frees
        // a body's slot when the body ends, while the end is being recorded. Its job here lasts until
        // that record is acknowledged, so a replica takes up to twice the limit: as many new bodies as
        // ended ones still waiting for their acknowledgement.
        concurrency: this.config.tasks.running * 2,
      },
      (job) => {
        const data = TaskJob.safeParse(job.data);
        // A job that does not fit is claimed by its id: the scheduler answers with the task itself.
        const handed = data.success ? data.data : { taskId: String(job.data.taskId) };
        return body({ ...handed, attempt: job.attemptsStarted });
      },
    );
    this.worker.on('error', (err) => this.logger.warn({ err: err.message }, 'task worker error'));
  }

  async close(): Promise<void> {
    await this.worker?.close(true).catch(() => undefined);
  }
}
