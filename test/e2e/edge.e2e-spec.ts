import { randomBytes, randomUUID } from 'node:crypto';
import { Routes } from '@switchyard/contracts';
import {
  api,
  createTestDatabase,
  hostileRequests,
  Stack,
  uniquePrefix,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

/**
 * The gateway's edge as a hostile caller finds it, against all five services: every route of the
 * table fed NUL, lone surrogates and 3,000-level nesting in every string it takes, and a second
 * owner reaching for the first owner's resources of every kind.
 */
describe('the edge, tried by a hostile caller', () => {
  let db: TestDatabase;
  let stack: Stack;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('edge'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      // A hook URL that passes the address checks; no hook here is ever enabled.
      WEB_FETCH_PRIVATE_HOSTS: '127.0.0.1:9',
    });
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  describe('hostile input on every route: 400 validation_failed naming the field, never a 5xx', () => {
    const corpus = hostileRequests(Routes);

    it('covers the fields the issue names', () => {
      const probed = new Set(corpus.map((r) => `${r.route} ${r.path}`));
      for (const field of [
        'runStart body.goal',
        'runStart body.workflow',
        'runStart body.inputs.k\\u0000',
        'createToken body.owner',
        'mcpToolCreate body.name',
        'agentCreate body.name',
        'workflowCreate body.name',
        'runList query.q',
        'runStream query.runId',
        'ownerFeed query.lastEventId',
        'runGet params.runId',
      ])
        expect(probed).toContain(field);
      expect(new Set(corpus.map((r) => r.what))).toEqual(
        new Set(['NUL', 'lone high surrogate', 'lone low surrogate', 'NUL in a key', '3,000 levels']),
      );
    });

    it.each(Object.keys(Routes).filter((name) => corpus.some((r) => r.route === name)))(
      '%s',
      async (name) => {
        const wrong: string[] = [];
        for (const r of corpus.filter((c) => c.route === name)) {
          const res = await api(stack.gatewayUrl, r.method, r.url, {
            token: admin,
            ...(r.body !== undefined ? { raw: r.body } : {}),
          });
          const paths = ((res.json['errors'] as Array<{ path: string }> | undefined) ?? []).map(
            (e) => e.path,
          );
          const named =
            r.what === '3,000 levels'
              ? paths.some((p) => p.startsWith(`${r.path}.`))
              : paths.includes(r.path);
          if (res.status !== 400 || res.json['code'] !== 'validation_failed' || !named)
            wrong.push(`${r.what} at ${r.path}: ${res.status} ${res.text.slice(0, 300)}`);
        }
        expect(wrong).toEqual([]);
      },
    );

    it('answers URLs that are not UTF-8 with a 4xx', async () => {
      for (const path of [
        '/api/agent/runs/%ED%A0%80',
        '/api/agent/runs?q=%ED%A0%80',
        '/api/agent/runs/%E0%A4%A',
        '/api/agent/stream?runId=%ED%A0%80',
        '/api/workflows?q=%C0%80',
      ]) {
        const res = await call('GET', path, admin);
        expect([path, res.status < 500]).toEqual([path, true]);
      }
    });
  });

  describe("another owner's resources: not_found, exactly as a missing one; a missing permission: forbidden", () => {
    const plan = { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: 1 } }] };
    /** What a missing resource answers, for comparison. */
    const outcome = (r: ApiResponse) => ({ status: r.status, code: r.json['code'] });
    const NOT_FOUND = { status: 404, code: 'not_found' };

    it('runs', async () => {
      const runId = (await call('POST', '/api/agent/run', alice, { workflow: plan })).json['runId'] as string;
      expect(runId).toEqual(expect.any(String));
      for (const id of [runId, randomUUID()]) {
        for (const [method, path, body] of [
          ['GET', `/api/agent/runs/${id}`],
          ['POST', `/api/agent/${id}/approve`],
          ['POST', `/api/agent/${id}/cancel`],
          ['POST', `/api/agent/runs/${id}/resume`],
          ['POST', `/api/agent/runs/${id}/fork`],
          ['POST', `/api/agent/runs/${id}/rewind`, { keepSteps: 0 }],
          ['GET', `/api/agent/stream?runId=${id}`],
        ] as const)
          expect([method, path, outcome(await call(method, path, bob, body))]).toEqual([
            method,
            path,
            NOT_FOUND,
          ]);
      }
      expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
    });

    it('workflows, and tasks of them', async () => {
      const wf = await call('POST', '/api/workflows', alice, { name: 'mine', plan });
      expect(wf.status).toBe(201);
      const id = wf.json['id'] as string;
      expect((await call('POST', `/api/workflows/${id}/publish`, alice, { revision: 1 })).status).toBe(200);
      for (const target of [id, randomUUID()]) {
        for (const [method, path, body] of [
          ['GET', `/api/workflows/${target}`],
          ['PUT', `/api/workflows/${target}`, { revision: 2, name: 'stolen', plan }],
          ['DELETE', `/api/workflows/${target}?revision=2`],
          ['POST', `/api/workflows/${target}/copy`],
          ['POST', `/api/workflows/${target}/publish`, { revision: 2 }],
          ['POST', `/api/workflows/${target}/unpublish`, { revision: 2 }],
          ['GET', `/api/workflows/${target}/versions`],
          ['POST', `/api/workflows/${target}/versions/1/restore`, { revision: 2 }],
          ['POST', `/api/workflows/${target}/run`, { inputs: {} }],
          ['POST', '/api/agent/tasks', { workflowId: target, inputs: {} }],
        ] as const)
          expect([method, path, outcome(await call(method, path, bob, body))]).toEqual([
            method,
            path,
            NOT_FOUND,
          ]);
      }
      expect((await call('GET', `/api/workflows/${id}`, alice)).json['name']).toBe('mine');
    });

    it('tasks', async () => {
      const wf = await call('POST', '/api/workflows', alice, { name: 'for a task', plan });
      const workflowId = wf.json['id'] as string;
      await call('POST', `/api/workflows/${workflowId}/publish`, alice, { revision: 1 });
      const submitted = await call('POST', '/api/agent/tasks', alice, { workflowId, inputs: {} });
      expect(submitted.status).toBe(202);
      const taskId = submitted.json['id'] as string;
      for (const id of [taskId, randomUUID()]) {
        expect(outcome(await call('GET', `/api/agent/tasks/${id}`, bob))).toEqual(NOT_FOUND);
        expect(outcome(await call('POST', `/api/agent/tasks/${id}/kill`, bob))).toEqual(NOT_FOUND);
      }
      expect((await call('GET', `/api/agent/tasks/${taskId}`, alice)).status).toBe(200);
    });

    it('agents', async () => {
      const created = await call('POST', '/api/agents', alice, { name: 'mine' });
      expect(created.status).toBe(201);
      const id = created.json['id'] as number;
      for (const target of [id, 999_999]) {
        for (const [method, path, body] of [
          ['GET', `/api/agents/${target}`],
          ['PUT', `/api/agents/${target}`, { name: 'stolen' }],
          ['DELETE', `/api/agents/${target}`],
          ['GET', `/api/agents/${target}/tools`],
        ] as const)
          expect([method, path, outcome(await call(method, path, bob, body))]).toEqual([
            method,
            path,
            NOT_FOUND,
          ]);
      }
      expect((await call('GET', `/api/agents/${id}`, alice)).json['name']).toBe('mine');
    });

    it("hooks: hidden when another owner's, forbidden when global and the caller is no admin", async () => {
      const hook = {
        name: 'quiet',
        event: 'run_complete',
        type: 'http',
        url: 'http://127.0.0.1:9/h',
        enabled: false,
      };
      const mine = await call('POST', '/api/settings/hooks', alice, hook);
      expect(mine.status).toBe(201);
      const global = await call('POST', '/api/settings/hooks', admin, {
        ...hook,
        type: 'command',
        command: 'true',
        url: undefined,
        global: true,
      });
      expect(global.status).toBe(201);
      for (const id of [mine.json['id'] as string, randomUUID()]) {
        expect(outcome(await call('PUT', `/api/settings/hooks/${id}`, bob, hook))).toEqual(NOT_FOUND);
        expect(outcome(await call('DELETE', `/api/settings/hooks/${id}`, bob))).toEqual(NOT_FOUND);
      }
      const globalId = global.json['id'] as string;
      const forbidden = { status: 403, code: 'forbidden' };
      expect(outcome(await call('PUT', `/api/settings/hooks/${globalId}`, bob, hook))).toEqual(forbidden);
      expect(outcome(await call('DELETE', `/api/settings/hooks/${globalId}`, bob))).toEqual(forbidden);
      expect((await call('DELETE', `/api/settings/hooks/${globalId}`, admin)).status).toBe(200);
    });

    it('tokens', async () => {
      const created = await call('POST', '/api/tokens', alice, { label: 'mine' });
      const id = (created.json['info'] as { id: string }).id;
      for (const target of [id, randomUUID()])
        expect(outcome(await call('DELETE', `/api/tokens/${target}`, bob))).toEqual(NOT_FOUND);
      expect(outcome(await call('GET', '/api/tokens?owner=alice', bob))).toEqual({
        status: 403,
        code: 'forbidden',
      });
    });
  });
});
