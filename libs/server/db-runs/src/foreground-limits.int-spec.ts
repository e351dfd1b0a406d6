import { randomUUID } from 'node:crypto';
import { AppError, RunConfig, type RunEventBody } from '@switchyard/contracts';
import {
  createPgPool,
  createPrisma,
  createScratchDatabase,
  type PgPool,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import { ChatRepository } from './chat.repository';
import { RunsRepository, type NewRun } from './runs.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const created: RunEventBody = {
  type: 'run_created',
  data: { goal: 'g', config: RunConfig.parse({}), source: 'goal' },
};

const newRun = (ownerId: string, over: Partial<NewRun> = {}): NewRun => ({
  id: randomUUID(),
  ownerId,
  status: 'planning',
  goal: 'g',
  config: {},
  inputs: {},
  files: [],
  plan: null,
  replica: 'r1',
  leaseMs: 60_000,
  ...over,
});

/** Foreground admission against real Postgres, through the pool and through Prisma. */
describe.each(['pool', 'prisma'] as const)('foreground limits (real Postgres, via %s)', (via) => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let pool: PgPool | undefined;
  let runs: RunsRepository;
  let chats: ChatRepository;
  let alice: string;
  let bob: string;

  const refusalOf = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!(err instanceof AppError)) throw new Error(`expected a refusal, got ${String(err)}`);
    return err;
  };

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'fglimits' });
    prisma = createPrisma({ url: db.url, poolSize: 8, applicationName: 'test' });
    pool =
      via === 'pool' ? createPgPool({ url: db.url, poolSize: 8, applicationName: 'test-runs' }) : undefined;
    runs = new RunsRepository(prisma, pool);
    chats = new ChatRepository(prisma, pool);
    const identity = new IdentityRepository(prisma);
    alice = (await identity.ensureOwner('alice', 'user')).owner.id;
    bob = (await identity.ensureOwner('bob', 'user')).owner.id;
  });

  afterAll(async () => {
    await pool?.end();
    await prisma.$disconnect();
    await db.drop();
  });

  beforeEach(async () => {
    await prisma.run.deleteMany({});
    await prisma.chatSession.deleteMany({});
  });

  it('admits exactly the limit out of many concurrent starts of one owner, and refuses the rest by scope', async () => {
    const limits = { owner: 5, deployment: 0 };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => runs.create(newRun(alice), [created], limits)),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    expect(refused).toHaveLength(15);
    for (const r of refused)
      expect(r.reason).toMatchObject({
        code: 'capacity_exceeded',
        details: { capacityScope: 'owner', limit: 5, active: 5, retryable: true },
      });
    expect(await prisma.run.count({ where: { ownerId: alice } })).toBe(5);
    // Bob is not affected by Alice's limit.
    await runs.create(newRun(bob), [created], limits);
  });

  it('never overshoots with starts of several owners arriving together on two replicas', async () => {
    const limits = { owner: 4, deployment: 6 };
    const otherPool =
      via === 'pool' ? createPgPool({ url: db.url, poolSize: 4, applicationName: 'test-runs-2' }) : undefined;
    const other = new RunsRepository(prisma, otherPool);
    try {
      const starts = Array.from({ length: 24 }, (_, i) =>
        (i % 2 ? runs : other).create(newRun(i % 3 ? alice : bob), [created], limits),
      );
      const outcomes = await Promise.allSettled(starts);
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(6);
      for (const o of outcomes)
        if (o.status === 'rejected') expect(o.reason).toMatchObject({ code: 'capacity_exceeded' });
      expect(await prisma.run.count({ where: { ownerId: alice } })).toBeLessThanOrEqual(4);
      expect(await prisma.run.count({ where: { ownerId: bob } })).toBeLessThanOrEqual(4);
      expect(await prisma.run.count()).toBe(6);
    } finally {
      await otherPool?.end();
    }
  });

  it('a start that Postgres refuses fails alone: the others started with it are created', async () => {
    const limits = { owner: 10, deployment: 0 };
    const first = newRun(alice);
    // The same id twice: whichever is written second breaks the statement (or transaction) it is in,
    // whether it went alone or in a batch with Bob's (which reaches Postgres first is the machine's
    // timing): exactly one of the two is refused, and Bob's start is created either way.
    const outcomes = await Promise.allSettled([
      runs.create(first, [created], limits),
      runs.create(newRun(alice, { id: first.id }), [created], limits),
      runs.create(newRun(bob), [created], limits),
    ]);
    const [a, b, c] = outcomes.map((o) => o.status);
    expect([a, b].sort()).toEqual(['fulfilled', 'rejected']);
    expect(c).toBe('fulfilled');
    expect(await prisma.run.count()).toBe(2);
  });

  it('counts the deployment across owners; ended runs and background runs do not count', async () => {
    const limits = { owner: 10, deployment: 3 };
    const first = newRun(alice);
    await runs.create(first, [created], limits);
    await runs.create(newRun(alice), [created], limits);
    await runs.create(newRun(bob), [created], limits);
    const full = await refusalOf(runs.create(newRun(bob), [created], limits));
    expect(full.details).toMatchObject({ capacityScope: 'deployment', active: 3, limit: 3 });
    // A task's run is admitted elsewhere: not refused, not counted.
    await runs.create(newRun(bob, { background: true }), [created]);
    // The run ends (any terminal status): its slot is free.
    await runs.append(first.id, [{ type: 'cancelled', data: { message: 'cancelled by test' } }], {
      update: { status: 'cancelled', finished: true, release: true },
    });
    await runs.create(newRun(bob), [created], limits);
    expect(await runs.foregroundRoom(alice, limits, 1)).toMatchObject({
      details: { capacityScope: 'deployment' },
    });
  });

  it('chat turns share the limit: a new turn is refused at it, a takeover keeps its slot', async () => {
    const limits = { owner: 2, deployment: 0 };
    const s1 = await chats.create(alice, { permissionMode: 'ask' });
    const s2 = await chats.create(alice, { permissionMode: 'ask' });
    await runs.create(newRun(alice), [created], limits);
    expect(await chats.claimTurn(alice, s1.id, 'r1', undefined, limits)).toBe(true);
    const refused = await refusalOf(chats.claimTurn(alice, s2.id, 'r1', undefined, limits));
    expect(refused.details).toMatchObject({ capacityScope: 'owner', active: 2, limit: 2 });
    expect(refused.message).toMatch(/you have 2 runs and chat turns active, the owner limit is 2/);
    // The replica of s1's turn died: another takes the turn over without a new slot.
    expect(await chats.claimTurn(alice, s1.id, 'r2', 'r1', limits)).toBe(true);
    // A run start is refused while the turn is active...
    await refusalOf(runs.create(newRun(alice), [created], limits));
    // ...and admitted once the turn has ended.
    await chats.releaseTurn(alice, s1.id, 'r2');
    await runs.create(newRun(alice), [created], limits);
  });
});

