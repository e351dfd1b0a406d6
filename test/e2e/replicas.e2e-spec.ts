import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { SERVICE_NAMES } from '@switchyard/contracts';
import {
  api,
  createTestDatabase,
  openStream,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type SseStream,
  type TestDatabase,
} from '@switchyard/testing';

type Step = Record<string, unknown>;
const wait = (id: string, ms: number, value: unknown, dependsOn: string[] = []): Step => ({
  id,
  tool: 'wait',
  arguments: { ms, value },
  dependsOn,
});

/**
 * The whole platform as two replicas of every service (each its own process; two gateways on their
 * own ports), driven only through HTTP and SSE: a run is driven by one executor replica whatever
 * gateway or replica a request reaches, so approvals and cancels must find it; either gateway
 * streams any run, and a stream resumes on the other one.
 */
describe('two replicas of every service', () => {
  let db: TestDatabase;
  let stack: Stack;
  let pg: Client;
  let workspace: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  const streams: SseStream[] = [];

  /** Through gateway `g` (0 or 1). */
  const call = (g: number, method: string, path: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrls[g] as string, method, path, {
      token: alice,
      ...(body !== undefined ? { body } : {}),
    });
  const start = async (g: number, body: Record<string, unknown>): Promise<string> => {
    const res = await call(g, 'POST', '/api/agent/run', body);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  };
  const stream = async (g: number, runId: string, lastEventId?: number): Promise<SseStream> => {
    const s = await openStream(`${stack.gatewayUrls[g] as string}/api/agent/stream?runId=${runId}`, {
      'x-switchyard-token': alice,
      ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
    });
    streams.push(s);
    return s;
  };
  /** The executor replica holding each run's lease now (null for a run no replica drives). */
  const owners = async (runIds: readonly string[]) =>
    (
      await pg.query<{ owner_replica: string | null }>(
        'SELECT owner_replica FROM run WHERE id = ANY($1::uuid[])',
        [runIds],
      )
    ).rows.map((r) => r.owner_replica);

  beforeAll(async () => {
    db = await createTestDatabase();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-replicas-')));
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('replicas'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        WORKSPACE_DIR: workspace,
        REDIS_URL: 'redis://127.0.0.1:6379/11',
      },
      SERVICE_NAMES,
      2,
    );
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    const res = await api(stack.gatewayUrl, 'POST', '/api/tokens', {
      token: admin,
      body: { owner: 'alice', role: 'user' },
    });
    alice = res.json['token'] as string;
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await pg?.end();
    await stack?.stop();
    await db?.drop();
    if (workspace) rmSync(workspace, { recursive: true, force: true });
  });

  it('runs every service twice: two distinct processes each, both healthy', async () => {
    for (const name of SERVICE_NAMES) {
      const replicas = stack.replicas(name);
      expect(replicas.map((r) => r.id)).toEqual([name, `${name}#2`]);
      expect(new Set(replicas.map((r) => r.child.pid)).size).toBe(2);
    }
    expect(new Set(stack.gatewayUrls).size).toBe(2);
    for (const url of stack.gatewayUrls) {
      const h = await api(url, 'GET', '/api/health');
      expect(h.status).toBe(200);
      expect(h.json['down']).toEqual([]);
    }
  });

  it('plan approvals and cancels sent through the other gateway reach the executor replica driving each run', async () => {
    // Runs until both executor replicas drive some, so requests land on the replica that does not.
    // NATS hands each start to either replica at random: eight at a time, up to 24 (all of 24 on one
    // replica is a chance of 1 in 8 million; all of 8, which this test once relied on, 1 in 128).
    const runs: string[] = [];
    const watched: SseStream[] = [];
    let driving: Array<string | null> = [];
    while (runs.length < 24 && new Set(driving).size < 2) {
      const batch = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          start(i % 2, { workflow: { steps: [wait('a', 0, runs.length + i)] } }),
        ),
      );
      const streamsOf = await Promise.all(batch.map((id, i) => stream((i + 1) % 2, id)));
      await Promise.all(streamsOf.map((s) => s.next('plan_approval_requested')));
      runs.push(...batch);
      watched.push(...streamsOf);
      driving = await owners(runs);
    }
    expect(driving.every((o) => o !== null)).toBe(true);
    expect(new Set(driving).size).toBe(2);
    const half = runs.length / 2;
    const answers = await Promise.all(
      runs.map((id, i) =>
        i < half
          ? call((i + 1) % 2, 'POST', `/api/agent/${id}/approve`)
          : call(i % 2, 'POST', `/api/agent/${id}/cancel`),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(runs.map(() => 200));
    const completed = await Promise.all(watched.slice(0, half).map((s) => s.next('complete')));
    await Promise.all(watched.slice(half).map((s) => s.next('cancelled')));
    expect(completed.map((e) => e.data.data.result)).toEqual(runs.slice(0, half).map((_, i) => i));
    for (const s of watched.slice(half)) expect(s.all('step_start')).toHaveLength(0);
  });

  it('a step approval through either gateway releases the step on the replica that drives it', async () => {
    const runs = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        start(i % 2, {
          config: { planApproval: false, permissionMode: 'ask' },
          workflow: {
            steps: [
              {
                id: 'w',
                tool: 'write_file',
                arguments: { filePath: join(workspace, `step-${i}.txt`), content: `written ${i}` },
              },
            ],
          },
        }),
      ),
    );
    const watched = await Promise.all(runs.map((id, i) => stream(i % 2, id)));
    await Promise.all(watched.map((s) => s.next('step_approval_requested')));
    const answers = await Promise.all(
      runs.map((id, i) => call((i + 1) % 2, 'POST', `/api/agent/${id}/approve?stepId=w`)),
    );
    expect(answers.map((a) => a.json['released'])).toEqual(runs.map(() => ['w']));
    await Promise.all(watched.map((s) => s.next('complete')));
    const me = await call(0, 'GET', '/api/me');
    const area = join(workspace, 'owners', (me.json['owner'] as { id: string }).id);
    expect([0, 1, 2, 3].map((i) => readFileSync(join(area, `step-${i}.txt`), 'utf8'))).toEqual(
      [0, 1, 2, 3].map((i) => `written ${i}`),
    );
  });

  it('cancels a step in flight through the other gateway: the owning replica aborts the call', async () => {
    const runs = await Promise.all(
      [0, 1, 2, 3].map((i) =>
        start(i % 2, {
          config: { planApproval: false, permissionMode: 'full-access' },
          // Longer than any bound here: a run that ends was cancelled, not waited out.
          workflow: { steps: [wait('long', 3_000_000, 'never'), wait('after', 0, 1, ['long'])] },
        }),
      ),
    );
    const watched = await Promise.all(runs.map((id, i) => stream(i % 2, id)));
    await Promise.all(watched.map((s) => s.next('step_start')));
    const answers = await Promise.all(
      runs.map((id, i) => call((i + 1) % 2, 'POST', `/api/agent/${id}/cancel`)),
    );
    expect(answers.map((a) => a.status)).toEqual(runs.map(() => 200));
    for (const s of watched) {
      await s.next('cancelled');
      expect(s.all('step_failed').find((f) => f.data.data.stepId === 'long')?.data.data.cancelled).toBe(true);
      expect(s.all('complete')).toHaveLength(0);
    }
  });

  it('streams a run from either gateway alike, and resumes on the other gateway with Last-Event-ID without a gap or a duplicate', async () => {
    const runId = await start(0, {
      config: { planApproval: false, permissionMode: 'full-access' },
      workflow: {
        steps: [
          wait('a', 300, 'a'),
          wait('b', 300, 'b', ['a']),
          wait('c', 300, 'c', ['b']),
          wait('d', 300, 'd', ['c']),
        ],
      },
    });
    const first = await stream(0, runId);
    const whole = await stream(1, runId);
    // Leave the first gateway part-way through, then go on from the second.
    const cut = await first.next('step_complete');
    first.close();
    const rest = await stream(1, runId, cut.id);
    await rest.next('complete');
    await whole.next('complete');
    const seen = [...first.frames.filter((f) => f.id <= cut.id), ...rest.frames].map((f) => f.id);
    const all = whole.frames.map((f) => f.id);
    expect(all).toEqual(Array.from({ length: all.length }, (_, i) => i + 1));
    expect(seen).toEqual(all);
    expect(rest.frames[0]?.id).toBe(cut.id + 1);
  });

  it('runs a saved workflow published through one gateway, started through the other', async () => {
    const wf = await call(0, 'POST', '/api/workflows', {
      name: 'two replicas',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps: [wait('w', 0, { tag: '{{inputs.tag}}' })] },
    });
    expect(wf.status).toBe(201);
    const id = wf.json['id'] as string;
    expect((await call(1, 'POST', `/api/workflows/${id}/publish`, { revision: 1 })).status).toBe(200);
    const started = await call(1, 'POST', `/api/workflows/${id}/run`, {
      inputs: { tag: 'replicated' },
      planApproval: false,
      permissionMode: 'full-access',
    });
    expect(started.status).toBe(200);
    const s = await stream(0, started.json['runId'] as string);
    expect((await s.next('complete')).data.data.result).toEqual({ tag: 'replicated' });
  });

  it('runs background tasks submitted through both gateways once each, over two schedulers and two executors', async () => {
    const wf = await call(0, 'POST', '/api/workflows', {
      name: 'task on replicas',
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps: [wait('w', 50, { tag: '{{inputs.tag}}' })] },
    });
    const workflowId = wf.json['id'] as string;
    expect((await call(0, 'POST', `/api/workflows/${workflowId}/publish`, { revision: 1 })).status).toBe(200);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await call(i % 2, 'POST', '/api/agent/tasks', { workflowId, inputs: { tag: `t${i}` } });
      expect(res.status).toBe(202);
      ids.push(res.json['id'] as string);
    }
    const ends = await Promise.all(
      ids.map((id, i) =>
        waitFor(async () => {
          const t = (await call((i + 1) % 2, 'GET', `/api/agent/tasks/${id}`)).json;
          return ['completed', 'failed', 'cancelled', 'interrupted'].includes(String(t['state']))
            ? t
            : undefined;
        }),
      ),
    );
    expect(ends.map((t) => t['state'])).toEqual(ids.map(() => 'completed'));
    expect(ends.map((t) => t['output'])).toEqual(ids.map((_, i) => ({ tag: `t${i}` })));
    // One run per task: no task's body ran twice.
    const runs = await pg.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM run WHERE id = ANY($1::uuid[])',
      [ends.map((t) => t['runId'])],
    );
    expect(new Set(ends.map((t) => t['runId'])).size).toBe(ids.length);
    expect(Number(runs.rows[0]?.n)).toBe(ids.length);
  });
});
