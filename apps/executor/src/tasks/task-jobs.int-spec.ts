import { createQueue, createRedis, taskQueueNames, type Queue } from '@switchyard/server-queue';
import { testConfig, uniquePrefix, waitFor } from '@switchyard/testing';
import { createLogger } from '@switchyard/server-observability';
import { BullTaskJobs, type HandedTask } from './task-jobs';

const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

const quiet = createLogger({ level: 'silent', service: 'executor', instanceId: 'task-jobs-test' });

/**
 * The executor's BullMQ worker against the real Redis: how many bodies one replica takes at once
 * follows the deployment's running limit (TASK_RUNNING_LIMIT), not a number of its own.
 */
describe('BullTaskJobs', () => {
  let redis: ReturnType<typeof createRedis>;
  let queue: Queue<Record<string, unknown>>;
  let jobs: BullTaskJobs;
  const release: Array<() => void> = [];

  afterEach(async () => {
    release.splice(0).forEach((r) => r());
    await jobs?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    redis?.disconnect();
  });

  /** A worker of an executor with `env`, and the scheduler's queue it takes jobs from. */
  const worker = (env: Record<string, string>, body: (job: HandedTask) => Promise<void>) => {
    const config = testConfig('executor', { NATS_SUBJECT_PREFIX: uniquePrefix('taskjobs'), ...env });
    const names = taskQueueNames(config.nats.subjectPrefix);
    redis = createRedis({ ...config.redis, name: 'task-jobs-test' });
    queue = createQueue<Record<string, unknown>>(names.queue, redis, names.bullPrefix);
    jobs = new BullTaskJobs(config, quiet);
    jobs.start(body);
  };

  it('takes twice the running limit: as many new bodies as ended ones waiting for their report', async () => {
    const started: string[] = [];
    // Above 16: the worker used to take 16 whatever the limit, so with one replica, bodies the
    // scheduler counted as running waited in BullMQ.
    worker({ TASK_RUNNING_LIMIT: '20' }, async (job) => {
      started.push(job.taskId);
      await new Promise<void>((r) => release.push(r));
    });
    await queue.addBulk(
      Array.from({ length: 45 }, (_, i) => ({
        name: 'task',
        data: { taskId: id(i) },
        opts: { jobId: id(i) },
      })),
    );
    await waitFor(() => started.length >= 40, 30_000, 20);
    // The 41st waits for a body to end, however long the others take to be picked up.
    expect(await queue.getWaitingCount()).toBe(5);
    expect(started).toHaveLength(40);
    release.shift()?.();
    await waitFor(() => started.length === 41, 30_000, 20);
    expect(await queue.getWaitingCount()).toBe(4);
  });

  it('hands over the dispatched task as the job carries it, on its first start; a job that does not fit by its id alone', async () => {
    const handed: HandedTask[] = [];
    worker({}, async (job) => {
      handed.push(job);
    });
    const task = { ownerId: id(90), workflowId: id(91), inputs: { n: 7 }, permissionMode: 'ask' };
    await queue.add('task', { taskId: id(1), runId: id(2), task }, { jobId: id(1) });
    await waitFor(() => handed.length === 1, 30_000, 20);
    // Not a task body: a permission mode no task has. The body claims it by its id instead.
    await queue.add('task', { taskId: id(3), runId: id(4), task: { ...task, permissionMode: 'root' } });
    await waitFor(() => handed.length === 2, 30_000, 20);
    expect(handed).toEqual([
      { taskId: id(1), runId: id(2), task, attempt: 1 },
      { taskId: id(3), attempt: 1 },
    ]);
  });
});
