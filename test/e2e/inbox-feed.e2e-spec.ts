import { Inbox, type OwnerFeedEvent } from '@switchyard/contracts';
import {
  openOwnerFeed,
  Platform,
  waitFor,
  type ApiResponse,
  type OwnerFeedStream,
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
  let platform: Platform;
  let admin: string;
  let alice: string;
  let bob: string;
  const feeds: OwnerFeedStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    platform.call(method, path, token, body);
  const start = (body: Record<string, unknown>, token = alice): Promise<string> =>
    platform.startRun(body, token);
  const inbox = async (token = alice): Promise<Inbox> => {
    const res = await call('GET', '/api/agent/inbox', token);
    expect(res.status).toBe(200);
    return Inbox.parse(res.json);
  };
  const feed = async (token: string): Promise<OwnerFeedStream> => {
    const s = await openOwnerFeed(`${platform.url}/api/events`, { 'x-switchyard-token': token });
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
    // One running task at a time: the feed test makes a task wait behind another.
    platform = await Platform.start('console', {
      REDIS_URL: 'redis://127.0.0.1:6379/13',
      TASK_RUNNING_LIMIT: '1',
    });
    admin = platform.admin;
    alice = await platform.token('alice');
    bob = await platform.token('bob');
  });

  afterAll(async () => {
    feeds.forEach((s) => s.close());
    await platform?.stop();
  });

  it("lists a plan gate and step gates (with the reason), oldest first, and the feed follows them; never another owner's", async () => {
    const aliceFeed = await feed(alice);
    const bobFeed = await feed(bob);
    const adminFeed = await feed(admin);

    const planned = await start({ workflow: { steps: [wait('only', 1)] } });
    await waitFor(async () => (await inbox()).items.length === 1, 60_000);
    const stepped = await start({
      config: { planApproval: false, stepApproval: 'all' },
      workflow: { steps: [wait('a', 'first'), wait('b', 'second', ['a'])] },
    });
    await waitFor(async () => (await inbox()).items.length === 2, 60_000);

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

    await waitFor(hasRun(aliceFeed, stepped, 'step_approval_requested'), 60_000);
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
    await waitFor(async () => (await inbox()).items.some((i) => i.stepId === 'b'), 60_000);
    expect((await inbox()).items.map((i) => [i.run.id, i.gate, i.stepId])).toEqual([
      [planned, 'plan', undefined],
      [stepped, 'step', 'b'],
    ]);
    expect((await call('POST', `/api/agent/${stepped}/approve`, alice)).status).toBe(200);
    expect((await call('POST', `/api/agent/${planned}/cancel`, alice)).status).toBe(200);
    await waitFor(hasRun(aliceFeed, stepped, 'complete'), 60_000);
    await waitFor(hasRun(aliceFeed, planned, 'cancelled'), 60_000);
    expect(runEvents(aliceFeed, stepped).at(-1)).toMatchObject({ type: 'complete', status: 'completed' });
    expect(runEvents(aliceFeed, planned).at(-1)).toMatchObject({ type: 'cancelled', status: 'cancelled' });
    expect(runEvents(aliceFeed, stepped).map((e) => e.type)).toEqual(
      expect.arrayContaining(['step_approved', 'complete']),
    );
    expect((await inbox()).items).toEqual([]);

    // Bob's own run reaches his feed (so his feed was live all along), and nothing of Alice's did.
    const bobs = await start({ config: { planApproval: false }, workflow: { steps: [wait('x', 1)] } }, bob);
    await waitFor(hasRun(bobFeed, bobs, 'complete'), 60_000);
    const adminRun = await start(
      { config: { planApproval: false }, workflow: { steps: [wait('y', 1)] } },
      admin,
    );
    await waitFor(hasRun(adminFeed, adminRun, 'complete'), 60_000);
    for (const [s, own] of [
      [bobFeed, bobs],
      [adminFeed, adminRun],
    ] as const)
      expect(
        new Set(s.events().map((e) => (e.kind === 'run' ? e.runId : e.kind === 'task' ? e.taskId : e.id))),
      ).toEqual(new Set([own]));
    expect(runEvents(aliceFeed, bobs)).toEqual([]);
  });

  it("tells the owner's feed of a background task's states: started at once, or queued to completed", async () => {
    const aliceFeed = await feed(alice);
    const bobFeed = await feed(bob);
    const publish = async (ms: number) => {
      const wf = await call('POST', '/api/workflows', alice, {
        name: `in the background ${ms}`,
        plan: { steps: [{ ...wait('w', ms), arguments: { ms, value: ms } }] },
      });
      expect(wf.status).toBe(201);
      const workflowId = wf.json['id'] as string;
      expect(
        (await call('POST', `/api/workflows/${workflowId}/publish`, alice, { revision: 1 })).status,
      ).toBe(200);
      return workflowId;
    };
    const submit = async (workflowId: string) => {
      const submitted = await call('POST', '/api/agent/tasks', alice, { workflowId, inputs: {} });
      expect(submitted.status).toBe(202);
      return submitted.json;
    };
    const states = (taskId: string) =>
      aliceFeed.events().flatMap((e) => (e.kind === 'task' && e.taskId === taskId ? [e.status] : []));
    // The only slot is free and nothing waits: the first starts at once; the second waits for it.
    const first = await submit(await publish(600_000));
    expect(first).toMatchObject({ state: 'running' });
    const second = await submit(await publish(1));
    expect(second).toMatchObject({ state: 'queued' });
    const [firstId, secondId] = [first['id'] as string, second['id'] as string];
    expect((await call('POST', `/api/agent/tasks/${firstId}/kill`, alice)).status).toBe(200);
    await waitFor(() => states(secondId).includes('completed'), 60_000);
    expect(states(firstId)).toEqual(['running', 'cancelled']);
    expect(states(secondId)).toEqual(['queued', 'running', 'completed']);
    // The task's body is a run of Alice's: its changes reach her feed too, and never Bob's.
    expect(aliceFeed.events().some((e) => e.kind === 'run' && e.type === 'complete')).toBe(true);
    expect(bobFeed.events()).toEqual([]);
  });
});
