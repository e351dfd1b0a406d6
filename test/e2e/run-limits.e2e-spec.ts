import { randomBytes } from 'node:crypto';
import { RunDetail } from '@switchyard/contracts';
import {
  api,
  createTestDatabase,
  Stack,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';

/**
 * Foreground limits through the gateway: an owner at RUN_OWNER_ACTIVE_LIMIT gets 429 with
 * Retry-After and scope "owner", another owner still gets in until RUN_DEPLOYMENT_ACTIVE_LIMIT
 * (scope "deployment"), and a slot frees when a run ends. Runs are held active at their plan
 * approval, so nothing here depends on how fast the machine is.
 */
describe('foreground run limits', () => {
  let db: TestDatabase;
  let stack: Stack;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  /** A supplied one-step workflow that waits at its plan approval: active until approved or cancelled. */
  const held = {
    goal: 'held at its gate',
    workflow: { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0, value: 1 } }] },
    config: { planApproval: true, permissionMode: 'full-access' },
  };
  const start = (token: string) => call('POST', '/api/agent/run', token, held);
  const started = async (token: string): Promise<string> => {
    const res = await start(token);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  };
  const status = async (runId: string, token: string) =>
    RunDetail.parse((await call('GET', `/api/agent/runs/${runId}`, token)).json).status;

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('limits'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        RUN_OWNER_ACTIVE_LIMIT: '2',
        RUN_DEPLOYMENT_ACTIVE_LIMIT: '3',
      },
      ['gateway', 'executor', 'tool-registry', 'planner'],
    );
    const token = async (owner: string) => {
      const res = await call('POST', '/api/tokens', admin, { owner, role: 'user' });
      expect(res.status).toBe(201);
      return res.json['token'] as string;
    };
    alice = await token('alice');
    bob = await token('bob');
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('refuses an owner at the limit with 429, Retry-After and scope; another owner gets in; an ended run frees its slot', async () => {
    const a1 = await started(alice);
    await started(alice);

    // Concurrent starts over the limit: every one refused the same way, none slips past the lock.
    const over = await Promise.all([start(alice), start(alice), start(alice)]);
    for (const res of over) {
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.json).toMatchObject({
        code: 'capacity_exceeded',
        details: { capacityScope: 'owner', retryable: true, retryAfterSeconds: 2, active: 2, limit: 2 },
      });
      expect(res.json['detail']).toMatch(/you have 2 runs and chat turns active, the owner limit is 2/);
    }

    // Bob is not held back by Alice's limit: he takes the deployment's last slot...
    const b1 = await started(bob);
    // ...and then the deployment is full for everyone.
    const full = await start(bob);
    expect(full.status).toBe(429);
    expect(full.json).toMatchObject({ details: { capacityScope: 'deployment', limit: 3 } });

    // A batch that cannot fit is refused whole: no run of it starts.
    const batch = await call('POST', '/api/agent/batch', bob, { runs: [held, held] });
    expect(batch.status).toBe(429);

    // Alice cancels one: her slot (and the deployment's) is free again.
    expect((await call('POST', `/api/agent/${a1}/cancel`, alice)).status).toBe(200);
    await waitFor(async () => (await status(a1, alice)) === 'cancelled', 60_000);
    const a3 = await started(alice);
    await waitFor(async () => (await status(a3, alice)) === 'awaiting_plan_approval', 60_000);

    // A run approved to the end frees its slot too.
    await waitFor(async () => (await status(b1, bob)) === 'awaiting_plan_approval', 60_000);
    expect((await call('POST', `/api/agent/${b1}/approve`, bob, {})).status).toBe(200);
    await waitFor(async () => (await status(b1, bob)) === 'completed', 60_000);
    expect((await start(bob)).status).toBe(200);

    const listed = (await call('GET', '/api/agent/runs?limit=50', alice)).json['items'] as unknown[];
    expect(listed).toHaveLength(3); // a1 (cancelled), a2, a3: nothing refused was written
  });
});
