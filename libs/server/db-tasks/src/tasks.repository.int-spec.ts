import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { createScratchDatabase, type ScratchDatabase } from '@switchyard/server-db';
import { TasksRepository } from './tasks.repository';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

describe('TasksRepository: a body names its run in its claim (real Postgres)', () => {
  let db: ScratchDatabase;
  let pool: Pool;
  let repo: TasksRepository;
  const owner = randomUUID();
  const workflow = randomUUID();

  const submit = async (n: number): Promise<string[]> => {
    const rows = await repo.insertAll(
      Array.from({ length: n }, () => ({
        id: randomUUID(),
        ownerId: owner,
        workflowId: workflow,
        inputs: {},
        priority: 'normal' as const,
        permissionMode: 'ask' as const,
      })),
    );
    return rows.map((r) => r.id);
  };
  const runOf = async (id: string) => (await repo.get(id))?.runId;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'tasks' });
    pool = new Pool({ connectionString: db.url, max: 4 });
    repo = new TasksRepository(pool);
  });

  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('writes a task started at once running, naming its run, beside queued ones in one statement', async () => {
    const run = randomUUID();
    const base = {
      ownerId: owner,
      workflowId: workflow,
      inputs: {},
      priority: 'normal' as const,
      permissionMode: 'ask',
    };
    const [queued, started] = await repo.insertAll([
      { ...base, id: randomUUID() },
      { ...base, id: randomUUID(), runId: run },
    ]);
    expect(queued).toMatchObject({ state: 'queued', runId: null, startedAt: null });
    expect(started).toMatchObject({ state: 'running', runId: run });
    expect(started?.startedAt?.getTime()).toBe(started?.createdAt.getTime());
    // Started already: no claim moves it again, and a dispatch leaves it as it is.
    expect(await repo.claimAll([started?.id as string], [randomUUID()])).toEqual([]);
    expect(await runOf(started?.id as string)).toBe(run);
    // A refused submit's discard removes only a queued row, never a started one.
    await repo.discard(started?.id as string);
    expect((await repo.get(started?.id as string))?.state).toBe('running');
  });

  it('records each claimed task with the run its body named, in one statement', async () => {
    const [a, b, killed] = (await submit(3)) as [string, string, string];
    await repo.kill(killed, owner); // queued: cancelled at once, never claimable
    const runs = [randomUUID(), randomUUID(), randomUUID()];
    const claimed = await repo.claimAll([a, b, killed], runs);
    expect(new Map(claimed.map((r) => [r.id, [r.state, r.runId]]))).toEqual(
      new Map([
        [a, ['running', runs[0]]],
        [b, ['running', runs[1]]],
      ]),
    );
    expect(await runOf(killed)).toBeNull();
    // Claimed again (a job handed on): nothing changes, the first run stays the task's.
    expect(await repo.claimAll([a], [randomUUID()])).toEqual([]);
    expect(await runOf(a)).toBe(runs[0]);
  });

  it('finds the running tasks no body started: their named run was never written', async () => {
    const [started, handed, queued] = (await submit(3)) as [string, string, string];
    const runs = [randomUUID(), randomUUID()];
    await repo.claimAll([started, handed], runs);
    await pool.query(`INSERT INTO owner (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      owner,
      `o-${owner}`,
    ]);
    await pool.query(`INSERT INTO run (id, owner_id, updated_at) VALUES ($1, $2, now())`, [runs[0], owner]);
    const all = [started, handed, queued, randomUUID()];
    // Not yet: a body may be between its job's pickup and its run's write.
    expect(await repo.notStarted(all, 60_000)).toEqual([]);
    const rows = await repo.notStarted(all, 0);
    expect(rows.map((r) => [r.id, r.state, r.runId])).toEqual([[handed, 'running', runs[1]]]);
    expect(await repo.notStarted([], 0)).toEqual([]);
    // Killed before any body took it: it ends cancelled, once.
    expect(await repo.cancelBeforeStart(handed, 'running')).toMatchObject({
      state: 'cancelled',
      killRequested: true,
    });
    expect(await repo.cancelBeforeStart(handed, 'running')).toBeNull();
    expect(await repo.cancelBeforeStart(queued, 'running')).toBeNull();
  });

  it('ends interrupted the running tasks whose run ended long enough ago without their end recorded, once', async () => {
    const [lost, recent, going, queued] = (await submit(4)) as [string, string, string, string];
    const runs = [randomUUID(), randomUUID(), randomUUID()];
    await repo.claimAll([lost, recent, going], runs);
    await pool.query(`INSERT INTO owner (id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [
      owner,
      `o-${owner}`,
    ]);
    const run = (id: string, status: string, endedSecondsAgo: number | null) =>
      pool.query(
        `INSERT INTO run (id, owner_id, status, updated_at, finished_at)
         VALUES ($1, $2, $3::"RunStatus", now(), now() - make_interval(secs => $4::double precision))`,
        [id, owner, status, endedSecondsAgo],
      );
    await run(runs[0] as string, 'completed', 120);
    await run(runs[1] as string, 'failed', 5);
    await run(runs[2] as string, 'running', null);
    const all = [lost, recent, going, queued, randomUUID()];
    const ended = await repo.endUnreported(all, 60_000);
    expect(ended.map((r) => [r.id, r.state, r.runId, r.fromWebhook])).toEqual([
      [lost, 'interrupted', runs[0], false],
    ]);
    expect(ended[0]?.error).toBe(
      'its run ended completed, and the end was never reported to the scheduler; the run has what happened',
    );
    expect(ended[0]?.finishedAt).not.toBeNull();
    expect(await repo.endUnreported(all, 60_000)).toEqual([]);
    // A run that ended moments ago may have its report on the way; one still going is not touched.
    expect((await repo.get(recent))?.state).toBe('running');
    expect((await repo.get(going))?.state).toBe('running');
    expect((await repo.endUnreported([recent], 0)).map((r) => r.id)).toEqual([recent]);
    expect(await repo.endUnreported([], 0)).toEqual([]);
  });

  it('an interruption reported without a run keeps the run recorded; another end without one clears it', async () => {
    const [handedOn, failed] = (await submit(2)) as [string, string];
    const runs = [randomUUID(), randomUUID()];
    await repo.claimAll([handedOn, failed], runs);
    const end = { output: null, outputTruncated: false, error: 'x' };
    await repo.finish([
      { id: handedOn, state: 'interrupted', runId: null, ...end },
      { id: failed, state: 'failed', runId: null, ...end },
    ]);
    expect(await runOf(handedOn)).toBe(runs[0]);
    expect(await runOf(failed)).toBeNull();
  });

  it('a task handed over twice in one batch keeps the run of its first claim', async () => {
    const [id] = (await submit(1)) as [string];
    const first = randomUUID();
    const claimed = await repo.claimAll([id, id], [first, randomUUID()]);
    expect(claimed.map((r) => [r.id, r.runId])).toEqual([[id, first]]);
  });

  it('an end reported without a run clears the run named at the claim (the run never started)', async () => {
    const [started, notStarted] = (await submit(2)) as [string, string];
    const [run, named] = [randomUUID(), randomUUID()];
    await repo.claimAll([started, notStarted], [run, named]);
    const ended = await repo.finish([
      { id: started, state: 'completed', runId: run, output: 1, outputTruncated: false, error: null },
      {
        id: notStarted,
        state: 'failed',
        runId: null,
        output: null,
        outputTruncated: false,
        error: 'workflow "nightly" has no published version',
      },
    ]);
    expect(ended.map((e) => e.id).sort()).toEqual([started, notStarted].sort());
    expect(await runOf(started)).toBe(run);
    expect(await runOf(notStarted)).toBeNull();
  });

  it('says of each task it moves whether a webhook delivery submitted it (its audit follows only those)', async () => {
    const [plain, hooked] = (await submit(2)) as [string, string];
    const trigger = randomUUID();
    await pool.query(
      `INSERT INTO webhook_trigger (id, owner_id, workflow_id, permission_mode, secret_digest)
       VALUES ($1, $2, $3, 'ask', repeat('0', 64))`,
      [trigger, owner, workflow],
    );
    await pool.query(
      `INSERT INTO webhook_delivery (id, trigger_id, state, task_id, accepted_at)
       VALUES ($1, $2, 'QUEUED', $3, now())`,
      [randomUUID(), trigger, hooked],
    );
    const claimed = await repo.claimAll([plain, hooked], [randomUUID(), randomUUID()]);
    expect(Object.fromEntries(claimed.map((r) => [r.id, r.fromWebhook]))).toEqual({
      [plain]: false,
      [hooked]: true,
    });
    const ended = await repo.finish(
      [plain, hooked].map((id) => ({
        id,
        state: 'completed' as const,
        runId: null,
        output: null,
        outputTruncated: false,
        error: null,
      })),
    );
    expect(Object.fromEntries(ended.map((r) => [r.id, r.fromWebhook]))).toEqual({
      [plain]: false,
      [hooked]: true,
    });
  });

  it('a claim without run ids (an executor of the previous version) leaves the run to its attach', async () => {
    const [id] = (await submit(1)) as [string];
    expect((await repo.claimAll([id]))[0]?.runId).toBeNull();
    const run = randomUUID();
    expect((await repo.attachAll([{ id, runId: run }])).get(id)).toEqual({ killRequested: false });
    expect(await runOf(id)).toBe(run);
  });
});
