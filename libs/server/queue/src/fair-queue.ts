import type { Redis } from 'ioredis';
import {
  admitScript,
  capacityScript,
  finishRowlessScript,
  finishScript,
  holdScript,
  nextScript,
  rebuildScript,
  removeScript,
  startScript,
} from './fair-queue.scripts';

export const PRIORITIES = ['interactive', 'normal', 'batch'] as const;
export type Priority = (typeof PRIORITIES)[number];

export interface FairQueueLimits {
  /** Task bodies running at once, across all replicas. */
  running: number;
  /** Tasks waiting, all owners. */
  globalQueue: number;
  /** Tasks waiting per owner: one racing producer cannot take every global slot. */
  ownerQueue: number;
  /** Waiting batch work, per owner and globally. */
  batchOwner: number;
  batchGlobal: number;
  /** Waiting batch + normal work; what is left of the queue stays for interactive work. */
  nonInteractiveOwner: number;
  nonInteractiveGlobal: number;
}

export const DEFAULT_LIMITS: FairQueueLimits = Object.freeze({
  running: 16,
  globalQueue: 128,
  ownerQueue: 32,
  batchOwner: 16,
  batchGlobal: 64,
  nonInteractiveOwner: 24,
  nonInteractiveGlobal: 96,
});

export type PriorityWeights = Record<Priority, number>;

export const DEFAULT_WEIGHTS: PriorityWeights = Object.freeze({ interactive: 4, normal: 2, batch: 1 });

export type CapacityScope = 'owner' | 'global' | 'owner-priority' | 'global-priority';

export type AdmitResult =
  { ok: true } | { ok: false; scope: CapacityScope; priority?: Priority; message: string };

export interface AdmitEntry {
  taskId: string;
  ownerId: string;
  priority: Priority;
  enqueuedAtMs: number;
}

export interface DispatchedTask {
  taskId: string;
  ownerId: string;
  priority: Priority;
  enqueuedAtMs: number;
}

export interface FairQueueCapacity {
  running: number;
  queued: number;
  queuedByPriority: Record<Priority, number>;
  /** How long the oldest waiting task of each class has waited; null when none waits. */
  oldestWaitMs: Record<Priority, number | null>;
  owner?: { queued: number; running: number; queuedByPriority: Record<Priority, number> };
  /** Owners with tasks waiting or running. */
  activeOwners: number;
  limits: FairQueueLimits;
}

export interface FairQueueEntry extends DispatchedTask {
  running: boolean;
}

export interface FairQueueOptions {
  /** Every key lives under it, e.g. `sy:stack:fq` (a `:` is added unless it ends in `:` or `.`). */
  prefix: string;
  limits?: Partial<FairQueueLimits>;
  /** Turns per class in each owner's cycle; 4:2:1 by default. */
  weights?: PriorityWeights;
}

const MAX_CYCLE = 64;

/** One sentence per queue limit, naming it; the admit script answers with the limit's name. */
const REFUSALS: Record<
  Exclude<keyof FairQueueLimits, 'running'>,
  (waiting: number, limit: number) => string
> = {
  ownerQueue: (waiting, limit) =>
    `This owner already has ${waiting} tasks waiting; the per-owner queue limit is ${limit}.`,
  globalQueue: (waiting, limit) =>
    `The global queue already holds ${waiting} waiting tasks; the global queue limit is ${limit}.`,
  batchOwner: (waiting, limit) =>
    `This owner already has ${waiting} batch tasks waiting; batch work may hold at most ${limit} of an owner's queue slots.`,
  batchGlobal: (waiting, limit) =>
    `The global queue already holds ${waiting} waiting batch tasks; batch work may hold at most ${limit} global queue slots.`,
  nonInteractiveOwner: (waiting, limit) =>
    `This owner already has ${waiting} normal and batch tasks waiting; they may hold at most ${limit} of an owner's queue slots, the rest stays for interactive work.`,
  nonInteractiveGlobal: (waiting, limit) =>
    `The global queue already holds ${waiting} waiting normal and batch tasks; they may hold at most ${limit} global queue slots, the rest stays for interactive work.`,
};
const CYCLE_LETTER: Record<Priority, string> = { interactive: 'i', normal: 'n', batch: 'b' };

/**
 * Spreads the weights over one cycle (smooth weighted round robin), so 4:2:1 becomes
 * interactive, normal, interactive, batch, interactive, normal, interactive rather than four in a row.
 */
