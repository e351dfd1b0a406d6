import { randomBytes } from 'node:crypto';
import { Inbox, type OwnerFeedEvent } from '@switchyard/contracts';
import {
  api,
  createTestDatabase,
  openOwnerFeed,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type OwnerFeedStream,
  type TestDatabase,
} from '@switchyard/testing';

const wait = (id: string, value: unknown, dependsOn: string[] = []) => ({
  id,
  tool: 'wait',
  arguments: { ms: 0, value },
  dependsOn,
});

/**
 * What the admin console reads besides the run stream, end to end with all five services: the
 * inbox (gates waiting for this person) and the owner feed (live run and task changes), each of
 * them the caller's own only.
 */
describe('the console API: inbox and owner feed', () => {
  let db: TestDatabase;
  let stack: Stack;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  const feeds: OwnerFeedStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const start = async (body: Record<string, unknown>, token = alice): Promise<string> => {
    const res = await call('POST', '/api/agent/run', token, body);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  };
  const inbox = async (token = alice): Promise<Inbox> => {
    const res = await call('GET', '/api/agent/inbox', token);
    expect(res.status).toBe(200);
    return Inbox.parse(res.json);
  };
  const feed = async (token: string): Promise<OwnerFeedStream> => {
    const s = await openOwnerFeed(`${stack.gatewayUrl}/api/events`, { 'x-switchyard-token': token });
    expect(s.res.status).toBe(200);
    feeds.push(s);
    return s;
  };
  const runEvents = (s: OwnerFeedStream, runId: string) =>
    s
      .events()
      .filter((e): e is Extract<OwnerFeedEvent, { kind: 'run' }> => e.kind === 'run' && e.runId === runId);
  const hasRun = (s: OwnerFeedStream, runId: string, type: string) => () =>
    runEvents(s, runId).some((e) => e.type === type);

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('console'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      REDIS_URL: 'redis://127.0.0.1:6379/13',
    });
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
  }, 120_000);

  afterAll(async () => {
    feeds.forEach((s) => s.close());
    await stack?.stop();
    await db?.drop();
  });

  it("lists a plan gate and step gates (with the reason), oldest first, and the feed follows them; never another owner's", async () => {
    const aliceFeed = await feed(alice);
    const bobFeed = await feed(bob);
    const adminFeed = await feed(admin);

    const planned = await start({ workflow: { steps: [wait('only', 1)] } });
    await waitFor(async () => (await inbox()).items.length === 1, 15_000);
    const stepped = await start({
      config: { planApproval: false, stepApproval: 'all' },
      workflow: { steps: [wait('a', 'first'), wait('b', 'second', ['a'])] },
    });
    await waitFor(async () => (await inbox()).items.length === 2, 15_000);

    const [plan, step] = (await inbox()).items;
    expect(plan).toMatchObject({ gate: 'plan', run: { id: planned, status: 'awaiting_plan_approval' } });
    expect(plan?.stepId).toBeUndefined();
    expect(step).toMatchObject({
      gate: 'step',
      run: { id: stepped, status: 'awaiting_step_approval' },
      stepId: 'a',
      tool: 'wait',
      effect: 'read',
      arguments: { ms: 0, value: 'first' },
      permission: { decision: 'ask' },
    });
    expect(step?.reason).toEqual(expect.stringMatching(/\S/));
    expect(Date.parse(plan?.since ?? '')).toBeLessThanOrEqual(Date.parse(step?.since ?? ''));

    // Nobody else's inbox shows them, admins' included: an inbox is for the person.
    expect((await inbox(bob)).items).toEqual([]);
    expect((await inbox(admin)).items).toEqual([]);

    await waitFor(hasRun(aliceFeed, stepped, 'step_approval_requested'), 15_000);
    expect(runEvents(aliceFeed, planned).map((e) => [e.type, e.status])).toEqual([
      ['run_created', 'planning'],
      ['plan_ready', 'planning'],
      ['plan_approval_requested', 'awaiting_plan_approval'],
    ]);
    expect(runEvents(aliceFeed, stepped).at(-1)).toMatchObject({
      type: 'step_approval_requested',
      status: 'awaiting_step_approval',
    });

    // Releasing step a opens b's gate: a leaves the inbox, b enters it.
    expect((await call('POST', `/api/agent/${stepped}/approve?stepId=a`, alice)).status).toBe(200);
    await waitFor(async () => (await inbox()).items.some((i) => i.stepId === 'b'), 15_000);
    expect((await inbox()).items.map((i) => [i.run.id, i.gate, i.stepId])).toEqual([
      [planned, 'plan', undefined],
      [stepped, 'step', 'b'],
    ]);
    expect((await call('POST', `/api/agent/${stepped}/approve`, alice)).status).toBe(200);
    expect((await call('POST', `/api/agent/${planned}/cancel`, alice)).status).toBe(200);
    await waitFor(hasRun(aliceFeed, stepped, 'complete'), 15_000);
    await waitFor(hasRun(aliceFeed, planned, 'cancelled'), 15_000);
    expect(runEvents(aliceFeed, stepped).at(-1)).toMatchObject({ type: 'complete', status: 'completed' });
    expect(runEvents(aliceFeed, planned).at(-1)).toMatchObject({ type: 'cancelled', status: 'cancelled' });
    expect(runEvents(aliceFeed, stepped).map((e) => e.type)).toEqual(
      expect.arrayContaining(['step_approved', 'complete']),
    );
    expect((await inbox()).items).toEqual([]);

    // Bob's own run reaches his feed (so his feed was live all along), and nothing of Alice's did.
    const bobs = await start({ config: { planApproval: false }, workflow: { steps: [wait('x', 1)] } }, bob);
    await waitFor(hasRun(bobFeed, bobs, 'complete'), 15_000);
    const adminRun = await start(
      { config: { planApproval: false }, workflow: { steps: [wait('y', 1)] } },
      admin,
    );
    await waitFor(hasRun(adminFeed, adminRun, 'complete'), 15_000);
    for (const [s, own] of [
      [bobFeed, bobs],
      [adminFeed, adminRun],
    ] as const)
      expect(new Set(s.events().map((e) => (e.kind === 'run' ? e.runId : e.taskId)))).toEqual(new Set([own]));
    expect(runEvents(aliceFeed, bobs)).toEqual([]);
  });

  it("tells the owner's feed of a background task's states, queued to completed", async () => {
    const aliceFeed = await feed(alice);
    const bobFeed = await feed(bob);
    const wf = await call('POST', '/api/workflows', alice, {
      name: 'in the background',
      plan: { steps: [wait('w', 1)] },
    });
    expect(wf.status).toBe(201);
    const workflowId = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${workflowId}/publish`, alice, { revision: 1 })).status).toBe(
      200,
    );
    const submitted = await call('POST', '/api/agent/tasks', alice, { workflowId, inputs: {} });
    expect(submitted.status).toBe(202);
    const taskId = submitted.json['id'] as string;
    const states = () =>
      aliceFeed.events().flatMap((e) => (e.kind === 'task' && e.taskId === taskId ? [e.status] : []));
    await waitFor(() => states().includes('completed'), 30_000);
    expect(states()).toEqual(['queued', 'running', 'completed']);
    // The task's body is a run of Alice's: its changes reach her feed too, and never Bob's.
    expect(aliceFeed.events().some((e) => e.kind === 'run' && e.type === 'complete')).toBe(true);
    expect(bobFeed.events()).toEqual([]);
  });
});
