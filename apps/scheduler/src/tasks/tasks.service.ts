import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  AppError,
  Events,
  TASK_BODY_STOPPED,
  type ClaimResult,
  type FinishTask,
  type SubmitTaskBody,
  type Task,
  type TaskBody,
  type TaskJob,
  type TaskCapacity,
  type TaskListQuery,
  type TaskPage,
  type TaskPriority,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import {
  TasksRepository,
  toTask,
  type BgTaskRow,
  type NewTask,
  type TaskEnd,
} from '@switchyard/server-db-tasks';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import {
  createQueue,
  FairQueue,
  taskQueueNames,
  type AdmitEntry,
  type AdmitResult,
  type DispatchedTask,
  type Queue,
  type Redis,
} from '@switchyard/server-queue';

import { APP_CONFIG, BUS, Coalescer, LOGGER, PublishedWorkflows, REDIS } from '@switchyard/server-runtime';
import { TaskFeed } from './task-feed';
import { TaskMetrics } from './task-metrics';
import { TaskTransitions, type TaskTransition } from './task-transitions';

const OUTPUT_LIMIT = 64 * 1024;
const TICK_MS = 250;
/**
 * How often the finished tasks of owners whose tasks ended meanwhile are pruned (one statement for
 * all of them): a prune per end was a fifth of the scheduler's database work per one-step task.
 * Between prunes an owner may briefly hold more than KEPT_FINISHED_TASKS.
 */
export const PRUNE_INTERVAL_MS = 1_000;
/** Tasks handed to BullMQ per round trip of a pump (a batch of ends frees several slots at once). */
const DISPATCH_BATCH = 16;
/** How often a replica checks Redis against Postgres for work a dead replica left half done. */
const RECONCILE_MS = 5_000;
/** A queued row this old that Redis does not hold was never admitted (not a submit in progress). */
const UNADMITTED_AFTER_MS = 10_000;
/**
 * A task running this long with no job and no run written was never taken by a body (not one between
 * its job's pickup and its run's write, whose job Redis just lost): it is handed over again.
 */
const UNSTARTED_AFTER_MS = 10_000;
/**
 * A slot a submit took at once (`FairQueue.startAll`) whose row is not written this long after is taken
 * for lost (its replica stopped between the two). Far longer than a submit's write can take (a pool
 * connection waited for 5 s, the statement before it in the coalescer), so a slow write keeps its slot.
 */
const STARTED_WRITE_GUARD_MS = 60_000;
/**
 * A running task with no job whose run ended this long ago had its end lost (its report given up
 * after REPORT_ATTEMPTS, or its job failed after stalling twice): it ends interrupted, its slot freed.
 */
const UNREPORTED_AFTER_MS = 60_000;
const WEIGHTS = { interactive: 4, normal: 2, batch: 1 } as const;

/** A task row already in Postgres, waiting for admission. */
export interface WrittenTask {
  readonly id: string;
  readonly ownerId: string;
  readonly priority: TaskPriority;
  readonly createdAt: Date;
}

/** A written task as the fair queue knows it: waiting (or running) since its row was written. */
function entryOf(t: WrittenTask): AdmitEntry {
  return { taskId: t.id, ownerId: t.ownerId, priority: t.priority, enqueuedAtMs: t.createdAt.getTime() };
}

/** What a task's body runs, from its row. */
function bodyOf(row: BgTaskRow): TaskBody {
  return {
    ownerId: row.ownerId,
    workflowId: row.workflowId,
    inputs: row.inputs as Record<string, unknown>,
    permissionMode: row.permissionMode as TaskBody['permissionMode'],
  };
}

function ownerOf(ctx: CallContext): string {
  return requireOwner(ctx, 'tasks');
}

/**
 * Background tasks: admission (while nothing waits and a slot is free, a submit takes the slot in
 * Redis and its row is written running, then handed to BullMQ; else the row in Postgres first, then
 * the atomic admission and enqueue in Redis; a refusal removes the row), dispatch (owner round robin,
 * 4:2:1 within an owner, at most 16 bodies running across replicas; a dispatched task is running in
 * Postgres and BullMQ carries it, with its run id, to an executor), the bodies' ends (and the claims
 * and attachments of executors of the previous version), kills, and the rebuild of the queues from
 * Postgres when Redis lost its data.
 */