export function priorityCycle(weights: PriorityWeights = DEFAULT_WEIGHTS): Priority[] {
  for (const p of PRIORITIES) {
    if (!Number.isInteger(weights[p]) || weights[p] < 1) {
      throw new Error(`weight for ${p} must be a positive integer, got ${weights[p]}`);
    }
  }
  const total = PRIORITIES.reduce((sum, p) => sum + weights[p], 0);
  if (total > MAX_CYCLE)
    throw new Error(`weights add up to ${total}; at most ${MAX_CYCLE} keep a turn cheap`);
  const current: Record<Priority, number> = { interactive: 0, normal: 0, batch: 0 };
  const cycle: Priority[] = [];
  for (let i = 0; i < total; i++) {
    let best: Priority = 'interactive';
    for (const p of PRIORITIES) {
      current[p] += weights[p];
      if (current[p] > current[best]) best = p;
    }
    current[best] -= total;
    cycle.push(best);
  }
  return cycle;
}

function checkLimits(limits: FairQueueLimits): FairQueueLimits {
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new Error(`queue limit ${name} must be a non-negative integer, got ${value}`);
    }
  }
  return Object.freeze({ ...limits });
}

/**
 * Admission and dispatch for background tasks, shared by every scheduler replica through Redis.
 *
 * Each operation is one Lua script, so racing producers and replicas see each other's effects in order
 * and no limit can be overshot. Waiting tasks sit in one FIFO list per owner and priority; owners that
 * have work waiting take turns through a ring, and each owner walks its own weighted cycle of classes,
 * skipping a class with nothing waiting. Only the queue state is kept here: the task itself, its inputs
 * and its outcome belong to the caller's store, which `rebuild` reloads from after Redis lost its data.
 */
export class FairQueue {
  readonly limits: FairQueueLimits;
  readonly cycle: readonly Priority[];
  private readonly prefix: string;
  private readonly cycleLetters: string;

  constructor(
    private readonly redis: Redis,
    opts: FairQueueOptions,
  ) {
    if (!opts.prefix) throw new Error('FairQueue needs a key prefix');
    this.prefix = /[:.]$/.test(opts.prefix) ? opts.prefix : `${opts.prefix}:`;
    this.limits = checkLimits({ ...DEFAULT_LIMITS, ...opts.limits });
    this.cycle = Object.freeze(priorityCycle(opts.weights));
    this.cycleLetters = this.cycle.map((p) => CYCLE_LETTER[p]).join('');
  }

  /**
   * Checks every queue limit and enqueues the task, atomically. Admitting a task that is already
   * queued or running answers ok without a second copy (a retried producer); once `finish` or `remove`
   * forgot it, the id is new again.
   */
  async admit(
    taskId: string,
    ownerId: string,
    priority: Priority,
    enqueuedAtMs: number,
  ): Promise<AdmitResult> {
    return (await this.admitAll([{ taskId, ownerId, priority, enqueuedAtMs }]))[0] as AdmitResult;
  }

  /** Admits several tasks in one round trip, answered in their order: as many `admit` calls would. */
  async admitAll(tasks: readonly AdmitEntry[]): Promise<AdmitResult[]> {
    return (await this.admitBatch(tasks)).results;
  }

  /** `admitAll`, and how many running slots were free once they were admitted. */
  async admitBatch(tasks: readonly AdmitEntry[]): Promise<{ results: AdmitResult[]; freeSlots: number }> {
    if (!tasks.length) return { results: [], freeSlots: 0 };
    const l = this.limits;
    const args: Array<string | number> = [
      this.prefix,
      l.ownerQueue,
      l.globalQueue,
      l.batchOwner,
      l.batchGlobal,
      l.nonInteractiveOwner,
      l.nonInteractiveGlobal,
      l.running,
      ...entryArgs(tasks),
    ];
    const replies = await admitScript.run(this.redis, args);
    if (!Array.isArray(replies) || replies.length !== tasks.length + 1)
      throw new Error(`unexpected reply from Redis: ${String(replies)}`);
    const freeSlots = Number(replies.pop());
    const results = replies.map((r): AdmitResult => {
      const reply = strings(r);
      if (reply[0] === 'ok') return { ok: true };
      const [scope, refusedPriority, waiting, limitName] = reply as [
        CapacityScope,
        Priority | '',
        string,
        keyof typeof REFUSALS,
      ];
      const message = REFUSALS[limitName](Number(waiting), l[limitName]);
      return refusedPriority
        ? { ok: false, scope, priority: refusedPriority, message }
        : { ok: false, scope, message };
    });
    return { results, freeSlots };
  }

