import {
  createPgPool,
  createPrisma,
  createScratchDatabase,
  jsonHoldsUnstorable,
  type PgPool,
  type PrismaClient,
  type ScratchDatabase,
  storableText,
} from '@switchyard/server-db';
import { randomUUID } from 'node:crypto';
import { RunConfig, type RunEventBody } from '@switchyard/contracts';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { LeaseLostError, RunsRepository, type NewRun } from './runs.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

const created: RunEventBody = {
  type: 'run_created',
  data: { goal: 'a goal', config: RunConfig.parse({}), source: 'goal' },
};
const token = (text: string): RunEventBody => ({ type: 'plan_token', data: { text, attempt: 1 } });

describe('RunsRepository (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let pool: PgPool;
  let viaPool: RunsRepository;
  let viaPrisma: RunsRepository;
  let ownerId: string;
  let otherOwner: string;

  const newRun = (over: Partial<NewRun> = {}): NewRun => ({
    id: randomUUID(),
    ownerId,
    status: 'running',
    goal: 'a goal',
    config: { permissionMode: 'ask' },
    inputs: { x: 1 },
    files: ['a.txt'],
    plan: { steps: [{ id: 'a', tool: 'wait', arguments: {}, dependsOn: [] }] },
    replica: 'replica-1',
    leaseMs: 60_000,
    ...over,
  });

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'runs' });
    prisma = createPrisma({ url: db.url, poolSize: 5, applicationName: 'test' });
    pool = createPgPool({ url: db.url, poolSize: 5, applicationName: 'test-runs' });
    viaPool = new RunsRepository(prisma, pool);
    viaPrisma = new RunsRepository(prisma);
    const identity = new IdentityRepository(prisma);
    ownerId = (await identity.ensureOwner('runs-owner', 'user')).owner.id;
    otherOwner = (await identity.ensureOwner('runs-other', 'user')).owner.id;
  });

  afterAll(async () => {
    await pool.end();
    await prisma.$disconnect();
    await db.drop();
  });

  describe.each([
    ['a raw pg pool', () => viaPool],
    ['Prisma', () => viaPrisma],
  ])('through %s', (_, repo) => {
    it('keeps the agent of a run, and its budget figures and new config as a create or an append writes them', async () => {
      const run = newRun({ agentId: 7 });
      await repo().create(run, [created]);
      expect(await repo().get(run.id)).toMatchObject({ agentId: 7, usage: null });
      const usage = { tokens: 120, toolCalls: 2, wallMs: 345 };
      const config = { permissionMode: 'ask', budget: { maxToolCalls: 5 } };
      await repo().append(run.id, [token('x')], { replica: 'replica-1', update: { usage, config } });
      expect(await repo().get(run.id)).toMatchObject({ agentId: 7, usage, config });
      const plain = newRun();
      await repo().create(plain, [created]);
      expect(await repo().get(plain.id)).toMatchObject({ agentId: null, usage: null });
      // A run created with its first turn's events (RunWriter.create) is written with what they spent.
      const spent = newRun({ usage: { tokens: 0, toolCalls: 0, wallMs: 0 } });
      await repo().create(spent, [created]);
      expect(await repo().get(spent.id)).toMatchObject({ usage: { tokens: 0, toolCalls: 0, wallMs: 0 } });
    });

    it('creates a run with its first events, then appends gaplessly with row changes in the same statement', async () => {
      const run = newRun();
      const first = await repo().create(run, [created, { type: 'planning_started', data: {} }]);
      expect(first.map((e) => [e.seq, e.type])).toEqual([
        [1, 'run_created'],
        [2, 'planning_started'],
      ]);
      const complete: RunEventBody = {
        type: 'complete',
        data: { summary: 's', result: 1, results: { a: 1 } },
      };
      const more = await repo().append(run.id, [complete], {
        replica: 'replica-1',
        update: { status: 'completed', summary: 'done it', finished: true, release: true },
      });
      expect(more.map((e) => e.seq)).toEqual([3]);
      // What the writes answered (the bodies sent, numbered, at the statement's time) is what the
      // log holds, to the millisecond.
      expect(await repo().events(run.id, 10)).toEqual([...first, ...more]);
      const row = await repo().get(run.id);
      expect(row).toMatchObject({
        status: 'completed',
        summary: 'done it',
        ownerReplica: null,
        leaseUntil: null,
        inputs: { x: 1 },
        files: ['a.txt'],
      });
      expect(row?.finishedAt).not.toBeNull();
    });

    it('records the workflow a run was started from', async () => {
      const workflowId = randomUUID();
      const [from, plain] = [newRun({ workflowId }), newRun()];
      await repo().create(from, []);
      await repo().create(plain, []);
      const rows = await prisma.$queryRawUnsafe<Array<{ id: string; workflow_id: string | null }>>(
        'SELECT id, workflow_id FROM run WHERE id = ANY($1::uuid[])',
        [from.id, plain.id],
      );
      expect(new Map(rows.map((r) => [r.id, r.workflow_id]))).toEqual(
        new Map([
          [from.id, workflowId],
          [plain.id, null],
        ]),
      );
    });

    it('applies a row change with no event, and refuses a replica that does not hold the run', async () => {
      const run = newRun();
      await repo().create(run, []);
      expect(
        await repo().append(run.id, [], { replica: 'replica-1', update: { status: 'failed', error: 'x' } }),
      ).toEqual([]);
      expect((await repo().get(run.id))?.status).toBe('failed');
      await expect(repo().append(run.id, [token('x')], { replica: 'someone-else' })).rejects.toBeInstanceOf(
        LeaseLostError,
      );
      await expect(repo().append(randomUUID(), [token('x')])).rejects.toMatchObject({ code: 'not_found' });
      // The refused append left nothing behind.
      expect((await repo().events(run.id, 10)).map((e) => e.type)).toEqual([]);
    });
  });

  it('writes appends of many runs made at once together, each run gapless, each refusal its own', async () => {
    const runs = Array.from({ length: 6 }, () => newRun());
    for (const r of runs) await viaPool.create(r, [created]);
    const [lost, bad, ...ok] = runs as [NewRun, NewRun, ...NewRun[]];
    const results = await Promise.allSettled([
      // All asked in one turn: one statement for the lot (and a second for a run asked twice).
      ...ok.map((r, i) =>
        viaPool.append(r.id, [token(`a${i}`), token(`b${i}`)], {
          replica: 'replica-1',
          update: i === 0 ? { status: 'completed', summary: 's', finished: true, release: true } : {},
        }),
      ),
      viaPool.append(ok[1]!.id, [token('again')], { replica: 'replica-1', update: { plan: null } }),
      viaPool.append(lost.id, [token('x')], { replica: 'someone-else' }),
      viaPool.append(bad.id, [token('a\u0000b')], { replica: 'replica-1' }),
    ]);
    const value = (i: number) => (results[i] as PromiseFulfilledResult<Array<{ seq: number }>>).value;
    for (let i = 0; i < ok.length; i++) expect(value(i).map((e) => e.seq)).toEqual([2, 3]);
    expect(value(ok.length).map((e) => e.seq)).toEqual([4]);
    expect((results[ok.length + 1] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);
    expect(String((results[ok.length + 2] as PromiseRejectedResult).reason)).toMatch(
      /invalid input syntax for type json|Unicode/,
    );
    expect(await viaPool.get(ok[0]!.id)).toMatchObject({
      status: 'completed',
      summary: 's',
      ownerReplica: null,
    });
    expect((await viaPool.get(ok[0]!.id))?.finishedAt).not.toBeNull();
    expect(await viaPool.get(ok[1]!.id)).toMatchObject({
      status: 'running',
      plan: null,
      ownerReplica: 'replica-1',
    });
    expect((await viaPool.events(ok[1]!.id, 10)).map((e) => [e.seq, e.type])).toEqual([
      [1, 'run_created'],
      [2, 'plan_token'],
      [3, 'plan_token'],
      [4, 'plan_token'],
    ]);
    for (const r of [lost, bad]) expect((await viaPool.events(r.id, 10)).map((e) => e.seq)).toEqual([1]);
  });

  it('writes background creates made at once together, each run whole, a bad one refusing only itself', async () => {
    const statements: number[] = [];
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    const spy = jest.spyOn(pool, 'query').mockImplementation(((...args: unknown[]) => {
      const q = args[0] as { name?: string; values?: unknown[] } | undefined;
      // Each create statement, as the number of runs it writes.
      if (q?.name === 'run_create') statements.push((JSON.parse(String(q.values?.[0])) as unknown[]).length);
      return query(...args);
    }) as never);
    try {
      const first = newRun({ background: true });
      const together = [
        newRun({ background: true, plan: null, agentId: 3, sourceRunId: first.id }),
        newRun({ background: true, workflowId: randomUUID(), sandboxPosture: 'sandboxed' }),
      ];
      const stranger = newRun({ background: true, ownerId: randomUUID() }); // no such owner: refused
      const results = await Promise.allSettled([
        viaPool.create(first, [created]),
        ...together.map((r) => viaPool.create(r, [created, token('t')])),
        viaPool.create(stranger, [created]),
      ]);
      // Asked in one turn: one statement for the lot, which the stranger failed, so each was then
      // tried alone.
      expect(statements).toEqual([4, 1, 1, 1, 1]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
      expect(await viaPool.get(stranger.id)).toBeUndefined();

      // A create alone is the single statement it always was.
      statements.length = 0;
      await viaPool.create(newRun({ background: true }), [created]);
      expect(statements).toEqual([1]);

      // Without the stranger, the batch is one statement, and every run is as a single create writes it.
      statements.length = 0;
      const batch = [newRun({ background: true }), ...together.map((r) => ({ ...r, id: randomUUID() }))];
      const stored = await Promise.all([
        viaPool.create(batch[0]!, [created]),
        ...batch.slice(1).map((r) => viaPool.create(r, [created, token('t')])),
      ]);
      expect(statements).toEqual([3]);
      expect(stored.map((events) => events.map((e) => [e.seq, e.type]))).toEqual([
        [[1, 'run_created']],
        [
          [1, 'run_created'],
          [2, 'plan_token'],
        ],
        [
          [1, 'run_created'],
          [2, 'plan_token'],
        ],
      ]);
      for (const r of batch) {
        const row = await viaPool.get(r.id);
        expect(row).toMatchObject({
          status: 'running',
          goal: r.goal,
          config: r.config,
          inputs: r.inputs,
          files: r.files,
          plan: r.plan,
          ownerReplica: 'replica-1',
          agentId: r.agentId ?? null,
          sourceRunId: r.sourceRunId ?? null,
          sandboxPosture: r.sandboxPosture ?? null,
        });
        expect(Date.parse(row!.leaseUntil!)).toBeGreaterThan(Date.now() + 50_000);
        // Numbered on after its first events: the next append continues the log without a gap.
        const next = await viaPool.append(r.id, [token('next')], { replica: 'replica-1' });
        expect(next.map((e) => e.seq)).toEqual([r === batch[0] ? 2 : 3]);
      }
    } finally {
      spy.mockRestore();
    }
  });

  it('interrupts runs whose lease ran out, with the interrupted event in the same statement, once', async () => {
    const expired = newRun({ leaseMs: -1_000, replica: 'dead-replica' });
    const alive = newRun({ replica: 'live-replica' });
    const done = newRun({ status: 'completed', leaseMs: -1_000 });
    await viaPool.create(expired, [created]);
    await viaPool.create(alive, [created]);
    await viaPool.create(done, [created]);
    const events = await viaPool.interrupt('the replica stopped');
    const mine = events.filter((e) => [expired.id, alive.id, done.id].includes(e.runId));
    expect(mine).toEqual([expect.objectContaining({ runId: expired.id, seq: 2, type: 'interrupted' })]);
    expect(mine[0]?.data).toEqual({ message: 'the replica stopped' });
    expect(await viaPool.get(expired.id)).toMatchObject({
      status: 'interrupted',
      error: 'the replica stopped',
      ownerReplica: null,
    });
    expect((await viaPool.interrupt('again')).filter((e) => e.runId === expired.id)).toEqual([]);
    // The dead replica can no longer write to it.
    await expect(
      viaPool.append(expired.id, [token('late')], { replica: 'dead-replica' }),
    ).rejects.toBeInstanceOf(LeaseLostError);
    // A renewed lease keeps a run out of the sweep; interrupting by replica ignores the lease.
    expect(await viaPool.renewLeases('live-replica', 60_000, [alive.id])).toBe(1);
    // Only the runs named are renewed, and only for their own replica.
    expect(await viaPool.renewLeases('live-replica', 60_000, [expired.id, randomUUID()])).toBe(0);
    expect(await viaPool.renewLeases('dead-replica', 60_000, [alive.id])).toBe(0);
    expect(await viaPool.renewLeases('live-replica', 60_000, [])).toBe(0);
    const byReplica = await viaPool.interrupt('shut down', { replica: 'live-replica' });
    expect(byReplica.map((e) => e.runId)).toEqual([alive.id]);
  });

  it('claims a finished run for a replica only from the statuses given', async () => {
    const run = newRun({ status: 'failed' });
    await viaPool.create(run, []);
    expect(await viaPool.claim(run.id, 'replica-2', 10_000, ['cancelled'])).toBe(false);
    expect(await viaPool.claim(run.id, 'replica-2', 10_000, ['failed'])).toBe(true);
    expect((await viaPool.get(run.id))?.ownerReplica).toBe('replica-2');
  });

  it('refuses an event holding NUL or half a surrogate pair, storing nothing; those kept as JSON text store', async () => {
    const run = newRun();
    await viaPool.create(run, [created]);
    for (const bad of ['a\u0000b', 'a\ud800b', 'a\udc00b'])
      await expect(viaPool.append(run.id, [token(bad)], { replica: 'replica-1' })).rejects.toThrow(
        /invalid input syntax for type json|Unicode/,
      );
    expect(jsonHoldsUnstorable(JSON.stringify(token('a\u0000b')))).toBe(true);
    expect(jsonHoldsUnstorable(JSON.stringify(token('ok \ud83d\ude00 \\u0000')))).toBe(false);
    const kept = JSON.stringify({ out: 'a\u0000b\ud800' });
    expect(storableText('a\u0000b\ud800')).toBe('a\ufffdb\ufffd');
    const stored = await viaPool.append(run.id, [token(kept), token(storableText('a\u0000b'))], {
      replica: 'replica-1',
    });
    expect(stored.map((e) => e.seq)).toEqual([2, 3]);
    const [back] = await viaPool.events(run.id, 10).then((all) => all.filter((e) => e.seq === 2));
    expect(back?.type === 'plan_token' && JSON.parse(back.data.text)).toEqual({ out: 'a\u0000b\ud800' });
  });

  it('fails a run with a bare error event in one statement, only for the replica holding it', async () => {
    const run = newRun();
    await viaPool.create(run, [created]);
    expect(await viaPool.fail(run.id, 'replica-2', 'not mine')).toEqual([]);
    const [error] = await viaPool.fail(run.id, 'replica-1', 'the log refused \u0000 an event');
    expect(error).toMatchObject({
      runId: run.id,
      seq: 2,
      type: 'error',
      data: { message: 'the log refused \ufffd an event', code: 'internal' },
    });
    expect(await viaPool.get(run.id)).toMatchObject({
      status: 'failed',
      error: 'the log refused \ufffd an event',
      ownerReplica: null,
    });
    expect((await viaPool.get(run.id))?.finishedAt).not.toBeNull();
  });

  it('reads the events of some types only, in order', async () => {
    const run = newRun();
    await viaPool.create(run, [created, token('a')]);
    await viaPool.append(run.id, [{ type: 'step_approved', data: { stepId: 's' } }, token('b')], {
      replica: 'replica-1',
    });
    const picked = await viaPool.eventsOfTypes(run.id, ['plan_token', 'step_approved']);
    expect(picked.map((e) => [e.seq, e.type])).toEqual([
      [2, 'plan_token'],
      [3, 'step_approved'],
      [4, 'plan_token'],
    ]);
  });

  it('shows a run to its owner and admins only', async () => {
    const run = newRun();
    await viaPool.create(run, []);
    await expect(viaPool.getVisible(run.id, ownerId)).resolves.toMatchObject({ id: run.id });
    await expect(viaPool.getVisible(run.id, null)).resolves.toMatchObject({ id: run.id });
    await expect(viaPool.getVisible(run.id, otherOwner)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('lists newest first with cursor pages, a status filter, and a search where % and _ are literal', async () => {
    const mine = Array.from({ length: 5 }, (_, i) => newRun({ ownerId: otherOwner, goal: `list goal ${i}` }));
    for (const r of mine) await viaPool.create(r, []);
    await viaPool.create(newRun({ ownerId: otherOwner, goal: 'literal 100%_done', status: 'failed' }), []);
    const first = await viaPool.list(otherOwner, { limit: 4 });
    expect(first.items).toHaveLength(4);
    expect(first.nextCursor).not.toBeNull();
    const second = await viaPool.list(otherOwner, { limit: 4, cursor: first.nextCursor as string });
    expect(second.items).toHaveLength(2);
    expect(second.nextCursor).toBeNull();
    expect(new Set([...first.items, ...second.items].map((r) => r.id)).size).toBe(6);
    expect(
      (await viaPool.list(otherOwner, { limit: 50, status: 'failed' })).items.map((r) => r.goal),
    ).toEqual(['literal 100%_done']);
    expect((await viaPool.list(otherOwner, { limit: 50, q: '100%_' })).items).toHaveLength(1);
    expect((await viaPool.list(otherOwner, { limit: 50, q: '%' })).items).toHaveLength(1);
    expect((await viaPool.list(otherOwner, { limit: 50, q: 'list goal' })).items).toHaveLength(5);
    await expect(
      viaPool.list(otherOwner, { limit: 5, cursor: "x'; DROP TABLE run; --" }),
    ).rejects.toMatchObject({
      code: 'validation_failed',
    });
  });
});