@Injectable()
export class TasksService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly fair: FairQueue;
  private readonly jobs: Queue<TaskJob>;
  private timer: NodeJS.Timeout | undefined;
  private reconciler: NodeJS.Timeout | undefined;
  private pruner: NodeJS.Timeout | undefined;
  /** Tasks the last reconciliation found running in Postgres with no slot in Redis. */
  private unheld = new Set<string>();
  /** Owners with tasks ended since the last prune. */
  private readonly toPrune = new Set<string>();
  /** Submits that arrive while others are being written are written together (group commit), and admitted together. */
  private readonly inserts = new Coalescer<NewTask, BgTaskRow>((tasks) => this.repo.insertAll(tasks));
  private readonly admissions = new Coalescer<AdmitEntry, AdmitResult>(async (tasks) => {
    const { results, freeSlots } = await this.fair.admitBatch(tasks);
    // With every slot taken nothing could start now: the end that frees one dispatches them.
    if (freeSlots > 0 && results.some((r) => r.ok)) this.pumpSoon();
    return results;
  });
  /** Submits of one turn try for a running slot at once together (`start`). */
  private readonly starts = new Coalescer<AdmitEntry, boolean>((tasks) => this.fair.startAll(tasks));
  /**
   * Whether a submit tries to start its task at once: off from a start refused (work waits, or every
   * slot is busy) until a dispatch finds nothing waiting. A hint of this replica's: wrong, it costs a
   * round trip or queues a task a slot could have taken; the fair queue decides.
   */
  private startAtOnce = true;
  private pumping = false;
  private again = false;
  private pumpScheduled = false;

  constructor(
    private readonly repo: TasksRepository,
    private readonly metrics: TaskMetrics,
    private readonly transitions: TaskTransitions,
    private readonly feed: TaskFeed,
    private readonly published: PublishedWorkflows,
    @Inject(REDIS) redis: Redis,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    const names = taskQueueNames(config.nats.subjectPrefix);
    this.fair = new FairQueue(redis, { prefix: names.fairPrefix, weights: WEIGHTS, limits: config.tasks });
    this.jobs = createQueue<TaskJob>(names.queue, redis, names.bullPrefix);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.reconciler = setInterval(() => void this.reconcile(), RECONCILE_MS);
    this.pruner = setInterval(() => void this.prune(), PRUNE_INTERVAL_MS);
    void this.tick();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.reconciler) clearInterval(this.reconciler);
    if (this.pruner) clearInterval(this.pruner);
    await this.jobs.close().catch(() => undefined);
  }

  // ── admission ───────────────────────────────────────────────────────────────────────────────

  async submit(body: SubmitTaskBody, ctx: CallContext): Promise<Task> {
    const ownerId = ownerOf(ctx);
    // Refused now rather than failing later: only published workflows of the caller run as tasks.
    await this.published.resolve(body.workflowId, ctx);
    const task: NewTask = {
      id: randomUUID(),
      ownerId,
      workflowId: body.workflowId,
      inputs: body.inputs,
      priority: body.priority,
      permissionMode: body.permissionMode,
    };
    if (this.startAtOnce) {
      const entry = { taskId: task.id, ownerId, priority: body.priority, enqueuedAtMs: Date.now() };
      if (await this.starts.call(entry)) return toTask(await this.started(task));
      this.startAtOnce = false;
    }
    const row = await this.inserts.call(task);
    const refused = await this.admitWritten({
      id: row.id,
      ownerId,
      priority: body.priority,
      createdAt: row.createdAt,
    });
    if (refused) throw refused;
    return toTask(row);
  }

  /**
   * A submitted task the fair queue gave a running slot before its row was written (nothing waited):
   * written running, naming its run, and handed to BullMQ, with no queueing round trips between. The
   * job is added only once the row is stored, as a dispatch adds it.
   */
  private async started(task: NewTask): Promise<BgTaskRow> {
    let row: BgTaskRow;
    try {
      row = await this.inserts.call({ ...task, runId: randomUUID() });
    } catch (err) {
      // The statement may have been written with its answer lost: then the task goes on. Else (or
      // not known: Postgres is down) its slot is freed and the submit fails. A row written after all
      // gets its slot back from the reconciliation (`reconcile`).
      const written = await this.repo.get(task.id).catch(() => null);
      if (!written) {
        await this.fair.finish(task.id).catch(() => undefined);
        this.pumpSoon();
        throw err;
      }
      row = written;
    }
    this.dispatched({ ...row, fromWebhook: false }); // a submit, never a webhook's delivery
    this.metrics.dispatched(task.priority, 0);
    // Not added now, the reconciliation adds it (a running task with no job and no run).
    await this.handOver([row]).catch((err: Error) =>
      this.logger.warn(
        { taskId: row.id, err: err.message },
        'task started; its job is added by the reconciliation',
      ),
    );
    return row;
  }

  /** A task moved to running (dispatched, started at once, or claimed): told as Postgres has it. */
  private dispatched(row: { id: string; ownerId: string; fromWebhook: boolean }): void {
    const { id: taskId, ownerId, fromWebhook } = row;
    this.transitions.emit({ taskId, ownerId, state: 'running', error: null, fromWebhook });
  }

  /**
   * Admits a task whose row is written (by a submit, or by the statement that settled a schedule's
   * or a webhook's claim). Refused for capacity: the row is removed and the refusal answered.
   */
  async admitWritten(t: WrittenTask): Promise<AppError | undefined> {
    const admitted = await this.admissions.call(entryOf(t));
    if (!admitted.ok) {
      await this.repo.discard(t.id);
      this.metrics.rejected(t.priority, admitted.scope);
      return new AppError('capacity_exceeded', admitted.message, {
        details: {
          retryable: true,
          retryAfterSeconds: 1,
          capacityScope: admitted.scope,
          ...(admitted.priority ? { capacityPriority: admitted.priority } : {}),
        },
      });
    }
    this.feed.tell(t.ownerId, t.id, 'queued');
    return undefined;
  }

  // ── dispatch ────────────────────────────────────────────────────────────────────────────────

  private async tick(): Promise<void> {
    try {
      await this.pump();
      await this.metrics.observeQueues(await this.fair.capacity());
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'task dispatch tick failed');
    }
  }

  /** Redis lost its data (this Redis keeps nothing on disk): the queues come back from Postgres. */
  private async rebuild(): Promise<void> {
    const active = await this.repo.active();
    await this.fair.rebuild(active.map((t) => ({ ...entryOf(t), running: t.state === 'running' })));
    // A task submitted between the read and the rebuild was wiped by it: admit it again (idempotent).
    for (const t of await this.repo.active()) {
      if (t.state !== 'queued') continue;
      const again = await this.fair.admit(t.id, t.ownerId, t.priority, t.createdAt.getTime());
      if (!again.ok)
        this.logger.error(
          { taskId: t.id, reason: again.message },
          'queued task could not be re-admitted after a rebuild',
        );
    }
    this.logger.warn({ tasks: active.length }, 'task queues rebuilt from Postgres');
  }

  /** A pump at the end of this turn: what one turn admits or frees is dispatched in one pass. */
  private pumpSoon(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      void this.pump();
    });
  }

  /** Hands every task a free slot allows to BullMQ, in fair order. */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        for (;;) {
          // After Redis lost its data nothing is dispatched until the queues are rebuilt (else the
          // running limit would be counted from zero while bodies still run).
          const next = await this.fair.take(DISPATCH_BATCH, { requireInitialised: true });
          if (next === null) {
            await this.rebuild();
            continue;
          }
          if (!next.waiting) this.startAtOnce = true;
          if (!next.taken.length) break;
          await this.dispatch(next.taken);
          if (next.taken.length < DISPATCH_BATCH) break;
        }
      } while (this.again);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'task dispatch failed');
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Hands tasks taken from the fair queue (marked running there) to BullMQ: queued → running in
   * Postgres first, each with the id its run will have (one statement), then one job per task
   * carrying what its body runs, so an executor starts the body without a round trip to ask. A task
   * killed (or removed) since it was taken is not handed over and its slot is freed. Stopped between
   * the two writes, the reconciliation hands the jobs over (`reconcile`).
   */
  private async dispatch(tasks: readonly DispatchedTask[]): Promise<void> {
    const moved = new Map(
      (
        await this.repo.claimAll(
          tasks.map((t) => t.taskId),
          tasks.map(() => randomUUID()),
        )
      ).map((row) => [row.id, row]),
    );
    const rows = tasks.flatMap((t) => moved.get(t.taskId) ?? []);
    for (const t of tasks) if (!moved.has(t.taskId)) void this.undispatchable(t.taskId);
    if (!rows.length) return;
    // Running, whether or not the jobs get added now (else the reconciliation adds them).
    for (const row of rows) this.dispatched(row);
    await this.handOver(rows);
    const now = Date.now();
    for (const t of tasks) if (moved.has(t.taskId)) this.metrics.dispatched(t.priority, now - t.enqueuedAtMs);
  }

  /** One BullMQ job per task moved to running (the job id is the task id: adding one twice adds it once). */
  private async handOver(rows: readonly BgTaskRow[]): Promise<void> {
    await this.jobs.addBulk(
      rows.map((row) => ({
        name: 'task',
        data: {
          taskId: row.id,
          runId: row.runId ?? undefined,
          task: bodyOf(row),
        },
        opts: { jobId: row.id, removeOnComplete: true, removeOnFail: true },
      })),
    );
  }

  /**
   * A task taken from the fair queue that Postgres did not move to running: killed or removed since
   * (its slot is freed; a kill asked of a queued task ends it here), or already running (left as it is).
   */
  private async undispatchable(id: string): Promise<void> {
    try {
      const now = await this.repo.get(id);
      if (now?.state === 'running') return;
      // Not taken by the statement: the reconciliation hands it over.
      if (now?.state === 'queued' && !now.killRequested) return;
      // Killed while queued: it ends here, its slot freed.
      if (now?.state === 'queued' && (await this.endBeforeStart(id, now.ownerId, 'queued'))) return;
      await this.fair.finish(id);
      this.pumpSoon();
    } catch (err) {
      this.logger.warn(
        { taskId: id, err: (err as Error).message },
        'task not dispatched; the reconciliation repairs it',
      );
    }
  }

  /**
   * A scheduler replica killed between two writes leaves work half done: a task marked running in
   * Redis but still queued in Postgres, or moved to running with no BullMQ job (it would wait for
   * ever and hold a slot), a task ended in Postgres whose slot was never freed, a row written whose
   * admission never ran, a slot given to a task started at once whose row was never written. And a
   * body whose end never reached a scheduler leaves its task running with its run ended and its job
   * gone: it ends interrupted. Every replica repairs these; each repair is idempotent (moving to
   * running is one conditional statement; the job id is the task id) and never starts a body twice
   * (a job is handed over again only while no run of the task was written). Redis is read before
   * Postgres, so a task dispatched in between is not mistaken for an ended one; a slot taken at once
   * is freed for want of a row only once it is older than a submit's write; and a task running in
   * Postgres with no slot (a rebuild's or that guard's rare loss) gets one back, so it is handed over
   * or ended like the others.
   */
  async reconcile(): Promise<void> {
    try {
      if (!(await this.fair.isInitialised())) return; // the next tick rebuilds from Postgres
      const running = await this.fair.runningIds();
      const active = new Map((await this.repo.active()).map((t) => [t.id, t]));
      let repaired = 0;
      const taken: DispatchedTask[] = [];
      const jobless: string[] = [];
      // Ended (or removed) in Postgres: its slot is free. Unless it was started at once and its row
      // may still be on its way.
      repaired += await this.fair.finishRowless(
        running.filter((id) => !active.has(id)),
        STARTED_WRITE_GUARD_MS,
      );
      // Running in Postgres with no slot and no job (its slot lost to a rebuild that read Postgres
      // before the task's row was written, or freed while its row was on its way; its job never
      // added): nothing would ever run or end it. Its slot is held again if it is still so at the
      // next pass, and the passes after hand it over or end it. A task with a job is a body's, whose
      // end comes (and frees nothing twice); one whose end is being recorded right now still has its
      // job, and is ended by the next pass.
      const heldIds = new Set(running);
      const unheld = [...active.values()].filter((t) => t.state === 'running' && !heldIds.has(t.id));
      const confirmed: typeof unheld = [];
      for (const t of unheld) if (this.unheld.has(t.id) && !(await this.jobs.getJob(t.id))) confirmed.push(t);
      this.unheld = new Set(unheld.map((t) => t.id));
      repaired += await this.fair.hold(confirmed.map(entryOf));
      for (const id of running) {
        const t = active.get(id);
        if (!t) continue;
        if (!(await this.jobs.getJob(id))) {
          // Taken from the fair queue and never moved to running: dispatched again.
          if (t.state === 'queued') taken.push(entryOf(t));
          else jobless.push(id);
        }
      }
      if (taken.length) {
        await this.dispatch(taken);
        repaired += taken.length;
      }
      // Moved to running and its job never added (or lost with Redis's data): handed over again if
      // no body ever started it (no run written), or ended if it was killed meanwhile. A body that
      // ran is never started again.
      const unstarted = await this.repo.notStarted(jobless, UNSTARTED_AFTER_MS);
      for (const t of unstarted.filter((u) => u.killRequested))
        await this.endBeforeStart(t.id, t.ownerId, 'running');
      const handed = unstarted.filter((u) => !u.killRequested);
      if (handed.length) await this.handOver(handed);
      repaired += unstarted.length;
      // A body that ran and ended without its end recorded: without this, its task would run for
      // ever and keep its slot.
      for (const t of await this.repo.endUnreported(jobless, UNREPORTED_AFTER_MS)) {
        await this.fair.finish(t.id);
        this.ended({
          taskId: t.id,
          ownerId: t.ownerId,
          state: 'interrupted',
          error: t.error,
          fromWebhook: t.fromWebhook,
        });
        repaired++;
      }
      const cutoff = Date.now() - UNADMITTED_AFTER_MS;
      const queued = [...active.values()].filter(
        (t) => t.state === 'queued' && t.createdAt.getTime() < cutoff,
      );
      const held = await this.fair.holds(queued.map((t) => t.id));
      for (const [i, t] of queued.entries()) {
        if (held[i]) continue;
        const admitted = await this.fair.admit(t.id, t.ownerId, t.priority, t.createdAt.getTime());
        if (admitted.ok) repaired++;
      }
      if (repaired) {
        this.logger.warn({ repaired }, 'task queue repaired from Postgres (a replica stopped mid-way)');
        this.pumpSoon();
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'task queue reconciliation failed');
    }
  }

  // ── the body's side (executor → scheduler) ──────────────────────────────────────────────────

  async claim(id: string): Promise<ClaimResult> {
    return (await this.claimAll([id]))[0] as ClaimResult;
  }

  /**
   * Claims for bodies about to start, answered in their order: the tasks still queued (and not
   * killed) go running in one statement, with the run each body names (`runIds`, in the same
   * order); the rest are answered one by one as before (a task claimed before by a body that is
   * gone is interrupted, never replayed).
   */
  async claimAll(ids: readonly string[], runIds?: readonly string[]): Promise<ClaimResult[]> {
    const claimed = new Map((await this.repo.claimAll(ids, runIds)).map((row) => [row.id, row]));
    const answers: ClaimResult[] = [];
    for (const [i, id] of ids.entries()) {
      const row = claimed.get(id);
      // A task handed over twice in one batch: the first claim has it, the next is a second body.
      claimed.delete(id);
      if (!row) {
        answers.push(await this.refuseClaim(id, runIds?.[i]));
        continue;
      }
      this.dispatched(row);
      answers.push({ go: true, task: bodyOf(row) });
    }
    return answers;
  }

  private async refuseClaim(id: string, runId: string | undefined): Promise<ClaimResult> {
    const now = await this.repo.get(id);
    if (now?.state === 'running' && (await this.firstDelivery(id))) {
      // Dispatched (moved to running) by this version, claimed by an executor of the previous one
      // during a rolling upgrade: its first body, which runs under the run id it names; unless it
      // was killed meanwhile (it ends here, never started).
      if (now.killRequested) {
        await this.endBeforeStart(id, now.ownerId, 'running');
        return { go: false, reason: 'task was killed' };
      }
      if (runId) await this.repo.attachAll([{ id, runId }]);
      return { go: true, task: bodyOf(now) };
    }
    if (
      now?.state === 'queued' &&
      now.killRequested &&
      (await this.endBeforeStart(id, now.ownerId, 'queued'))
    )
      return { go: false, reason: `task is ${now.state}` };
    await this.fair.finish(id);
    this.pumpSoon();
    if (now?.state === 'running') {
      // Claimed before by an executor that is gone (BullMQ handed the job on): never replayed.
      const reason = TASK_BODY_STOPPED;
      if (await this.repo.interrupt(id, reason))
        this.ended({ taskId: id, ownerId: now.ownerId, state: 'interrupted', error: reason });
      return { go: false, reason: 'interrupted: its first body stopped' };
    }
    return { go: false, reason: now ? `task is ${now.state}` : 'no such task' };
  }

  /** Whether the task's BullMQ job is on its first delivery (BullMQ counts each start of a job). */
  private async firstDelivery(id: string): Promise<boolean> {
    const job = await this.jobs.getJob(id);
    return job !== undefined && job.attemptsStarted <= 1;
  }

  /**
   * A task no body started ends cancelled by its kill: queued, or running with its job taken back (or
   * never taken). Its slot is freed (freeing is idempotent).
   */
  private async endBeforeStart(
    id: string,
    ownerId: string,
    state: 'queued' | 'running',
  ): Promise<BgTaskRow | null> {
    const row = await this.repo.cancelBeforeStart(id, state);
    if (!row) return null;
    await this.fair.finish(id);
    this.pumpSoon();
    this.ended({ taskId: id, ownerId, state: 'cancelled', error: row.error });
    return row;
  }

  /** A task ended here: its transition is told, and its owner's finished tasks are pruned soon. */
  private ended(t: TaskTransition): void {
    this.transitions.emit(t);
    this.toPrune.add(t.ownerId);
  }

  /** Takes a dispatched task's job back from BullMQ: false once a worker holds it (or it is gone). */
  private async takeBack(id: string): Promise<boolean> {
    const job = await this.jobs.getJob(id);
    if (!job) return false;
    try {
      await job.remove(); // refused while a worker holds the job
      return true;
    } catch {
      return false;
    }
  }

  async attach(id: string, runId: string): Promise<{ cancel: boolean }> {
    return (await this.attachAll([{ id, runId }]))[0] as { cancel: boolean };
  }

  /**
   * Records the runs of bodies, in their order: cancel when the task is no longer running or a kill
   * was asked. Only executors of the previous version attach (a body names its run in its claim now).
   */
  async attachAll(runs: ReadonlyArray<{ id: string; runId: string }>): Promise<Array<{ cancel: boolean }>> {
    const attached = await this.repo.attachAll(runs);
    return runs.map((r) => {
      const row = attached.get(r.id);
      return { cancel: !row || row.killRequested };
    });
  }

  async finish(f: FinishTask): Promise<void> {
    await this.finishAll([f]);
  }

  /** Records how bodies ended (each once), frees their slots and dispatches what they make room for. */
  async finishAll(reports: readonly FinishTask[]): Promise<void> {
    const ends = reports.map((f): TaskEnd => {
      const json = JSON.stringify(f.output ?? null);
      const cut = json.length > OUTPUT_LIMIT;
      return {
        id: f.id,
        state: f.state,
        runId: f.runId,
        output: cut ? json.slice(0, OUTPUT_LIMIT) : (f.output ?? null),
        outputTruncated: cut || f.outputTruncated === true,
        error: f.error,
      };
    });
    // The bodies have stopped: their slots are freed (and what waits for them dispatched) while the
    // ends are recorded, not after; the next bodies no longer wait for this statement. Freeing is
    // idempotent (a slot already free is left alone), so a report retried after the statement failed
    // frees nothing twice, and the reconciliation re-admits only queued tasks, never a running one
    // whose slot is free. A slot not freed because this replica stopped, the reconciliation frees.
    void this.freeSlots(reports.map((f) => f.id));
    const ended = await this.repo.finish(ends);
    const byId = new Map(reports.map((f) => [f.id, f]));
    for (const row of ended) {
      const f = byId.get(row.id);
      if (!f) continue;
      this.ended({
        taskId: f.id,
        ownerId: row.ownerId,
        state: f.state,
        error: f.error,
        fromWebhook: row.fromWebhook,
      });
      this.logger.info({ taskId: f.id, state: f.state, runId: f.runId }, 'task finished');
    }
  }

  /** Frees the slots of ended tasks and takes what waits for them in one call; what more fits, the pump takes. */
  private async freeSlots(ids: readonly string[]): Promise<void> {
    try {
      const next = await this.fair.take(DISPATCH_BATCH, { requireInitialised: true, finishing: ids });
      if (next && !next.waiting) this.startAtOnce = true;
      // What was taken and not handed over, the reconciliation hands over.
      if (next?.taken.length) await this.dispatch(next.taken);
      if (next === null || next.taken.length === DISPATCH_BATCH) this.pumpSoon();
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message },
        'task slots not freed yet; the reconciliation frees them',
      );
    }
  }

  /** Keeps KEPT_FINISHED_TASKS finished tasks per owner whose tasks ended since the last prune. */
  private async prune(): Promise<void> {
    if (!this.toPrune.size) return;
    const owners = [...this.toPrune];
    this.toPrune.clear();
    try {
      await this.repo.prune(owners);
    } catch (err) {
      for (const o of owners) this.toPrune.add(o);
      this.logger.warn({ err: (err as Error).message }, 'finished tasks not pruned yet');
    }
  }

  // ── the owner's side ────────────────────────────────────────────────────────────────────────

  async kill(id: string, ctx: CallContext): Promise<Task> {
    const ownerId = ownerOf(ctx);
    const before = await this.repo.getVisible(id, ownerId);
    const row = await this.repo.kill(id, ownerId);
    if (before.state === 'queued' && row.state === 'cancelled') {
      // Not dispatched yet: its queue slot is free now. Being dispatched: the dispatch skips it and
      // frees its slot.
      if (await this.fair.remove(id))
        this.metrics.cancelledWhileQueued(Date.now() - before.createdAt.getTime());
      this.ended({ taskId: id, ownerId, state: 'cancelled', error: row.error });
      return toTask(row);
    }
    // Dispatched, its job still waiting for a body: taken back, and the task ends here.
    if (row.state === 'running' && (await this.takeBack(id))) {
      const cancelled = await this.endBeforeStart(id, ownerId, 'running');
      if (cancelled) return toTask(cancelled);
    }
    // A body has it (or is about to): the executor running it cancels its run. A job lost with
    // Redis's data is not handed over again once its task was killed (`reconcile`).
    if (row.state === 'running' || row.state === 'queued') this.bus.emit(Events.taskKill, { id });
    return toTask(row);
  }

  async get(id: string, ctx: CallContext): Promise<Task> {
    return toTask(await this.repo.getVisible(id, ownerOf(ctx)));
  }

  async list(q: TaskListQuery, ctx: CallContext): Promise<TaskPage> {
    const page = await this.repo.list(ownerOf(ctx), q);
    const now = Date.now();
    return { items: page.items.map((r) => toTask(r, now)), nextCursor: page.nextCursor };
  }

  async capacity(ctx: CallContext): Promise<TaskCapacity> {
    const ownerId = ownerOf(ctx);
    const c = await this.fair.capacity(ownerId);
    const l = c.limits;
    const own = c.owner ?? {
      queued: 0,
      running: 0,
      queuedByPriority: { interactive: 0, normal: 0, batch: 0 },
    };
    const waits = Object.values(c.oldestWaitMs).filter((w): w is number => w !== null);
    return {
      policy: 'owner-round-robin-weighted-priority',
      weights: { ...WEIGHTS },
      running: c.running,
      runningLimit: l.running,
      queued: c.queued,
      globalQueueLimit: l.globalQueue,
      queuedByPriority: c.queuedByPriority,
      batchGlobalLimit: l.batchGlobal,
      nonInteractiveGlobalLimit: l.nonInteractiveGlobal,
      activeOwners: c.activeOwners,
      saturated: c.running >= l.running && c.queued >= l.globalQueue,
      oldestQueueWaitMs: waits.length ? Math.max(...waits) : null,
      oldestInteractiveQueueWaitMs: c.oldestWaitMs.interactive,
      oldestNormalQueueWaitMs: c.oldestWaitMs.normal,
      oldestBatchQueueWaitMs: c.oldestWaitMs.batch,
      owner: {
        queued: own.queued,
        running: own.running,
        queuedByPriority: own.queuedByPriority,
        ownerQueueLimit: l.ownerQueue,
        ownedQueueAvailable: Math.max(0, l.ownerQueue - own.queued),
        batchOwnerLimit: l.batchOwner,
        nonInteractiveOwnerLimit: l.nonInteractiveOwner,
        ownerSaturated: own.queued >= l.ownerQueue,
      },
    };
  }
}