  /**
   * Starts tasks at once, without queueing them, while nothing waits and a running slot is free: in
   * one round trip, answered in their order (true: marked running as `next` marks it, `enqueuedAtMs`
   * its start). A task not started is left alone: the caller admits it. Nothing is started before the
   * state is built (see `isInitialised`), nor twice (a task the queue holds is not started again).
   */
  async startAll(tasks: readonly AdmitEntry[]): Promise<boolean[]> {
    if (!tasks.length) return [];
    const replies = strings(
      await startScript.run(this.redis, [this.prefix, this.limits.running, ...entryArgs(tasks)]),
    );
    if (replies.length !== tasks.length) throw new Error(`unexpected reply from Redis: ${replies.join(',')}`);
    return replies.map((r) => r === '1');
  }

  /**
   * Holds a running slot for each task the queue does not hold at all, with no limit checked: tasks
   * the caller's store says run (their slot lost to a rebuild, or freed while their row was being
   * written). Returns how many slots it took.
   */
  async hold(tasks: readonly AdmitEntry[]): Promise<number> {
    if (!tasks.length) return 0;
    return Number(await holdScript.run(this.redis, [this.prefix, ...entryArgs(tasks)]));
  }

  /**
   * Frees the slots of running tasks the caller's store no longer holds (ended, removed, or never
   * written), as `finish` does; except a slot `startAll` took less than `guardMs` ago by Redis's
   * clock, whose row may still be on its way. Returns how many slots it freed.
   */
  async finishRowless(taskIds: readonly string[], guardMs: number): Promise<number> {
    if (!taskIds.length) return 0;
    return Number(await finishRowlessScript.run(this.redis, [this.prefix, Math.trunc(guardMs), ...taskIds]));
  }

  /**
   * The next task to run, now marked running; null when `running` tasks already run or nothing waits.
   * The caller starts its body and calls `finish` when it ends, whatever the outcome.
   */
  async next(): Promise<DispatchedTask | null> {
    return (await this.nextBatch(1))?.[0] ?? null;
  }

  /**
   * Up to `most` next tasks, in the order as many `next` calls would give them: one round trip.
   * With `requireInitialised`, null when the queue state was never built or was lost (see
   * `isInitialised`), and nothing is taken. `finishing`: tasks whose slots are freed first, as
   * `finish` frees them (an end and the starts it makes room for in one call).
   */
  async nextBatch(
    most: number,
    opts: { requireInitialised?: boolean; finishing?: readonly string[] } = {},
  ): Promise<DispatchedTask[] | null> {
    return (await this.take(most, opts))?.taken ?? null;
  }

  /** `nextBatch`, and how many tasks still wait once these were taken (0: a task may `start` at once). */
  async take(
    most: number,
    opts: { requireInitialised?: boolean; finishing?: readonly string[] } = {},
  ): Promise<{ taken: DispatchedTask[]; waiting: number } | null> {
    const reply = strings(
      await nextScript.run(this.redis, [
        this.prefix,
        this.limits.running,
        this.cycleLetters,
        most,
        opts.requireInitialised ? '1' : '0',
        ...(opts.finishing ?? []),
      ]),
    );
    if (reply[0] === 'uninitialised') return null;
    const taken: DispatchedTask[] = [];
    for (let i = 0; i + 3 < reply.length; i += 4) {
      const [taskId, ownerId, priority, enqueuedAt] = reply.slice(i, i + 4) as [
        string,
        string,
        string,
        string,
      ];
      taken.push({ taskId, ownerId, priority: priority as Priority, enqueuedAtMs: Number(enqueuedAt) });
    }
    return { taken, waiting: Number(reply[reply.length - 1]) };
  }

  /** Frees the running slots of tasks; a task that is not running (finished already, queued) is left alone. */
  async finish(...taskIds: string[]): Promise<void> {
    if (taskIds.length) await finishScript.run(this.redis, [this.prefix, ...taskIds]);
  }

  /** The ids of every task marked running (for a reconciliation against the caller's store). */
  async runningIds(): Promise<string[]> {
    return this.redis.smembers(`${this.prefix}running`);
  }

  /** Which of `taskIds` the queue holds (waiting or running), in order. */
  async holds(taskIds: readonly string[]): Promise<boolean[]> {
    if (!taskIds.length) return [];
    const replies = await this.redis
      .pipeline(taskIds.map((id) => ['exists', `${this.prefix}t:${id}`]))
      .exec();
    return (replies ?? []).map(([err, n]) => {
      if (err) throw err;
      return n === 1;
    });
  }

