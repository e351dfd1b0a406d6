import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  api,
  createTestDatabase,
  FakeLlmServer,
  openStream,
  postBothWays,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';
import { Rpc, type RpcResponse } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createQueue, createRedis, createWorker, FairQueue, taskQueueNames } from '@switchyard/server-queue';
import { Client } from 'pg';

interface TaskJson {
  id: string;
  state: string;
  queued: boolean;
  runId: string | null;
  output: unknown;
  outputTruncated: boolean;
  queueWaitMs: number;
  runDurationMs: number | null;
  priority: string;
}

/** Background tasks end to end: submit, run on an executor, capacity refusals, kills. */
describe('background tasks end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let llm: FakeLlmServer;
  let workspace: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const publish = async (ms: number, token = alice) => {
    const wf = await call('POST', '/api/workflows', token, {
      name: `wait ${ms}`,
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps: [{ id: 'w', tool: 'wait', arguments: { ms, value: { tag: '{{inputs.tag}}' } } }] },
    });
    expect(wf.status).toBe(201);
    const id = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${id}/publish`, token, { revision: 1 })).status).toBe(200);
    return id;
  };
  const task = async (id: string, token = alice) =>
    (await call('GET', `/api/agent/tasks/${id}`, token)).json as unknown as TaskJson;
  /** The task's run is written (its id is named at the claim, the run follows a moment later). */
  const runExists = async (t: TaskJson, token = alice) =>
    t.runId !== null && (await call('GET', `/api/agent/runs/${t.runId}`, token)).status === 200;
  /** The task once the scheduler has dispatched it (running, its run id named). */
  const dispatchedTask = (id: string) =>
    waitFor(
      async () => {
        const t = await task(id);
        return t.state === 'running' ? t : undefined;
      },
      60_000,
      50,
    );
  const finished = (id: string, token = alice, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const t = await task(id, token);
        return ['completed', 'failed', 'cancelled', 'interrupted'].includes(t.state) ? t : undefined;
      },
      timeoutMs,
      100,
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    llm = await FakeLlmServer.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-tasks-')));
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('tasks'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        // A logical database of its own: this suite flushes it.
        REDIS_URL: 'redis://127.0.0.1:6379/12',
        WORKSPACE_DIR: workspace,
        // Some tasks here wait far longer than the test, so they end only when killed.
        TOOL_TIMEOUT_MS: '600000',
        // Small, so one test's run cuts its result: the task must say its output is cut.
        RUN_RESULT_LIMIT_BYTES: '2048',
        LLM_PROVIDER: 'openai',
        LLM_MODEL: 'fake',
        LLM_BASE_URL: llm.baseUrl,
      },
      ['gateway', 'planner', 'executor', 'tool-registry', 'scheduler'],
    );
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
  });

  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
    await db?.drop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('runs a submitted workflow in the background and keeps its snapshot, for its owner only', async () => {
    const wf = await publish(0);
    const submitted = await call('POST', '/api/agent/tasks', alice, {
      workflowId: wf,
      inputs: { tag: 'bg' },
      priority: 'interactive',
    });
    expect(submitted.status).toBe(202);
    const id = submitted.json['id'] as string;
    const done = await finished(id);
    expect(done).toMatchObject({
      state: 'completed',
      queued: false,
      priority: 'interactive',
      output: { tag: 'bg' },
    });
    expect(done.runId).not.toBeNull();
    expect(done.runDurationMs).not.toBeNull();
    expect((await call('GET', `/api/agent/tasks/${id}`, bob)).status).toBe(404);
    expect(((await call('GET', '/api/agent/tasks', bob)).json['items'] as unknown[]).length).toBe(0);
    const mine = (await call('GET', '/api/agent/tasks', alice)).json['items'] as TaskJson[];
    expect(mine.map((t) => t.id)).toContain(id);
    // A task's run is an ordinary run in the history.
    expect((await call('GET', `/api/agent/runs/${String(done.runId)}`, alice)).json['status']).toBe(
      'completed',
    );
  });

  it('starts a task submitted while nothing waits at once: answered running, naming its run', async () => {
    const wf = await publish(0);
    const submitted = await call('POST', '/api/agent/tasks', alice, {
      workflowId: wf,
      inputs: { tag: 'now' },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.json).toMatchObject({ state: 'running', queued: false, queueWaitMs: 0 });
    const runId = submitted.json['runId'];
    expect(runId).toEqual(expect.any(String));
    expect(submitted.json['startedAt']).toBe(submitted.json['createdAt']);
    expect(await finished(submitted.json['id'] as string)).toMatchObject({
      state: 'completed',
      runId,
      output: { tag: 'now' },
    });
  });

  it('frees a slot taken for a submit whose row was never written, but not one whose row may be on its way', async () => {
    const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'e2e-rowless' });
    const fairPrefix = taskQueueNames(stack.env['NATS_SUBJECT_PREFIX'] ?? '').fairPrefix;
    const fair = new FairQueue(redis, { prefix: fairPrefix });
    const owner = randomUUID();
    const slot = (taskId: string) => ({
      taskId,
      ownerId: owner,
      priority: 'normal' as const,
      enqueuedAtMs: 0,
    });
    /** A slot taken at once, then dated (the hash's `a`, when it was taken by Redis's clock). */
    const taken = async (taskId: string, agoS: number) => {
      expect(await fair.startAll([slot(taskId)])).toEqual([true]);
      const [seconds] = await redis.time();
      await redis.hset(`${fairPrefix}:t:${taskId}`, 'a', (Number(seconds) - agoS) * 1000);
    };
    // Its replica stopped before the row was written, two minutes ago.
    const lost = (taskId: string) => taken(taskId, 120);
    const [first, second, writing] = [randomUUID(), randomUUID(), randomUUID()];
    try {
      await lost(first);
      // Its row is being written: dated an hour ahead, so however slow this machine, it stays recent.
      await taken(writing, -3_600);
      // The reconciliation (every 5 s) frees the lost one: the bound only guards a hang.
      await waitFor(async () => !(await fair.holds([first]))[0], 60_000, 100);
      // And a later pass the next one; the one being written keeps its slot through both.
      await lost(second);
      await waitFor(async () => !(await fair.holds([second]))[0], 60_000, 100);
      expect(await fair.holds([writing])).toEqual([true]);
    } finally {
      await fair.finish(first, second, writing);
      redis.disconnect();
    }
  });

  it('gives a slot back to a task running with none, which then runs', async () => {
    const wf = await publish(0);
    const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'e2e-unheld' });
    const names = taskQueueNames(stack.env['NATS_SUBJECT_PREFIX'] ?? '');
    const fair = new FairQueue(redis, { prefix: names.fairPrefix });
    const jobs = createQueue(names.queue, redis, names.bullPrefix);
    const executors = stack.replicas('executor');
    for (const e of executors) e.child.kill('SIGSTOP');
    try {
      const submitted = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'unheld' },
      });
      expect(submitted.json).toMatchObject({ state: 'running' });
      const id = submitted.json['id'] as string;
      // As a rebuild that read Postgres before this row was written would leave it: running, no
      // slot, no job.
      await jobs.remove(id);
      await fair.finish(id);
      const owned = async () =>
        ((await call('GET', '/api/agent/tasks/capacity', alice)).json['owner'] as { running: number })
          .running;
      expect(await owned()).toBe(0);
      // Two reconciliations (5 s apart) hold its slot again; a third hands it over (no run was written).
      await waitFor(async () => (await owned()) === 1, 60_000, 100);
      for (const e of executors) e.child.kill('SIGCONT');
      expect(await finished(id, alice, 120_000)).toMatchObject({
        state: 'completed',
        output: { tag: 'unheld' },
      });
      await waitFor(async () => (await owned()) === 0, 60_000, 100);
    } finally {
      for (const e of executors) e.child.kill('SIGCONT');
      await jobs.close();
      redis.disconnect();
    }
  });

  it('a task started at once whose row is refused leaves nothing behind: no row, its slot free', async () => {
    const wf = await publish(0);
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    await pg.query(`CREATE FUNCTION e2e_refuse_task_row() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.inputs->>'tag' = 'refused' THEN RAISE EXCEPTION 'e2e: this row is refused'; END IF;
        RETURN NEW;
      END $$`);
    await pg.query(
      'CREATE TRIGGER e2e_refuse_task_row BEFORE INSERT ON bg_task FOR EACH ROW EXECUTE FUNCTION e2e_refuse_task_row()',
    );
    try {
      const before = (await call('GET', '/api/agent/tasks', alice)).json['items'] as TaskJson[];
      const refused = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'refused' },
      });
      expect(refused.status).toBe(500);
      expect(refused.json).toMatchObject({ code: expect.any(String) });
      const capacity = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
      expect(capacity).toMatchObject({ running: 0, queued: 0 });
      const after = (await call('GET', '/api/agent/tasks', alice)).json['items'] as TaskJson[];
      expect(after.map((t) => t.id)).toEqual(before.map((t) => t.id));
    } finally {
      await pg.query('DROP TRIGGER IF EXISTS e2e_refuse_task_row ON bg_task');
      await pg.query('DROP FUNCTION IF EXISTS e2e_refuse_task_row()');
      await pg.end();
    }
  });

  it('says the output is cut when the run cut its result', async () => {
    const wf = await publish(0);
    const tag = 'z'.repeat(4_000);
    const submitted = await call('POST', '/api/agent/tasks', alice, { workflowId: wf, inputs: { tag } });
    const done = await finished(submitted.json['id'] as string);
    expect(done).toMatchObject({ state: 'completed', outputTruncated: true });
    expect(done.output).toBe(JSON.stringify({ tag }).slice(0, 2048));
  });

  it('refuses bad input before admission: unpublished workflow, inputs that do not fit', async () => {
    const wf = await publish(0);
    expect(
      (await call('POST', '/api/agent/tasks', bob, { workflowId: wf, inputs: { tag: 'x' } })).status,
    ).toBe(404);
    const misfit = await call('POST', '/api/agent/tasks', alice, { workflowId: wf, inputs: { tag: 7 } });
    // admitted, then failed explicitly with the reason (inputs are checked when the body starts)
    const t = await finished(misfit.json['id'] as string);
    expect(t.state).toBe('failed');
  });

  it("answers a submit on the gateway's fast path exactly as the framework route does", async () => {
    const wf = await publish(0);
    const both = async (raw: string, token: string | undefined) => {
      const { fast, framework } = await postBothWays(stack.gatewayUrl, '/api/agent/tasks', raw, token);
      const shape = (r: ApiResponse) => {
        // What differs between two tasks: ids and times (an idle stack starts each at once).
        const {
          correlationId: _c,
          id: _id,
          createdAt: _t,
          queueWaitMs: _w,
          runId: _r,
          startedAt: _s,
          runDurationMs: _d,
          ...rest
        } = r.json;
        return { status: r.status, type: r.type, retryAfter: r.headers.get('retry-after'), body: rest };
      };
      expect(fast.headers.get('x-correlation-id')).toBeTruthy();
      expect(shape(fast)).toEqual(shape(framework));
      return shape(fast);
    };
    const ok = JSON.stringify({ workflowId: wf, inputs: { tag: 'fast' } });
    expect((await both(ok, alice)).status).toBe(202);
    expect((await both('{"workflowId": ', alice)).body).toMatchObject({ code: 'validation_failed' });
    expect((await both('"a string"', alice)).body).toMatchObject({ code: 'validation_failed' });
    expect((await both('{"workflowId": ', undefined)).body).toMatchObject({ code: 'validation_failed' });
    expect((await both(ok, undefined)).status).toBe(401);
    expect((await both(ok, 'not-a-token')).status).toBe(401);
    expect((await both(JSON.stringify({ inputs: {} }), alice)).body).toMatchObject({
      code: 'validation_failed',
      errors: [{ path: 'body.workflowId' }],
    });
    expect((await both(JSON.stringify({ workflowId: wf, inputs: { tag: 'a\u0000b' } }), alice)).status).toBe(
      400,
    );
    expect((await both(ok, bob)).status).toBe(404);
    expect((await both('', alice)).status).toBe(400);
  });

  it('fills 16 slots and the 32-task owner queue, then answers 429 with the scope; kills free slots', async () => {
    // Far longer than the test: no slot frees up on its own, however slow the machine (all are killed below).
    const wf = await publish(120_000);
    const ids: string[] = [];
    let refused: ApiResponse | undefined;
    for (let i = 0; i < 60 && !refused; i++) {
      const res = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: String(i) },
        priority: 'normal',
      });
      if (res.status === 202) ids.push(res.json['id'] as string);
      else refused = res;
    }
    // normal work may hold 24 of an owner's 32 queue slots (8 stay for interactive work); up to 16 run
    expect(ids.length).toBeGreaterThanOrEqual(24);
    expect(ids.length).toBeLessThanOrEqual(40);
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(refused?.json['details']).toMatchObject({
      retryable: true,
      retryAfterSeconds: 1,
      capacityScope: 'owner-priority',
      capacityPriority: 'normal',
    });
    // interactive work still gets in
    const urgent = await call('POST', '/api/agent/tasks', alice, {
      workflowId: wf,
      inputs: { tag: 'now' },
      priority: 'interactive',
    });
    expect(urgent.status).toBe(202);
    ids.push(urgent.json['id'] as string);

    await waitFor(
      async () => (await call('GET', '/api/agent/tasks/capacity', alice)).json['running'] === 16,
      60_000,
      100,
    );
    const capacity = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
    expect(capacity).toMatchObject({
      running: 16,
      runningLimit: 16,
      globalQueueLimit: 128,
      policy: 'owner-round-robin-weighted-priority',
    });
    expect(capacity['owner']).toMatchObject({ ownerQueueLimit: 32 });

    const queued = [];
    for (const id of ids) if ((await task(id)).queued) queued.push(id);
    expect(queued.length).toBeGreaterThan(0);
    const killedQueued = await call(
      'POST',
      `/api/agent/tasks/${queued[queued.length - 1] as string}/kill`,
      alice,
    );
    expect(killedQueued.json).toMatchObject({ state: 'cancelled', queued: false });

    const running = [];
    for (const id of ids) if ((await task(id)).state === 'running') running.push(id);
    const victim = running[0] as string;
    await waitFor(async () => runExists(await task(victim)), 60_000, 100);
    expect((await call('POST', `/api/agent/tasks/${victim}/kill`, alice)).status).toBe(200);
    expect((await finished(victim)).state).toBe('cancelled');
    for (const id of ids) await call('POST', `/api/agent/tasks/${id}/kill`, alice);
  });

  it("frees a body's slot when the body ends, not once Postgres has recorded the end", async () => {
    await waitFor(
      async () => (await call('GET', '/api/agent/tasks/capacity', alice)).json['running'] === 0,
      60_000,
      100,
    );
    // Recording the end of the task tagged "held" waits for a lock this test holds: whatever the
    // machine's speed, that end stays unrecorded until the test lets it go.
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    const HOLD = 0x53594e44;
    await pg.query(`CREATE FUNCTION e2e_hold_task_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.state = 'running' AND NEW.state <> 'running' AND NEW.inputs->>'tag' = 'held' THEN
          PERFORM pg_advisory_xact_lock(${HOLD});
        END IF;
        RETURN NEW;
      END $$`);
    await pg.query(
      'CREATE TRIGGER e2e_hold_task_end BEFORE UPDATE ON bg_task FOR EACH ROW EXECUTE FUNCTION e2e_hold_task_end()',
    );
    await pg.query('SELECT pg_advisory_lock($1)', [HOLD]);
    const long: string[] = [];
    try {
      const slow = await publish(120_000);
      const quick = await publish(0);
      const submit = async (workflowId: string, tag: string) => {
        const res = await call('POST', '/api/agent/tasks', alice, {
          workflowId,
          inputs: { tag },
          priority: 'normal',
        });
        expect(res.status).toBe(202);
        return res.json['id'] as string;
      };
      // 15 slots held for the whole test, the 16th by "held"; "next" can only start in held's slot.
      for (let i = 0; i < 15; i++) long.push(await submit(slow, `long ${i}`));
      const held = await submit(quick, 'held');
      const next = await submit(quick, 'next');
      await waitFor(async () => ((await task(next)).queued ? undefined : true), 60_000, 100);
      // held's body ended and its end is still not recorded: its slot went to next all the same.
      expect((await task(held)).state).toBe('running');
      expect(['running', 'completed']).toContain((await task(next)).state);
      expect((await call('GET', '/api/agent/tasks/capacity', alice)).json['running']).toBeLessThanOrEqual(16);
      await pg.query('SELECT pg_advisory_unlock($1)', [HOLD]);
      expect((await finished(held)).state).toBe('completed');
      expect((await finished(next)).state).toBe('completed');
    } finally {
      await pg.query('SELECT pg_advisory_unlock_all()');
      await pg.query('DROP TRIGGER IF EXISTS e2e_hold_task_end ON bg_task');
      await pg.query('DROP FUNCTION IF EXISTS e2e_hold_task_end()');
      await pg.end();
      for (const id of long) await call('POST', `/api/agent/tasks/${id}/kill`, alice);
    }
  });

  it('loses no accepted task when Redis loses everything mid-load', async () => {
    // Every body waits for a gate file the test writes after the flush, so "some running, some
    // queued" holds however slow the machine is (a fixed wait closed that window on a busy one).
    // The read is retried for up to a minute (4+8+16+32 s): a bound that only guards a hang.
    const gate = join(workspace, `gate-${randomBytes(4).toString('hex')}.txt`);
    const created = await call('POST', '/api/workflows', alice, {
      name: 'gated',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: {
        steps: [
          {
            id: 'gate',
            tool: 'read_file',
            arguments: { filePath: gate },
            retry: { attempts: 5, backoffMs: 4_000 },
          },
          {
            id: 'w',
            tool: 'wait',
            arguments: { ms: 0, value: { tag: '{{inputs.tag}}' } },
            dependsOn: ['gate'],
          },
        ],
      },
    });
    expect(created.status).toBe(201);
    const wf = created.json['id'] as string;
    expect((await call('POST', `/api/workflows/${wf}/publish`, alice, { revision: 1 })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: `f${i}` },
        priority: (['interactive', 'normal', 'batch'] as const)[i % 3],
      });
      expect(res.status).toBe(202);
      ids.push(res.json['id'] as string);
    }
    // Some running, some waiting: then Redis forgets everything.
    await waitFor(
      async () => {
        const c = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
        return Number(c['running']) >= 4 && Number(c['queued']) >= 4;
      },
      60_000,
      100,
    );
    const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'e2e-flush' });
    await redis.connect();
    await redis.flushdb();
    redis.disconnect();
    const me = await call('GET', '/api/me', alice);
    const area = join(workspace, 'owners', (me.json['owner'] as { id: string }).id);
    mkdirSync(area, { recursive: true });
    writeFileSync(join(area, basename(gate)), 'open');
    const ends = await Promise.all(ids.map((id) => finished(id, alice, 170_000)));
    expect(ends.map((t) => t.state)).toEqual(ids.map(() => 'completed'));
    expect(ends.map((t) => t.output)).toEqual(ids.map((_, i) => ({ tag: `f${i}` })));
  });

  it('hands a dispatched task over again when Redis lost its job before any body started it, and runs it once', async () => {
    const wf = await publish(0);
    const executors = stack.replicas('executor');
    // No executor takes jobs: the task is dispatched (running, its run id named) and its job waits.
    for (const e of executors) e.child.kill('SIGSTOP');
    let resumed = false;
    try {
      const submitted = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'lost' },
      });
      expect(submitted.status).toBe(202);
      const id = submitted.json['id'] as string;
      const dispatched = await dispatchedTask(id);
      expect(dispatched.runId).toMatch(/^[0-9a-f-]{36}$/);
      const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'e2e-flush' });
      await redis.connect();
      await redis.flushdb();
      redis.disconnect();
      for (const e of executors) e.child.kill('SIGCONT');
      resumed = true;
      // The scheduler rebuilds the queues, finds the task running with no job and no run, and hands
      // it over again (every 5 s): the bound only guards a hang.
      const end = await finished(id, alice, 120_000);
      expect(end).toMatchObject({ state: 'completed', output: { tag: 'lost' }, runId: dispatched.runId });
      const runs = (await call('GET', '/api/agent/runs?limit=200', alice)).json['items'] as Array<{
        id: string;
      }>;
      expect(runs.filter((r) => r.id === dispatched.runId)).toHaveLength(1);
    } finally {
      if (!resumed) for (const e of executors) e.child.kill('SIGCONT');
    }
  });

  it('ends interrupted a task whose body ended without its end reaching the scheduler, and frees its slot', async () => {
    const wf = await publish(0);
    const executors = stack.replicas('executor');
    for (const e of executors) e.child.kill('SIGSTOP');
    try {
      const submitted = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'unreported' },
      });
      const id = submitted.json['id'] as string;
      const dispatched = await dispatchedTask(id);
      // As if a body had run and ended two minutes ago and its report was given up: its run ended,
      // its job is gone, the task still says running.
      const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'e2e-unreported' });
      const names = taskQueueNames(stack.env['NATS_SUBJECT_PREFIX'] ?? '');
      const jobs = createQueue(names.queue, redis, names.bullPrefix);
      await jobs.remove(id);
      await jobs.close();
      redis.disconnect();
      const pg = new Client({ connectionString: db.url });
      await pg.connect();
      await pg.query(
        `INSERT INTO run (id, owner_id, status, updated_at, finished_at, background)
         VALUES ($1, $2, 'completed', now(), now() - interval '2 minutes', true)`,
        [dispatched.runId, ((await call('GET', '/api/me', alice)).json['owner'] as { id: string }).id],
      );
      await pg.end();
      // The reconciliation (every 5 s) ends it: the bound only guards a hang.
      const end = await finished(id, alice, 120_000);
      expect(end).toMatchObject({
        state: 'interrupted',
        runId: dispatched.runId,
        error:
          'its run ended completed, and the end was never reported to the scheduler; the run has what happened',
      });
      const capacity = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
      expect(capacity['owner']).toMatchObject({ running: 0 });
    } finally {
      for (const e of executors) e.child.kill('SIGCONT');
    }
  });

  it('a kill of a dispatched task no body has taken yet ends it at once: its job is taken back, it never runs', async () => {
    const wf = await publish(0);
    const executors = stack.replicas('executor');
    for (const e of executors) e.child.kill('SIGSTOP');
    let id = '';
    let runId: string | null = null;
    try {
      const submitted = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'kill' },
      });
      id = submitted.json['id'] as string;
      runId = (await dispatchedTask(id)).runId;
      // No executor hears the kill: the scheduler itself ends the task, whatever the broadcast does.
      const killed = await call('POST', `/api/agent/tasks/${id}/kill`, alice);
      expect(killed.status).toBe(200);
      expect(killed.json).toMatchObject({ state: 'cancelled', error: 'killed before it started' });
      const capacity = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
      expect(capacity['owner']).toMatchObject({ running: 0 });
    } finally {
      for (const e of executors) e.child.kill('SIGCONT');
    }
    // A later task runs (the executors are back): the killed one never did.
    const after = await call('POST', '/api/agent/tasks', alice, { workflowId: wf, inputs: { tag: 'after' } });
    expect((await finished(after.json['id'] as string)).state).toBe('completed');
    expect(await task(id)).toMatchObject({ state: 'cancelled' });
    expect((await call('GET', `/api/agent/runs/${String(runId)}`, alice)).status).toBe(404);
  });

  it('an executor of the previous version takes a task this scheduler dispatched: its claim is answered with the task', async () => {
    const wf = await publish(0);
    const executors = stack.replicas('executor');
    for (const e of executors) e.child.kill('SIGSTOP');
    const bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'previous-executor',
      subjectPrefix: stack.env['NATS_SUBJECT_PREFIX'] ?? '',
      defaultTimeoutMs: 10_000,
    });
    const names = taskQueueNames(stack.env['NATS_SUBJECT_PREFIX'] ?? '');
    const claims: Array<RpcResponse<typeof Rpc.tasks.claimBatch>> = [];
    const runId = randomUUID();
    // As the previous version's worker did: take the job, claim the task by its id naming the run.
    const worker = createWorker<{ taskId: string }>(
      names.queue,
      {
        url: 'redis://127.0.0.1:6379/12',
        name: 'previous-executor',
        prefix: names.bullPrefix,
        concurrency: 1,
      },
      async (job) => {
        claims.push(await bus.call(Rpc.tasks.claimBatch, { ids: [job.data.taskId], runIds: [runId] }));
      },
    );
    try {
      const submitted = await call('POST', '/api/agent/tasks', alice, {
        workflowId: wf,
        inputs: { tag: 'old' },
      });
      const id = submitted.json['id'] as string;
      await waitFor(() => claims.length === 1, 60_000, 20);
      const me = (await call('GET', '/api/me', alice)).json['owner'] as { id: string };
      expect(claims[0]?.claims).toEqual([
        {
          go: true,
          task: { ownerId: me.id, workflowId: wf, inputs: { tag: 'old' }, permissionMode: 'ask' },
        },
      ]);
      // Its body runs under the run it named, and its end is recorded as any other.
      expect(await task(id)).toMatchObject({ state: 'running', runId });
      // Once its job is done, a claim of the same task again is refused: never a second body.
      const redis = createRedis({ url: 'redis://127.0.0.1:6379/12', name: 'previous-executor-jobs' });
      const jobs = createQueue(names.queue, redis, names.bullPrefix);
      await waitFor(async () => (await jobs.getJob(id)) === undefined, 60_000, 20);
      await jobs.close();
      redis.disconnect();
      const again = await bus.call(Rpc.tasks.claimBatch, { ids: [id], runIds: [randomUUID()] });
      expect(again.claims).toEqual([{ go: false, reason: 'interrupted: its first body stopped' }]);
      expect(await task(id)).toMatchObject({ state: 'interrupted', runId });
    } finally {
      await worker.close();
      await bus.close();
      for (const e of executors) e.child.kill('SIGCONT');
    }
  });

  it('a model submits a workflow with task_submit_workflow and waits for it with task_output', async () => {
    const wf = await publish(200);
    llm.enqueue({
      content: JSON.stringify({
        steps: [
          {
            id: 'submit',
            tool: 'task_submit_workflow',
            arguments: { workflowId: wf, inputs: { tag: 'from the model' } },
          },
          {
            id: 'wait',
            tool: 'task_output',
            // Waits until the task ends: the bound only guards a hang (a busy machine queues it a while).
            arguments: { taskId: '{{node.submit.result.taskId}}', timeoutMs: 150_000 },
            dependsOn: ['submit'],
          },
          { id: 'capacity', tool: 'task_capacity', arguments: {} },
        ],
      }),
    });
    const res = await call('POST', '/api/agent/run', alice, {
      goal: 'run it in the background',
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    expect(res.status).toBe(200);
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${String(res.json['runId'])}`, {
      'x-switchyard-token': alice,
    });
    const done = await s.next('complete', 170_000);
    s.close();
    const results = done.data.data.results as Record<string, Record<string, unknown>>;
    expect(results['wait']).toMatchObject({
      state: 'completed',
      priority: 'normal',
      output: { tag: 'from the model' },
    });
    expect(results['capacity']).toMatchObject({
      runningLimit: 16,
      policy: 'owner-round-robin-weighted-priority',
    });
  });

  it('reports a task whose executor was killed as interrupted, and never runs it again', async () => {
    const wf = await publish(30_000);
    const submitted = await call('POST', '/api/agent/tasks', alice, {
      workflowId: wf,
      inputs: { tag: 'doomed' },
    });
    const id = submitted.json['id'] as string;
    // The claim names the run; wait for the run itself, so the kill lands in a run under way.
    await waitFor(async () => runExists(await task(id)), 60_000, 100);
    const { runId } = await task(id);
    await stack.restartAll('executor', 'SIGKILL');
    // BullMQ hands the dead worker's job on once its lock expires (10 s) and a stall check sees it
    // (every 5 s) on a restarted executor: the bound only guards a hang (a busy machine boots slowly).
    const end = await waitFor(
      async () => {
        const t = await task(id);
        if (t.state !== 'interrupted') throw new Error(`the task is ${t.state}`);
        return t;
      },
      150_000,
      250,
    );
    expect(end.runId).toBe(runId); // the same run: nothing started it again
    const runs = (await call('GET', '/api/agent/runs?limit=200', alice)).json['items'] as Array<{
      goal: string;
    }>;
    expect(runs.filter((r) => r.goal === 'wait 30000')).toHaveLength(1);
  });

  it('under racing producers from several owners: limits hold, every submit is accepted and ends, or is refused with 429', async () => {
    const carol = (await call('POST', '/api/tokens', admin, { owner: 'carol', role: 'user' })).json[
      'token'
    ] as string;
    const owners = [alice, bob, carol];
    const workflows = await Promise.all(owners.map((t) => publish(50, t)));
    let maxRunning = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const c = (await call('GET', '/api/agent/tasks/capacity', alice)).json;
        maxRunning = Math.max(maxRunning, Number(c['running']));
        expect(Number(c['queued'])).toBeLessThanOrEqual(128);
        expect((c['owner'] as { queued: number }).queued).toBeLessThanOrEqual(32);
      }
    })();
    const priorities = ['interactive', 'normal', 'batch'] as const;
    const answers = await Promise.all(
      owners.flatMap((token, o) =>
        Array.from({ length: 60 }, (_, i) =>
          call('POST', '/api/agent/tasks', token, {
            workflowId: workflows[o],
            inputs: { tag: `${o}-${i}` },
            priority: priorities[i % 3],
          }).then((res) => ({ res, token })),
        ),
      ),
    );
    expect(answers.every(({ res }) => res.status === 202 || res.status === 429)).toBe(true);
    const refused = answers.filter(({ res }) => res.status === 429);
    for (const { res } of refused) {
      expect(res.headers.get('retry-after')).toBe('1');
      expect(['owner', 'global', 'owner-priority', 'global-priority']).toContain(
        (res.json['details'] as { capacityScope: string }).capacityScope,
      );
    }
    const accepted = answers.filter(({ res }) => res.status === 202);
    expect(accepted.length).toBeGreaterThan(0);
    // Up to ~150 tasks through 16 slots: minutes on a busy machine; the bound only guards a hang.
    const ends = await Promise.all(
      accepted.map(({ res, token }) => finished(res.json['id'] as string, token, 240_000)),
    ).finally(() => (sampling = false));
    await sampler;
    expect(ends.every((t) => t.state === 'completed')).toBe(true);
    expect(maxRunning).toBeLessThanOrEqual(16);
  }, 300_000);

  it('a kill racing with the start still cancels: no killed task completes', async () => {
    // Longer than any kill can be late on a busy machine, so "completed" can only mean the kill was lost.
    const wf = await publish(60_000);
    const ids = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await call('POST', '/api/agent/tasks', alice, {
          workflowId: wf,
          inputs: { tag: `k${i}` },
          priority: 'interactive',
        });
        const id = res.json['id'] as string;
        // at once, or a little later: before the claim, between the claim and the run, or while running
        await new Promise((r) => setTimeout(r, i * 15));
        expect((await call('POST', `/api/agent/tasks/${id}/kill`, alice)).status).toBe(200);
        return id;
      }),
    );
    const ends = await Promise.all(ids.map((id) => finished(id)));
    expect(ends.map((t) => t.state)).toEqual(ids.map(() => 'cancelled'));
  });

  it('loses nothing when the scheduler is killed mid-load: bodies report their end once it is back', async () => {
    const wf = await publish(1_500);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await call('POST', '/api/agent/tasks', alice, { workflowId: wf, inputs: { tag: `s${i}` } });
      expect(res.status).toBe(202);
      ids.push(res.json['id'] as string);
    }
    await waitFor(
      async () => Number((await call('GET', '/api/agent/tasks/capacity', alice)).json['running']) >= 1,
      60_000,
      50,
    );
    const schedulers = stack.replicas('scheduler').map((p) => p.id);
    await Promise.all(schedulers.map((id) => stack.stopService(id, 'SIGKILL')));
    await new Promise((r) => setTimeout(r, 2_000)); // bodies end while it is gone
    await Promise.all(schedulers.map(() => stack.startService('scheduler')));
    // 20 bodies of 1.5 s through the owner's slots and a scheduler restart: on a loaded machine that
    // takes minutes, so the bound is generous (it only stops a hang; nothing here measures speed).
    const ends = await Promise.all(ids.map((id) => finished(id, alice, 240_000)));
    expect(ends.map((t) => t.state)).toEqual(ids.map(() => 'completed'));
  }, 300_000);
});