/** Admission's round trips on the pool (the Prisma path sends its statements one by one). */
describe('foreground admission on the pg pool (real Postgres)', () => {
  let db: ScratchDatabase;
  let prisma: PrismaClient;
  let pool: PgPool;
  let runs: RunsRepository;
  let alice: string;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'fgtrips' });
    prisma = createPrisma({ url: db.url, poolSize: 4, applicationName: 'test' });
    pool = createPgPool({ url: db.url, poolSize: 4, applicationName: 'test-runs' });
    runs = new RunsRepository(prisma, pool);
    alice = (await new IdentityRepository(prisma).ensureOwner('alice', 'user')).owner.id;
  });

  afterAll(async () => {
    await pool.end();
    await prisma.$disconnect();
    await db.drop();
  });

  // The admission's first message carries the owner ids as quoted literals (it has no parameters).
  it.each([
    "x'); DROP TABLE run; --",
    "x\\'); DROP TABLE run; --",
    "x'::uuid]::text[]) AS o; DROP TABLE run; --",
    '$$; DROP TABLE run; $$',
  ])('an owner id holding SQL stays text: %s', async (ownerId) => {
    const err = await runs
      .create({ ...newRun(alice), ownerId }, [created], { owner: 5, deployment: 50 })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: string },
      );
    expect(err?.code).toBe('22P02'); // invalid input syntax for type uuid: the text reached Postgres as a value
    expect(
      await prisma.$queryRawUnsafe<unknown[]>("SELECT to_regclass('run') IS NOT NULL AS present"),
    ).toEqual([{ present: true }]);
  });

  it('admits starts made together in one statement however many they are, and refuses the overflow', async () => {
    const limits = { owner: 6, deployment: 50 };
    const query = jest.spyOn(pool, 'query');
    try {
      // Asked in one turn: admitted together.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, () => runs.create(newRun(alice), [created], limits)),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(6);
      for (const o of outcomes)
        if (o.status === 'rejected')
          expect(o.reason).toMatchObject({
            code: 'capacity_exceeded',
            details: { capacityScope: 'owner', active: 6, limit: 6 },
          });
      expect(await prisma.run.count({ where: { ownerId: alice } })).toBe(6);
      expect(query).toHaveBeenCalledTimes(1);
      // One prepared statement takes the locks, counts, decides and writes: no BEGIN, no COMMIT.
      const sent = query.mock.calls[0]?.[0] as unknown as { name: string; text: string };
      expect(sent.name).toBe('run_create_admitted');
      expect(sent.text).toMatch(/^WITH counted AS \(\s+SELECT \* FROM foreground_active\(/);
      expect(sent.text).not.toMatch(/\b(BEGIN|COMMIT)\b/);
    } finally {
      query.mockRestore();
    }
  });

  it('admits in order as the one-by-one rule does: the owner limit, then the deployment limit, with what is active', async () => {
    const bob = (await new IdentityRepository(prisma).ensureOwner('bob', 'user')).owner.id;
    await prisma.run.deleteMany({});
    const limits = { owner: 3, deployment: 4 };
    await runs.create(newRun(alice), [created], limits);
    // Alice has one: two more of hers fit, then one of Bob's fills the deployment (4); her third is
    // refused by her own limit, Bob's next ones by the deployment's.
    const outcomes = await Promise.allSettled(
      [alice, alice, bob, alice, bob, bob].map((o) => runs.create(newRun(o), [created], limits)),
    );
    expect(
      outcomes.map((o) =>
        o.status === 'fulfilled' ? 'ok' : (o.reason as AppError).details?.['capacityScope'],
      ),
    ).toEqual(['ok', 'ok', 'ok', 'owner', 'deployment', 'deployment']);
    expect(await prisma.run.count()).toBe(4);
  });

  it('writes values holding SQL and escapes as they are', async () => {
    const goal = "x'); DROP TABLE run; -- \\' \\\\ $$ E'\\x' \u2028 ✓";
    const run = newRun(alice, { goal, inputs: { "k'": "v\\'); --" } });
    await prisma.run.deleteMany({});
    await runs.create(run, [{ ...created, data: { ...created.data, goal } } as RunEventBody], {
      owner: 5,
      deployment: 50,
    });
    const stored = await prisma.run.findUniqueOrThrow({ where: { id: run.id } });
    expect(stored.goal).toBe(goal);
    expect(stored.inputs).toEqual({ "k'": "v\\'); --" });
    const [event] = await prisma.runEvent.findMany({ where: { runId: run.id } });
    expect((event?.data as { goal?: string }).goal).toBe(goal);
  });
});