  /** Takes a waiting task out before it starts, freeing its queue slot; false if it was not waiting. */
  async remove(taskId: string): Promise<boolean> {
    return (await removeScript.run(this.redis, [this.prefix, taskId])) === 1;
  }

  /** Global figures, and the given owner's own share when asked. One consistent snapshot. */
  async capacity(ownerId?: string): Promise<FairQueueCapacity> {
    const reply = (await capacityScript.run(this.redis, [this.prefix, ownerId ?? ''])) as Array<
      number | string
    >;
    const now = Date.now();
    const byPriority = (offset: number) =>
      Object.fromEntries(PRIORITIES.map((p, i) => [p, Number(reply[offset + i])])) as Record<
        Priority,
        number
      >;
    const queuedByPriority = byPriority(1);
    const oldestWaitMs = Object.fromEntries(
      PRIORITIES.map((p, i) => {
        const oldest = reply[4 + i];
        return [p, oldest === '' ? null : Math.max(0, now - Number(oldest))];
      }),
    ) as Record<Priority, number | null>;
    const capacity: FairQueueCapacity = {
      running: Number(reply[0]),
      queued: sum(queuedByPriority),
      queuedByPriority,
      oldestWaitMs,
      activeOwners: Number(reply[7]),
      limits: this.limits,
    };
    if (ownerId !== undefined) {
      const ownerQueued = byPriority(8);
      capacity.owner = {
        queued: sum(ownerQueued),
        running: Number(reply[11]),
        queuedByPriority: ownerQueued,
      };
    }
    return capacity;
  }

  /**
   * Replaces all queue state with the given tasks, from the source of truth, after Redis lost its data
   * (or at startup). Waiting tasks keep FIFO by enqueuedAtMs within each owner and class; running tasks
   * hold their slots until `finish`. Limits are not applied: these tasks were already accepted. Admits
   * that race a rebuild and are not yet in `entries` are dropped, so the caller keeps submits out while
   * it reads its store and rebuilds.
   */
  async rebuild(entries: ReadonlyArray<FairQueueEntry>): Promise<void> {
    const ordered = entries
      .map((e, i) => ({ e, i }))
      .sort((a, b) => a.e.enqueuedAtMs - b.e.enqueuedAtMs || a.i - b.i)
      .map(({ e }) => e);
    const args: Array<string | number> = [this.prefix];
    for (const e of ordered) {
      requireId('taskId', e.taskId);
      requireId('ownerId', e.ownerId);
      requirePriority(e.priority);
      args.push(e.taskId, e.ownerId, e.priority, Math.trunc(e.enqueuedAtMs), e.running ? '1' : '0');
    }
    await rebuildScript.run(this.redis, args);
  }

  /**
   * False when the queue state was never built or Redis lost it (a flush, a restart without persistence):
   * the caller then calls `rebuild` from its store. Only `rebuild` sets the marker; an admit into an empty
   * Redis does not, or a producer racing the flush would hide the loss and the tasks queued before it.
   */
  async isInitialised(): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}init`)) === 1;
  }
}

function sum(counts: Record<Priority, number>): number {
  return counts.interactive + counts.normal + counts.batch;
}

function strings(reply: unknown): string[] {
  if (!Array.isArray(reply)) throw new Error(`unexpected reply from Redis: ${String(reply)}`);
  return reply.map((v) => String(v));
}

/** Four script arguments per task (id, owner, priority, enqueuedAtMs), each checked first. */
function entryArgs(tasks: readonly AdmitEntry[]): Array<string | number> {
  return tasks.flatMap((t) => {
    requireId('taskId', t.taskId);
    requireId('ownerId', t.ownerId);
    requirePriority(t.priority);
    if (!Number.isFinite(t.enqueuedAtMs))
      throw new Error(`enqueuedAtMs must be a number, got ${t.enqueuedAtMs}`);
    return [t.taskId, t.ownerId, t.priority, Math.trunc(t.enqueuedAtMs)];
  });
}

function requireId(name: string, value: string): void {
  if (typeof value !== 'string' || value === '') throw new Error(`${name} must be a non-empty string`);
}

function requirePriority(priority: string): asserts priority is Priority {
  if (!(PRIORITIES as readonly string[]).includes(priority)) throw new Error(`unknown priority ${priority}`);
}
