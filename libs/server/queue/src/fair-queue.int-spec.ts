import { uniquePrefix } from '@switchyard/testing';
import {
  FairQueue,
  PRIORITIES,
  type AdmitResult,
  type DispatchedTask,
  type FairQueueEntry,
  type FairQueueLimits,
  type Priority,
} from './fair-queue';
import { createRedis, type Redis } from './redis';

const REDIS_URL = 'redis://127.0.0.1:6379';
// The flush test empties this logical database (FLUSHDB, never FLUSHALL, which would empty all of them).
const FLUSH_DB = 13;

async function connect(name: string, db = 0): Promise<Redis> {
  const redis = createRedis({ url: `${REDIS_URL}/${db}`, name });
  await redis.connect();
  return redis;
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** Deterministic "random" priorities, so a failure can be replayed. */
function seededRandom(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick(r: number, shares: Record<Priority, number>): Priority {
  let acc = 0;
  for (const p of PRIORITIES) {
    acc += shares[p];
    if (r < acc) return p;
  }
  return 'interactive';
}

function refused(result: AdmitResult) {
  if (result.ok) throw new Error('expected a refusal');
  return result;
}

describe('FairQueue (real Redis)', () => {
  let redis: Redis;
  let prefix: string;
  let seq = 0;
  const t0 = Date.now() - 60_000;

  const queue = (limits?: Partial<FairQueueLimits>, on = redis) => new FairQueue(on, { prefix, limits });
  /** Admits `count` tasks of one owner and class; enqueuedAtMs increases with every task admitted. */
  async function admitMany(
    q: FairQueue,
    owner: string,
    priority: Priority,
    count: number,
  ): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const id = `${owner}-${priority[0]}${i}-${seq}`;
      expect(await q.admit(id, owner, priority, t0 + seq++)).toEqual({ ok: true });
      ids.push(id);
    }
    return ids;
  }
  async function dispatch(q: FairQueue, count: number): Promise<DispatchedTask[]> {
    const out: DispatchedTask[] = [];
    for (let i = 0; i < count; i++) {
      const task = await q.next();
      if (!task) throw new Error(`nothing to dispatch after ${i}`);
      out.push(task);
    }
    return out;
  }

  beforeAll(async () => {
    redis = await connect('fair-queue-test');
  });

  beforeEach(() => {
    prefix = uniquePrefix('fq');
  });

  afterEach(async () => {
    await deleteKeys(redis, prefix);
  });

  afterAll(async () => {
    await redis.quit();
  });

  describe('admission', () => {
    it('refuses at each seed limit in order, with the scope and a sentence naming the limit', async () => {
      const q = queue();
      await admitMany(q, 'A', 'batch', 16);
      expect(await q.admit('a-b16', 'A', 'batch', t0)).toEqual({
        ok: false,
        scope: 'owner-priority',
        priority: 'batch',
        message:
          "This owner already has 16 batch tasks waiting; batch work may hold at most 16 of an owner's queue slots.",
      });
      await admitMany(q, 'A', 'normal', 8);
      expect(await q.admit('a-n8', 'A', 'normal', t0)).toEqual({
        ok: false,
        scope: 'owner-priority',
        priority: 'normal',
        message:
          "This owner already has 24 normal and batch tasks waiting; they may hold at most 24 of an owner's queue slots, the rest stays for interactive work.",
      });
      await admitMany(q, 'A', 'interactive', 8);
      // The owner limit is checked first, whatever the class.
      for (const p of PRIORITIES) {
        expect(await q.admit(`a-${p}-over`, 'A', p, t0)).toEqual({
          ok: false,
          scope: 'owner',
          message: 'This owner already has 32 tasks waiting; the per-owner queue limit is 32.',
        });
      }

      for (const owner of ['B', 'C', 'D']) {
        await Promise.all([
          admitMany(q, owner, 'batch', 16),
          admitMany(q, owner, 'normal', 8),
          admitMany(q, owner, 'interactive', 8),
        ]);
      }
      expect(await q.admit('e-1', 'E', 'interactive', t0)).toEqual({
        ok: false,
        scope: 'global',
        message: 'The global queue already holds 128 waiting tasks; the global queue limit is 128.',
      });
      const capacity = await q.capacity('E');
      expect(capacity).toMatchObject({
        queued: 128,
        running: 0,
        queuedByPriority: { interactive: 32, normal: 32, batch: 64 },
        activeOwners: 4,
        owner: { queued: 0, running: 0, queuedByPriority: { interactive: 0, normal: 0, batch: 0 } },
      });
    });

    it('applies configured limits, including the global reservations', async () => {
      const q = queue({
        globalQueue: 10,
        ownerQueue: 6,
        batchOwner: 2,
        batchGlobal: 3,
        nonInteractiveOwner: 4,
        nonInteractiveGlobal: 5,
      });
      await admitMany(q, 'A', 'batch', 2);
      expect(refused(await q.admit('a-b', 'A', 'batch', t0))).toMatchObject({
        scope: 'owner-priority',
        priority: 'batch',
        message: expect.stringContaining('at most 2 of an owner'),
      });
      await admitMany(q, 'B', 'batch', 1);
      expect(await q.admit('b-b', 'B', 'batch', t0)).toEqual({
        ok: false,
        scope: 'global-priority',
        priority: 'batch',
        message:
          'The global queue already holds 3 waiting batch tasks; batch work may hold at most 3 global queue slots.',
      });
      await admitMany(q, 'A', 'normal', 2);
      expect(refused(await q.admit('a-n', 'A', 'normal', t0))).toMatchObject({
        scope: 'owner-priority',
        priority: 'normal',
        message: expect.stringContaining('4 normal and batch tasks waiting'),
      });
      expect(await q.admit('b-n', 'B', 'normal', t0)).toEqual({
        ok: false,
        scope: 'global-priority',
        priority: 'normal',
        message:
          'The global queue already holds 5 waiting normal and batch tasks; they may hold at most 5 global queue slots, the rest stays for interactive work.',
      });
      await admitMany(q, 'A', 'interactive', 2);
      expect(refused(await q.admit('a-i', 'A', 'interactive', t0))).toMatchObject({
        scope: 'owner',
        message: expect.stringContaining('limit is 6'),
      });
      await admitMany(q, 'C', 'interactive', 3);
      expect(refused(await q.admit('d-i', 'D', 'interactive', t0))).toMatchObject({
        scope: 'global',
        message: expect.stringContaining('limit is 10'),
      });
      expect((await q.capacity()).queued).toBe(10);
    });

    it('counts waiting tasks only: a dispatched task frees its queue slot', async () => {
      const q = queue({ ownerQueue: 2 });
      await admitMany(q, 'A', 'normal', 2);
      expect(refused(await q.admit('a-3', 'A', 'normal', t0)).scope).toBe('owner');
      await q.next();
      expect(await q.admit('a-3', 'A', 'normal', t0)).toEqual({ ok: true });
      expect(await q.capacity('A')).toMatchObject({
        queued: 2,
        running: 1,
        owner: { queued: 2, running: 1 },
      });
    });

    it('admits the same task once, however often it is retried', async () => {
      const q = queue({ ownerQueue: 1 });
      expect(await q.admit('t1', 'A', 'normal', t0)).toEqual({ ok: true });
      expect(await q.admit('t1', 'A', 'normal', t0)).toEqual({ ok: true });
      expect((await q.capacity()).queued).toBe(1);
      expect((await q.next())?.taskId).toBe('t1');
      expect(await q.admit('t1', 'A', 'normal', t0)).toEqual({ ok: true });
      expect(await q.capacity()).toMatchObject({ queued: 0, running: 1 });
      expect(await q.next()).toBeNull();
    });

    it('never lets racing producers on several connections exceed a limit', async () => {
      const connections = await Promise.all([1, 2, 3, 4].map((i) => connect(`fair-queue-race-${i}`)));
      try {
        const replicas = connections.map((c) => queue(undefined, c));
        const random = seededRandom(7);
        const attempts = Array.from({ length: 20 }, (_, o) =>
          Array.from({ length: 30 }, (_, i) => ({
            taskId: `race-${o}-${i}`,
            ownerId: `owner-${o}`,
            // Mostly batch and normal, so the reservations are contended as well as the queues.
            priority: pick(random(), { batch: 0.55, normal: 0.3, interactive: 0.15 }),
          })),
        ).flat();
        const results = await Promise.all(
          attempts.map((a, i) =>
            replicas[i % replicas.length].admit(a.taskId, a.ownerId, a.priority, t0 + i),
          ),
        );

        const admitted = attempts.filter((_, i) => results[i].ok);
        for (const r of results) {
          if (!r.ok) {
            expect(['owner', 'global', 'owner-priority', 'global-priority']).toContain(r.scope);
            expect(r.message).toMatch(/\.$/);
          }
        }
        // Which limit refuses a given attempt depends on how the race interleaves (an owner's
        // reservation may or may not fill before the global one): only that some are admitted and,
        // with 600 attempts for 128 places, that the global queue refuses some, is certain.
        const scopes = new Set(results.map((r) => (r.ok ? 'ok' : r.scope)));
        expect(scopes.has('ok')).toBe(true);
        expect([...scopes].some((x) => x.startsWith('global'))).toBe(true);

        const capacity = await replicas[0].capacity();
        // Interactive attempts alone exceed 128, so the global queue ends exactly full.
        expect(capacity.queued).toBe(128);
        expect(admitted).toHaveLength(capacity.queued);
        expect(capacity.queuedByPriority.batch).toBeLessThanOrEqual(64);
        expect(capacity.queuedByPriority.batch + capacity.queuedByPriority.normal).toBeLessThanOrEqual(96);
        for (const p of PRIORITIES) {
          expect(capacity.queuedByPriority[p]).toBe(admitted.filter((a) => a.priority === p).length);
        }
        let ownersQueued = 0;
        for (let o = 0; o < 20; o++) {
          const owner = (await replicas[o % 4].capacity(`owner-${o}`)).owner;
          if (!owner) throw new Error('owner share missing');
          expect(owner.queued).toBeLessThanOrEqual(32);
          expect(owner.queuedByPriority.batch).toBeLessThanOrEqual(16);
          expect(owner.queuedByPriority.batch + owner.queuedByPriority.normal).toBeLessThanOrEqual(24);
          expect(owner.queued).toBe(admitted.filter((a) => a.ownerId === `owner-${o}`).length);
          ownersQueued += owner.queued;
        }
        expect(ownersQueued).toBe(128);

        // Replicas racing to dispatch never run more than `running` at once, nor one task twice.
        const dispatched = (
          await Promise.all(Array.from({ length: 40 }, (_, i) => replicas[i % 4].next()))
        ).filter((t): t is DispatchedTask => t !== null);
        expect(dispatched).toHaveLength(16);
        expect(new Set(dispatched.map((t) => t.taskId)).size).toBe(16);
        expect(await replicas[1].capacity()).toMatchObject({ running: 16, queued: 112 });
      } finally {
        await Promise.all(connections.map((c) => c.quit()));
      }
    });
  });

  describe('dispatch order', () => {
    it('takes owners in turn: A flooding batch cannot hold back B and C', async () => {
      const q = queue({ running: 100 });
      const a = await admitMany(q, 'A', 'batch', 16);
      for (let i = 16; i < 32; i++) {
        expect(refused(await q.admit(`A-flood-${i}`, 'A', 'batch', t0))).toMatchObject({
          scope: 'owner-priority',
          priority: 'batch',
        });
      }
      const b = await admitMany(q, 'B', 'normal', 3);
      const c = await admitMany(q, 'C', 'interactive', 3);

      const order = await dispatch(q, 22);
      expect(order.slice(0, 9).map((t) => t.taskId)).toEqual([
        a[0],
        b[0],
        c[0],
        a[1],
        b[1],
        c[1],
        a[2],
        b[2],
        c[2],
      ]);
      // B and C are empty now: A takes every turn, still in FIFO order.
      expect(order.slice(9).map((t) => t.taskId)).toEqual(a.slice(3));
      expect(order[0]).toEqual({
        taskId: a[0],
        ownerId: 'A',
        priority: 'batch',
        enqueuedAtMs: expect.any(Number),
      });
      expect(await q.next()).toBeNull();
    });

    it('walks 4:2:1 within an owner, FIFO per class, and skips a class with nothing waiting', async () => {
      const q = queue({ running: 100 });
      const batch = await admitMany(q, 'A', 'batch', 4);
      const normal = await admitMany(q, 'A', 'normal', 8);
      const interactive = await admitMany(q, 'A', 'interactive', 8);

      const order = await dispatch(q, 20);
      const cycle = ['i', 'n', 'i', 'b', 'i', 'n', 'i'];
      // Two full cycles, then interactive is empty and normal:batch keep their 2:1.
      expect(order.map((t) => t.priority[0]).join('')).toBe([...cycle, ...cycle, 'nbnnbn'].join(''));
      const ofClass = (p: Priority) => order.filter((t) => t.priority === p).map((t) => t.taskId);
      expect(ofClass('interactive')).toEqual(interactive);
      expect(ofClass('normal')).toEqual(normal);
      expect(ofClass('batch')).toEqual(batch);
      expect(await q.next()).toBeNull();
    });

    it('keeps each owner at its place in its cycle across turns', async () => {
      const q = queue({ running: 100 });
      for (const owner of ['A', 'B']) {
        await admitMany(q, owner, 'interactive', 4);
        await admitMany(q, owner, 'normal', 2);
        await admitMany(q, owner, 'batch', 1);
      }
      const order = await dispatch(q, 14);
      expect(order.map((t) => t.ownerId).join('')).toBe('AB'.repeat(7));
      for (const owner of ['A', 'B']) {
        const own = order.filter((t) => t.ownerId === owner).map((t) => t.priority[0]);
        expect(own.join('')).toBe('inibini');
      }
    });

    it('gives a new owner its turn after the owners already waiting', async () => {
      const q = queue({ running: 100 });
      await admitMany(q, 'A', 'normal', 3);
      await admitMany(q, 'B', 'normal', 3);
      expect((await q.next())?.ownerId).toBe('A');
      await admitMany(q, 'C', 'normal', 1);
      const rest = await dispatch(q, 6);
      expect(rest.map((t) => t.ownerId).join('')).toBe('BACBAB');
    });

    it('shares dispatches 4/7, 2/7, 1/7 within ±5% over a long run of one continuously refilled owner', async () => {
      const q = queue({ running: 1 });
      for (const p of PRIORITIES) await admitMany(q, 'A', p, 2);
      const counts: Record<Priority, number> = { interactive: 0, normal: 0, batch: 0 };
      const runs = 7_000;
      for (let i = 0; i < runs; i++) {
        const task = await q.next();
        if (!task) throw new Error('the queue ran dry');
        counts[task.priority]++;
        await q.finish(task.taskId);
        expect(await q.admit(`refill-${i}`, 'A', task.priority, t0 + i)).toEqual({ ok: true });
      }
      const expected: Record<Priority, number> = { interactive: 4 / 7, normal: 2 / 7, batch: 1 / 7 };
      for (const p of PRIORITIES) {
        expect(Math.abs(counts[p] / runs - expected[p])).toBeLessThanOrEqual(expected[p] * 0.05);
      }
    });

    it('shares dispatches 1/3 each within ±5% between three continuously refilled owners of different classes', async () => {
      const q = queue({ running: 1 });
      const classOf: Record<string, Priority> = { A: 'batch', B: 'normal', C: 'interactive' };
      for (const owner of Object.keys(classOf)) await admitMany(q, owner, classOf[owner], 2);
      const counts: Record<string, number> = { A: 0, B: 0, C: 0 };
      const runs = 3_000;
      for (let i = 0; i < runs; i++) {
        const task = await q.next();
        if (!task) throw new Error('the queue ran dry');
        counts[task.ownerId]++;
        await q.finish(task.taskId);
        await q.admit(`refill-${i}`, task.ownerId, classOf[task.ownerId], t0 + i);
      }
      for (const owner of Object.keys(counts)) {
        expect(Math.abs(counts[owner] / runs - 1 / 3)).toBeLessThanOrEqual((1 / 3) * 0.05);
      }
    });
  });

  describe('running slots and removal', () => {
    it('dispatches nothing while `running` tasks run; finish frees a slot, once', async () => {
      const q = queue({ running: 2 });
      const ids = await admitMany(q, 'A', 'normal', 4);
      const [first, second] = await dispatch(q, 2);
      expect([first.taskId, second.taskId]).toEqual(ids.slice(0, 2));
      expect(await q.next()).toBeNull();

      await q.finish(first.taskId);
      await q.finish(first.taskId);
      await q.finish('never-admitted');
      await q.finish(ids[3]); // still waiting: finish does not touch it
      expect(await q.capacity('A')).toMatchObject({
        running: 1,
        queued: 2,
        owner: { running: 1, queued: 2 },
      });
      expect((await q.next())?.taskId).toBe(ids[2]);
      expect(await q.next()).toBeNull();
      await q.finish(second.taskId);
      expect((await q.next())?.taskId).toBe(ids[3]);
    });

    it('removes a waiting task and frees its queue slot; a running or unknown task is not removed', async () => {
      const q = queue({ running: 1, ownerQueue: 2 });
      const [t1, t2] = await admitMany(q, 'A', 'interactive', 2);
      expect(refused(await q.admit('t3', 'A', 'interactive', t0)).scope).toBe('owner');

      expect((await q.next())?.taskId).toBe(t1);
      expect(await q.remove(t1)).toBe(false);
      expect(await q.remove('unknown')).toBe(false);
      expect(await q.remove(t2)).toBe(true);
      expect(await q.remove(t2)).toBe(false);
      expect(await q.capacity('A')).toMatchObject({ queued: 0, running: 1, activeOwners: 1 });

      expect(await q.admit('t3', 'A', 'interactive', t0)).toEqual({ ok: true });
      expect(await q.admit('t4', 'A', 'interactive', t0)).toEqual({ ok: true });
      await q.finish(t1);
      expect((await q.next())?.taskId).toBe('t3');
    });

    it('lists the running ids and says which tasks it holds (for a reconciliation with Postgres)', async () => {
      const q = queue();
      const [a, b] = await admitMany(q, 'A', 'normal', 2);
      const [running] = await dispatch(q, 1);
      expect(running?.taskId).toBe(a);
      expect(await q.runningIds()).toEqual([a]);
      expect(await q.holds([a as string, b as string, 'never-admitted'])).toEqual([true, true, false]);
      await q.finish(a as string);
      expect(await q.runningIds()).toEqual([]);
      expect(await q.holds([a as string])).toEqual([false]);
      expect(await q.holds([])).toEqual([]);
    });

    it('takes an owner whose last waiting task was removed out of the turn order', async () => {
      const q = queue({ running: 100 });
      const [a] = await admitMany(q, 'A', 'batch', 1);
      const b = await admitMany(q, 'B', 'batch', 2);
      expect(await q.remove(a)).toBe(true);
      expect((await q.capacity()).activeOwners).toBe(1);
      expect((await dispatch(q, 2)).map((t) => t.taskId)).toEqual(b);
      expect(await q.next()).toBeNull();
      for (const t of b) await q.finish(t);
      expect(await q.capacity()).toMatchObject({ running: 0, queued: 0, activeOwners: 0 });
      expect(await redis.keys(`${prefix}*`)).toEqual([]);
    });

    it('reports the oldest wait per class and the caller share only', async () => {
      const q = queue();
      const now = Date.now();
      await q.admit('i1', 'A', 'interactive', now - 5_000);
      await q.admit('i2', 'B', 'interactive', now - 1_000);
      await q.admit('b1', 'B', 'batch', now - 30_000);
      const capacity = await q.capacity('B');
      const asked = Date.now();
      expect(capacity.oldestWaitMs.interactive).toBeGreaterThanOrEqual(5_000);
      expect(capacity.oldestWaitMs.interactive).toBeLessThanOrEqual(asked - now + 5_000);
      expect(capacity.oldestWaitMs.batch).toBeGreaterThanOrEqual(30_000);
      expect(capacity.oldestWaitMs.normal).toBeNull();
      expect(capacity).toMatchObject({
        queued: 3,
        activeOwners: 2,
        owner: { queued: 2, running: 0, queuedByPriority: { interactive: 1, normal: 0, batch: 1 } },
        limits: q.limits,
      });
      expect((await q.capacity()).owner).toBeUndefined();
    });
  });

  describe('rebuild', () => {
    it('is marked by rebuild only: an admit into empty state does not hide a loss', async () => {
      const q = queue();
      expect(await q.admit('t1', 'A', 'normal', t0)).toEqual({ ok: true });
      expect(await q.isInitialised()).toBe(false);
      await q.rebuild([{ taskId: 't1', ownerId: 'A', priority: 'normal', enqueuedAtMs: t0, running: false }]);
      expect(await q.isInitialised()).toBe(true);
      expect(await q.capacity()).toMatchObject({ queued: 1, running: 0 });
    });

    it('replaces whatever state there was', async () => {
      const q = queue({ running: 5 });
      await admitMany(q, 'A', 'normal', 3);
      await q.next();
      await q.rebuild([{ taskId: 'x', ownerId: 'B', priority: 'batch', enqueuedAtMs: t0, running: false }]);
      expect(await q.capacity()).toMatchObject({ running: 0, queued: 1, activeOwners: 1 });
      expect(await q.next()).toMatchObject({ taskId: 'x', ownerId: 'B' });
      expect(await q.next()).toBeNull();
    });

    it('is needed after a flush: the marker is gone, and rebuild restores FIFO order and running slots', async () => {
      const flushed = await connect('fair-queue-flush', FLUSH_DB);
      try {
        const q = new FairQueue(flushed, { prefix, limits: { running: 3 } });
        expect(await q.isInitialised()).toBe(false);
        await q.rebuild([]);
        expect(await q.isInitialised()).toBe(true);

        // The caller's store: what it accepted, in admission order.
        const store: FairQueueEntry[] = [];
        const accept = async (taskId: string, ownerId: string, priority: Priority) => {
          const entry = { taskId, ownerId, priority, enqueuedAtMs: t0 + store.length, running: false };
          expect(await q.admit(taskId, ownerId, priority, entry.enqueuedAtMs)).toEqual({ ok: true });
          store.push(entry);
        };
        for (let i = 0; i < 4; i++) {
          await accept(`a${i}`, 'A', i % 2 ? 'normal' : 'interactive');
          await accept(`b${i}`, 'B', 'batch');
        }
        await accept('c0', 'C', 'normal');
        for (const task of await dispatch(q, 2)) {
          const entry = store.find((e) => e.taskId === task.taskId);
          if (entry) entry.running = true;
        }

        await flushed.flushdb();
        expect(await q.isInitialised()).toBe(false);
        expect(await q.capacity()).toMatchObject({ running: 0, queued: 0 });

        await q.rebuild([...store].reverse());
        expect(await q.isInitialised()).toBe(true);
        expect(await q.capacity()).toMatchObject({ running: 2, queued: 7, activeOwners: 3 });
        expect(await q.capacity('B')).toMatchObject({ owner: { running: 1, queued: 3 } });

        // Two still run, so one slot of three is free. Cycle positions start over; the ring starts with
        // the owner of the oldest waiting task (A: a1), whose cycle opens with an interactive turn.
        const order = [await q.next()];
        expect(await q.next()).toBeNull();
        for (const e of store.filter((s) => s.running)) await q.finish(e.taskId);
        order.push(...(await Promise.all([q.next(), q.next()])));
        expect(await q.next()).toBeNull();
        for (const t of order) if (t) await q.finish(t.taskId);
        order.push(...(await dispatch(q, 3)));
        for (const t of order.slice(3)) if (t) await q.finish(t.taskId);
        order.push(await q.next());
        expect(order.map((t) => t?.taskId)).toEqual(['a2', 'b1', 'c0', 'a1', 'b2', 'a3', 'b3']);
        expect(await q.next()).toBeNull();
      } finally {
        await deleteKeys(flushed, prefix);
        await flushed.quit();
      }
    });
  });

  describe('in batches', () => {
    it('admits a batch as the same admits one after the other would, in one round trip', async () => {
      const limits = { ownerQueue: 3, batchOwner: 1 };
      const tasks = [
        { taskId: 'x1', ownerId: 'A', priority: 'batch' as const, enqueuedAtMs: t0 },
        { taskId: 'x2', ownerId: 'A', priority: 'batch' as const, enqueuedAtMs: t0 + 1 },
        { taskId: 'x3', ownerId: 'A', priority: 'normal' as const, enqueuedAtMs: t0 + 2 },
        { taskId: 'x1', ownerId: 'A', priority: 'batch' as const, enqueuedAtMs: t0 + 3 },
        { taskId: 'x4', ownerId: 'A', priority: 'interactive' as const, enqueuedAtMs: t0 + 4 },
        { taskId: 'x5', ownerId: 'A', priority: 'interactive' as const, enqueuedAtMs: t0 + 5 },
        { taskId: 'y1', ownerId: 'B', priority: 'normal' as const, enqueuedAtMs: t0 + 6 },
      ];
      const together = await queue(limits).admitAll(tasks);
      const sequentialPrefix = prefix;
      prefix = uniquePrefix('fq');
      const one = queue(limits);
      const apart: AdmitResult[] = [];
      for (const t of tasks) apart.push(await one.admit(t.taskId, t.ownerId, t.priority, t.enqueuedAtMs));
      expect(together).toEqual(apart);
      expect(together.map((r) => r.ok)).toEqual([true, false, true, true, true, false, true]);
      await deleteKeys(redis, sequentialPrefix);
      await expect(queue().admitAll([{ ...tasks[0]!, priority: 'urgent' as Priority }])).rejects.toThrow(
        /unknown priority/,
      );
    });

    it('takes a batch in the order single takes give, and frees several slots at once', async () => {
      const q = queue({ running: 5 });
      await admitMany(q, 'A', 'batch', 3);
      await admitMany(q, 'B', 'interactive', 3);
      await admitMany(q, 'A', 'interactive', 2);
      const mirrorPrefix = prefix;
      prefix = uniquePrefix('fq');
      const m = queue({ running: 5 });
      seq -= 8;
      await admitMany(m, 'A', 'batch', 3);
      await admitMany(m, 'B', 'interactive', 3);
      await admitMany(m, 'A', 'interactive', 2);
      const batch = await q.nextBatch(10);
      const singles = await dispatch(m, 5);
      expect(await m.next()).toBeNull();
      expect(batch?.map((t) => t.taskId.replace(/-\d+$/, ''))).toEqual(
        singles.map((t) => t.taskId.replace(/-\d+$/, '')),
      );
      expect(await q.nextBatch(10)).toEqual([]); // five run: no slot
      await q.finish(...(batch ?? []).slice(0, 2).map((t) => t.taskId), 'unknown-id');
      expect((await q.capacity()).running).toBe(3);
      expect(await q.nextBatch(10)).toHaveLength(2);
      await deleteKeys(redis, mirrorPrefix);
    });

    it('says how many slots are free after an admission, and frees slots and takes their successors in one call', async () => {
      const q = queue({ running: 2 });
      const entry = (taskId: string) => ({
        taskId,
        ownerId: 'A',
        priority: 'normal' as const,
        enqueuedAtMs: t0,
      });
      expect(await q.admitBatch([entry('f1'), entry('f2'), entry('f3')])).toMatchObject({ freeSlots: 2 });
      const running = (await q.nextBatch(5)) ?? [];
      expect(running.map((t) => t.taskId)).toEqual(['f1', 'f2']);
      expect(await q.admitBatch([entry('f4')])).toMatchObject({ freeSlots: 0 });
      const next = await q.nextBatch(5, { finishing: ['f1', 'f1', 'not-running'] });
      expect(next?.map((t) => t.taskId)).toEqual(['f3']);
      expect((await q.capacity()).running).toBe(2);
    });

    it('takes nothing while its state is not built, when asked to; a rebuild lets it take', async () => {
      const q = queue();
      await admitMany(q, 'A', 'normal', 2);
      expect(await q.nextBatch(5, { requireInitialised: true })).toBeNull();
      expect((await q.capacity()).queued).toBe(2);
      await q.rebuild([]);
      await admitMany(q, 'A', 'normal', 2);
      expect(await q.nextBatch(5, { requireInitialised: true })).toHaveLength(2);
    });
  });

  describe('starting at once', () => {
    const entry = (taskId: string, ownerId = 'A', priority: Priority = 'normal') => ({
      taskId,
      ownerId,
      priority,
      enqueuedAtMs: t0 + seq++,
    });

    it('starts while nothing waits and a slot is free, holding the slot as a dispatched task does', async () => {
      const q = queue({ running: 2 });
      await q.rebuild([]);
      expect(await q.startAll([entry('s1'), entry('s2', 'B', 'batch'), entry('s3')])).toEqual([
        true,
        true,
        false,
      ]);
      expect(await q.capacity('A')).toMatchObject({
        running: 2,
        queued: 0,
        activeOwners: 2,
        owner: { running: 1, queued: 0 },
      });
      // Not started: left alone, so the caller admits it; it waits for a slot like any other.
      expect(await q.holds(['s3'])).toEqual([false]);
      expect(await q.admit('s3', 'A', 'normal', t0)).toEqual({ ok: true });
      expect(await q.nextBatch(5)).toEqual([]);
      expect(await q.take(5, { finishing: ['s1'] })).toEqual({
        taken: [{ taskId: 's3', ownerId: 'A', priority: 'normal', enqueuedAtMs: t0 }],
        waiting: 0,
      });
      await q.finish('s2');
      expect(await q.capacity('B')).toMatchObject({ running: 1, activeOwners: 1, owner: { running: 0 } });
    });

    it('never overtakes a waiting task, even with slots free', async () => {
      const q = queue({ running: 1 });
      await q.rebuild([]);
      await admitMany(q, 'A', 'batch', 1);
      // A slot is free (nothing was taken yet) but A's task waits: B's submit waits behind it.
      expect(await q.startAll([entry('b1', 'B', 'interactive')])).toEqual([false]);
      expect(await q.take(5)).toMatchObject({ taken: [{ ownerId: 'A' }], waiting: 0 });
      expect(await q.startAll([entry('b1', 'B', 'interactive')])).toEqual([false]); // no slot
    });

    it('starts nothing before the state is built, nor a task it holds already', async () => {
      const q = queue();
      expect(await q.startAll([entry('u1')])).toEqual([false]);
      await q.rebuild([]);
      const [held] = await admitMany(q, 'A', 'normal', 1);
      await q.nextBatch(1);
      expect(await q.startAll([entry(held as string)])).toEqual([false]);
      expect((await q.capacity()).running).toBe(1);
      await expect(q.startAll([{ ...entry('x'), priority: 'urgent' as Priority }])).rejects.toThrow(
        'unknown priority',
      );
    });

    it('frees a slot without a row at once, but one taken at once only after the guard, by its own clock', async () => {
      const q = queue();
      await q.rebuild([]);
      await admitMany(q, 'A', 'normal', 1);
      const [dispatched] = (await q.nextBatch(1)) ?? [];
      expect(await q.startAll([entry('fresh'), entry('stale')])).toEqual([true, true]);
      // As if `stale`'s slot had been taken two minutes ago (Redis's clock: the hash's `a`).
      const [seconds] = await redis.time();
      await redis.hset(`${prefix}t:stale`, 'a', (Number(seconds) - 120) * 1000);
      const ids = [dispatched?.taskId as string, 'fresh', 'stale', 'never-admitted'];
      expect(await q.finishRowless(ids, 60_000)).toBe(2);
      expect(await q.runningIds()).toEqual(['fresh']);
      // Older than a (tiny) guard: freed.
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await q.finishRowless(['fresh'], 1)).toBe(1);
      expect(await q.finishRowless([], 0)).toBe(0);
      expect(await q.capacity('A')).toMatchObject({ running: 0, activeOwners: 0 });
    });

    it('holds a slot for a task its store says runs, over the limit, and only for a task it does not hold', async () => {
      const q = queue({ running: 1 });
      await q.rebuild([]);
      expect(await q.startAll([entry('r1')])).toEqual([true]);
      const [queued] = await admitMany(q, 'B', 'batch', 1);
      expect(await q.hold([entry('r1'), entry(queued as string, 'B', 'batch'), entry('lost', 'C')])).toBe(1);
      expect(await q.capacity('C')).toMatchObject({ running: 2, queued: 1, owner: { running: 1 } });
      expect(await q.take(5)).toEqual({ taken: [], waiting: 1 });
      await q.finish('lost', 'r1');
      expect(await q.take(5)).toMatchObject({ taken: [{ taskId: queued }], waiting: 0 });
      expect(await q.hold([])).toBe(0);
    });
  });
});
