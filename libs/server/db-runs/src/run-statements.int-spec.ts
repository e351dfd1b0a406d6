import { randomUUID } from 'node:crypto';
import { RunConfig, type RunEventBody } from '@switchyard/contracts';
import { createPgPool, createPrisma, type PgPool, type PrismaClient } from '@switchyard/server-db';
import { IdentityRepository } from '@switchyard/server-db-identity';
import {
  createTestDatabase,
  recordStatements,
  wholeTableReads,
  type TestDatabase,
} from '@switchyard/testing';
import { RunsRepository, type NewRun } from './runs.repository';

/**
 * Runs already kept when the statements are planned. Few enough that a whole read of the table looks
 * cheaper to the planner than a hundred index look-ups (the estimate it makes for a batch's input):
 * the size at which a batched append used to read every run, each time.
 */
const KEPT = 8_000;

const created: RunEventBody = {
  type: 'run_created',
  data: { goal: 'a goal', config: RunConfig.parse({}), source: 'goal' },
};
const token = (text: string): RunEventBody => ({ type: 'plan_token', data: { text, attempt: 1 } });

/*
 * Every statement of a run's life finds its rows through an index: an append batched for several
 * runs (the run writer's group commit) was joined to its input with a read of the whole run table,
 * ~1.5 ms per append at 8,000 runs against ~0.15 ms by index (EXPLAIN ANALYZE), the largest cost of
 * Postgres per background task in the tasks bench. Checked on the plans Postgres makes, for the
 * values sent and (prepared statements) generic.
 */
describe('RunsRepository statements on a deployment with many kept runs (real Postgres)', () => {
  let db: TestDatabase;
  let prisma: PrismaClient;
  let pool: PgPool;
  let repo: RunsRepository;
  let ownerId: string;

  const newRun = (): NewRun => ({
    id: randomUUID(),
    ownerId,
    status: 'running',
    goal: 'a goal',
    config: { permissionMode: 'ask' },
    inputs: {},
    files: [],
    plan: { steps: [{ id: 'a', tool: 'wait', arguments: {}, dependsOn: [] }] },
    replica: 'replica-1',
    leaseMs: 60_000,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    prisma = createPrisma({ url: db.url, poolSize: 2, applicationName: 'test' });
    pool = createPgPool({ url: db.url, poolSize: 4, applicationName: 'test-run-statements' });
    repo = new RunsRepository(prisma, pool);
    ownerId = (await new IdentityRepository(prisma).ensureOwner('plans-owner', 'user')).owner.id;
    await pool.query(
      `INSERT INTO run (id, owner_id, status, goal, next_seq, updated_at, finished_at)
       SELECT gen_random_uuid(), $1, 'completed', 'kept', 3, now(), now() FROM generate_series(1, $2)`,
      [ownerId, KEPT],
    );
    await pool.query('ANALYZE run');
  });

  afterAll(async () => {
    await pool.end();
    await prisma.$disconnect();
    await db.drop();
  });

  it('create, append (alone and batched), renew, sweep, read and list read no table whole', async () => {
    const recording = recordStatements(pool);
    const runs = Array.from({ length: 4 }, newRun);
    // Together: the writer's batched create and batched append; then one run alone.
    await Promise.all(runs.map((r) => repo.create(r, [created])));
    const appended = await Promise.all(
      runs.map((r) => repo.append(r.id, [token('a'), token('b')], { replica: 'replica-1' })),
    );
    await Promise.all(
      runs.map((r) =>
        repo.append(r.id, [token('c')], { replica: 'replica-1', update: { status: 'completed' } }),
      ),
    );
    const [one] = runs as [NewRun];
    await repo.append(one.id, [token('d')], { replica: 'replica-1' });
    await repo.renewLeases(
      'replica-1',
      60_000,
      runs.map((r) => r.id),
    );
    await repo.interrupt('the replica stopped');
    await repo.get(one.id);
    await repo.events(one.id, 100);
    await repo.list(ownerId, { limit: 20 });
    recording.stop();
    expect(appended.map((events) => events.map((e) => e.seq))).toEqual(runs.map(() => [2, 3]));
    // The batched append (several runs in one statement) was among the statements checked.
    const batched = recording.sent.filter((s) =>
      s.text.includes('UPDATE run r SET next_seq = r.next_seq + i.n'),
    );
    expect(batched.length).toBeGreaterThanOrEqual(1);

    const { distinct, readWhole } = await wholeTableReads(pool, recording.sent);
    expect(distinct).toBeGreaterThanOrEqual(6);
    expect(readWhole).toEqual([]);
  });
});
