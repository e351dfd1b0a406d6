import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import {
  createTestDatabase,
  recordStatements,
  wholeTableReads,
  type TestDatabase,
} from '@switchyard/testing';
import { TasksRepository } from './tasks.repository';

/** Finished tasks already kept when the statements are planned: enough that a whole read shows. */
const KEPT = 8000;

/*
 * Every statement of a task's life finds its rows through an index, however many tasks are kept: a
 * batched update joined to its input (`jsonb_to_recordset`, estimated at 100 rows) was planned as a
 * hash join over the whole table once the table was a few thousand rows, so each claim, attach or
 * end read every kept task. Checked on the plans Postgres makes, for the values sent and generic.
 */
describe('TasksRepository statements on a deployment with many kept tasks (real Postgres)', () => {
  let db: TestDatabase;
  let pool: Pool;
  let repo: TasksRepository;
  const owner = randomUUID();

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new Pool({ connectionString: db.url, max: 2 });
    repo = new TasksRepository(pool);
    await pool.query(
      `INSERT INTO bg_task (id, owner_id, workflow_id, priority, permission_mode, state, finished_at)
       SELECT gen_random_uuid(), ('00000000-0000-4000-8000-' || lpad((n % 200)::text, 12, '0'))::uuid,
              gen_random_uuid(), 'normal', 'ask', 'completed', now()
       FROM generate_series(1, $1) AS n`,
      [KEPT],
    );
    await pool.query('ANALYZE bg_task');
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('submit, claim, attach, end, kill, list and prune read no table whole', async () => {
    const recording = recordStatements(pool);
    const tasks = await repo.insertAll(
      Array.from({ length: 3 }, () => ({
        id: randomUUID(),
        ownerId: owner,
        workflowId: randomUUID(),
        inputs: {},
        priority: 'normal' as const,
        permissionMode: 'ask' as const,
      })),
    );
    const [a, b, c] = tasks.map((t) => t.id) as [string, string, string];
    const claimed = await repo.claimAll([a, b], [randomUUID(), randomUUID()]);
    await repo.attachAll([{ id: a, runId: randomUUID() }]);
    const ended = await repo.finish([
      { id: a, state: 'completed', runId: null, output: { ok: true }, outputTruncated: false, error: null },
      { id: b, state: 'failed', runId: null, output: null, outputTruncated: false, error: 'no' },
    ]);
    await repo.kill(c, owner);
    await repo.get(a);
    await repo.getVisible(b, owner);
    await repo.list(owner, { limit: 20 });
    await repo.prune([owner]);
    recording.stop();
    // The statements did their work (so the plans checked are of statements that ran).
    expect(claimed.map((t) => t.id).sort()).toEqual([a, b].sort());
    expect(ended.map((t) => t.id).sort()).toEqual([a, b].sort());

    const { distinct, readWhole } = await wholeTableReads(pool, recording.sent);
    expect(distinct).toBeGreaterThanOrEqual(8);
    expect(readWhole).toEqual([]);
  });
});
