import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import {
  api,
  createTestDatabase,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

/** Schedules and webhooks through the gateway, on all five services. */
describe('schedules and webhooks end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const publish = async (steps: unknown[], token = alice) => {
    const wf = await call('POST', '/api/workflows', token, {
      name: 'hooked',
      inputSchema: {
        type: 'object',
        properties: { tag: { type: 'string' }, doc: { type: 'string', format: 'switchyard-file' } },
        required: ['tag'],
      },
      plan: { steps },
    });
    expect(wf.status).toBe(201);
    const id = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${id}/publish`, token, { revision: 1 })).status).toBe(200);
    return id;
  };
  const echo = [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: { tag: '{{inputs.tag}}' } } }];
  const deliver = (
    id: string,
    secret: string | undefined,
    body: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> =>
    api(stack.gatewayUrl, 'POST', `/api/workflow-hooks/${id}`, {
      ...(typeof body === 'string' ? { raw: body } : { body }),
      headers: { ...(secret !== undefined ? { 'x-switchyard-webhook-secret': secret } : {}), ...headers },
    });

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('trg'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      REDIS_URL: 'redis://127.0.0.1:6379/11',
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

  it('refuses a schedule under "ask" with an uncovered write step, naming it; an allow rule covers it', async () => {
    const wf = await publish([
      { id: 'save', tool: 'write_file', arguments: { filePath: 'out.txt', content: '{{inputs.tag}}' } },
    ]);
    const body = { workflowId: wf, inputs: { tag: 'x' }, timeZone: 'Europe/Berlin' };
    const refused = await call('POST', '/api/agent/schedules', alice, body);
    expect(refused.status).toBe(400);
    expect(refused.json['detail']).toContain('save (write_file)');
    expect(refused.json['details']).toMatchObject({ workingModes: ['approve-for-me', 'full-access'] });
    expect((await call('POST', '/api/workflow-triggers', alice, body)).status).toBe(400);

    const rules = await call('PUT', '/api/settings/permissions', alice, { allow: ['Tool(write_file)'] });
    expect(rules.status).toBe(200);
    const made = await call('POST', '/api/agent/schedules', alice, body);
    expect(made.status).toBe(201);
    expect(made.json).toMatchObject({ status: 'active', recurrence: { type: 'daily', time: '09:00' } });
    expect((made.json['nextFires'] as string[]).length).toBe(5);
    expect((made.json['nextFires'] as string[])[0]).toMatch(/T09:00:00\+0[12]:00$/);
    const id = made.json['id'] as string;
    expect((await call('GET', `/api/agent/schedules/${id}`, bob)).status).toBe(404);
    const preview = await call('POST', '/api/agent/schedules/preview', alice, {
      timeZone: 'Australia/Lord_Howe',
      recurrence: { type: 'daily', time: '02:15' },
      from: '2026-10-03T00:00:00Z',
    });
    expect((preview.json['nextFires'] as string[]).slice(0, 2)).toEqual([
      '2026-10-04T02:45:00+11:00',
      '2026-10-05T02:15:00+11:00',
    ]);
    expect((await call('DELETE', `/api/agent/schedules/${id}`, alice)).status).toBe(200);
    expect((await call('GET', `/api/agent/schedules/${id}`, alice)).status).toBe(404);
  });

  it('delivers a webhook as an interactive task: secret once, 401s, 413, picker files refused, audit without secrets', async () => {
    const wf = await publish(echo);
    const created = await call('POST', '/api/workflow-triggers', alice, {
      workflowId: wf,
      inputs: { tag: 'default' },
      permissionMode: 'ask',
    });
    expect(created.status).toBe(201);
    const id = created.json['id'] as string;
    const secret = created.json['secret'] as string;
    expect(secret).toMatch(/^whsec_/);
    const listed = await call('GET', '/api/workflow-triggers', alice);
    expect(JSON.stringify(listed.json)).not.toContain(secret);
    expect((listed.json['items'] as unknown[]).length).toBe(1);

    const ok = await deliver(id, secret, { tag: 'from-hook' });
    expect(ok.status).toBe(202);
    const taskId = ok.json['taskId'] as string;
    const task = await waitFor(async () => {
      const t = (await call('GET', `/api/agent/tasks/${taskId}`, alice)).json;
      return t['state'] === 'completed' ? t : undefined;
    }, 60_000);
    expect(task).toMatchObject({ priority: 'interactive', output: { tag: 'from-hook' } });

    expect((await deliver(id, undefined, {})).status).toBe(401);
    expect((await deliver(id, 'whsec_wrong', {})).status).toBe(401);
    expect((await deliver(randomUUID(), secret, {})).status).toBe(401);
    const rotated = await call('POST', `/api/workflow-triggers/${id}/rotate`, alice);
    const fresh = rotated.json['secret'] as string;
    expect((await deliver(id, secret, {})).status).toBe(401);
    expect((await deliver(id, fresh, {})).status).toBe(202);

    const limit = 256 * 1024;
    const exact = JSON.stringify({ tag: 'x', pad: '' });
    const fits = JSON.stringify({ tag: 'x', pad: 'p'.repeat(limit - exact.length) });
    expect(Buffer.byteLength(fits)).toBe(limit);
    expect((await deliver(id, fresh, fits)).status).toBe(202);
    const over = JSON.stringify({ tag: 'x', pad: 'p'.repeat(limit - exact.length + 1) });
    const big = await deliver(id, fresh, over);
    expect(big.status).toBe(413);
    expect(big.json['code']).toBe('payload_too_large');
    const file = await deliver(id, fresh, { doc: '/tmp/picked.txt' });
    expect(file.status).toBe(400);
    expect(file.json['detail']).toContain('inputs.doc');
    expect((await deliver(id, fresh, { tag: 7 })).status).toBe(400);

    const audit = await call('GET', `/api/workflow-triggers/${id}/deliveries?limit=100`, alice);
    expect(audit.status).toBe(200);
    const rows = audit.json['items'] as Array<Record<string, unknown>>;
    expect(rows.length).toBe(3);
    const first = rows.find((r) => r['taskId'] === taskId);
    expect(first).toMatchObject({ state: 'COMPLETED', idempotencyKey: false, error: null });
    expect(first?.['durationMs']).toEqual(expect.any(Number));
    const text = audit.text;
    for (const secretish of [secret, fresh, 'from-hook', 'pppp']) expect(text).not.toContain(secretish);
    expect((await call('GET', `/api/workflow-triggers/${id}/deliveries`, bob)).status).toBe(404);
    expect((await call('GET', `/api/workflow-triggers/${id}/deliveries?limit=101`, alice)).status).toBe(400);
  });

  it('answers 50 concurrent deliveries of one event id with one task', async () => {
    const wf = await publish(echo);
    const created = await call('POST', '/api/workflow-triggers', alice, {
      workflowId: wf,
      inputs: { tag: 'e' },
    });
    const id = created.json['id'] as string;
    const secret = created.json['secret'] as string;
    const eventId = `evt-${randomUUID()}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => deliver(id, secret, {}, { 'x-switchyard-event-id': eventId })),
    );
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    const taskIds = new Set(answers.map((a) => a.json['taskId']));
    expect(taskIds.size).toBe(1);
    const tasks = (await call('GET', '/api/agent/tasks?limit=200', alice)).json['items'] as Array<
      Record<string, unknown>
    >;
    expect(tasks.filter((t) => t['workflowId'] === wf).length).toBe(1);
    const audit = await call('GET', `/api/workflow-triggers/${id}/deliveries`, alice);
    const rows = audit.json['items'] as Array<Record<string, unknown>>;
    expect(rows.length).toBe(1);
    expect(rows[0]).toMatchObject({ idempotencyKey: true });
    expect(audit.text).not.toContain(eventId);
    const tooLong = await deliver(id, secret, {}, { 'x-switchyard-event-id': 'e'.repeat(201) });
    expect(tooLong.status).toBe(400);
  });

  it('refuses non-loopback sources by default, and bad or stale signatures when a trigger asks for them', async () => {
    const wf = await publish(echo);
    const created = await call('POST', '/api/workflow-triggers', alice, {
      workflowId: wf,
      inputs: { tag: 's' },
      requireSignature: true,
    });
    const id = created.json['id'] as string;
    const secret = created.json['secret'] as string;
    // The gateway trusts X-Forwarded-For from a loopback proxy: the client is 203.0.113.5.
    const remote = await deliver(id, secret, {}, { 'x-forwarded-for': '203.0.113.5' });
    expect(remote.status).toBe(403);

    const body = JSON.stringify({ tag: 'signed' });
    const sign = (t: number, payload = body) =>
      `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${payload}`).digest('hex')}`;
    const now = Math.floor(Date.now() / 1000);
    expect((await deliver(id, secret, body)).status).toBe(401);
    expect((await deliver(id, secret, body, { 'x-switchyard-signature': sign(now, '{}') })).status).toBe(401);
    const stale = await deliver(id, secret, body, { 'x-switchyard-signature': sign(now - 301) });
    expect(stale.status).toBe(401);
    expect(stale.json['detail']).toContain('300 s');
    expect((await deliver(id, secret, body, { 'x-switchyard-signature': sign(now) })).status).toBe(202);
  });

  it('disables webhook triggers when their workflow is deleted', async () => {
    const wf = await publish(echo);
    const created = await call('POST', '/api/workflow-triggers', alice, {
      workflowId: wf,
      inputs: { tag: 'd' },
    });
    const id = created.json['id'] as string;
    expect((await call('DELETE', `/api/workflows/${wf}?revision=2`, alice)).status).toBe(200);
    const listed = (await call('GET', '/api/workflow-triggers', alice)).json['items'] as Array<
      Record<string, unknown>
    >;
    expect(listed.find((t) => t['id'] === id)).toMatchObject({ status: 'disabled' });
    expect((await deliver(id, created.json['secret'] as string, {})).status).toBe(409);
  });

  it('answers a repeated Idempotency-Key with the first result on each start route, and 409 for another body', async () => {
    const wf = await publish(echo);
    const plan = { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: 1 } }] };
    const routes: Array<[string, unknown, unknown]> = [
      ['/api/agent/run', { workflow: plan }, { workflow: plan, goal: 'other' }],
      [
        '/api/agent/batch',
        { runs: [{ workflow: plan }] },
        { runs: [{ workflow: plan }, { workflow: plan }] },
      ],
      [`/api/workflows/${wf}/run`, { inputs: { tag: 'a' } }, { inputs: { tag: 'b' } }],
      [
        '/api/agent/tasks',
        { workflowId: wf, inputs: { tag: 'a' } },
        { workflowId: wf, inputs: { tag: 'b' } },
      ],
    ];
    for (const [path, body, other] of routes) {
      const key = { 'idempotency-key': `k-${randomUUID()}` };
      const send = (b: unknown, headers: Record<string, string> = key) =>
        api(stack.gatewayUrl, 'POST', path, { token: alice, body: b, headers });
      const [first, again] = await Promise.all([send(body), send(body)]);
      expect({ path, status: first.status }).toEqual({
        path,
        status: path === '/api/agent/tasks' ? 202 : 200,
      });
      expect(again.status).toBe(first.status);
      expect(again.json).toEqual(first.json);
      expect((await send(body)).json).toEqual(first.json);
      const clash = await send(other);
      expect([path, clash.status]).toEqual([path, 409]);
      // Without a key every request starts anew.
      const fresh = await send(body, {});
      expect(fresh.json).not.toEqual(first.json);
    }
    const tasks = (await call('GET', '/api/agent/tasks?limit=200', alice)).json['items'] as Array<
      Record<string, unknown>
    >;
    expect(tasks.filter((t) => t['workflowId'] === wf).length).toBe(2);
  });
});
