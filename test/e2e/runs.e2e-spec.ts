import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunDetail } from '@switchyard/contracts';
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
  stepFrames,
  type SseFrame,
  type SseStream,
  type StepEventType,
  type TestDatabase,
} from '@switchyard/testing';

type Step = Record<string, unknown>;
const wait = (id: string, ms: number, value: unknown, dependsOn: string[] = []): Step => ({
  id,
  tool: 'wait',
  arguments: { ms, value },
  dependsOn,
});
const noReview = { planApproval: false, permissionMode: 'full-access' };

/**
 * Agent runs end to end: all five services as processes, a fake OpenAI-compatible model, and only
 * HTTP + SSE through the gateway, as a client sees them.
 */
describe('agent runs end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let llm: FakeLlmServer;
  let workspace: string;
  /** Where alice's files really are: her own area of the workspace. */
  let aliceArea: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const start = async (body: Record<string, unknown>, token = alice): Promise<string> => {
    const res = await call('POST', '/api/agent/run', token, body);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    return res.json['runId'] as string;
  };
  const stream = async (runId: string, token = alice, lastEventId?: number): Promise<SseStream> => {
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${runId}`, {
      'x-switchyard-token': token,
      ...(lastEventId !== undefined ? { 'last-event-id': String(lastEventId) } : {}),
    });
    streams.push(s);
    return s;
  };
  const detail = async (runId: string, token = alice) => {
    const res = await call('GET', `/api/agent/runs/${runId}`, token);
    expect(res.status).toBe(200);
    return RunDetail.parse(res.json);
  };
  const stepEvent = <T extends StepEventType>(frames: readonly SseFrame[], type: T, stepId: string) =>
    stepFrames(frames, type, stepId)[0];
  const runCount = async (token = alice) =>
    ((await call('GET', '/api/agent/runs?limit=200', token)).json['items'] as unknown[]).length;

  beforeAll(async () => {
    db = await createTestDatabase();
    llm = await FakeLlmServer.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-runs-')));
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('runs'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      WORKSPACE_DIR: workspace,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
      // Short, so a killed replica's runs are found soon; long enough that a busy machine's
      // event-loop stalls do not lapse a live replica's lease.
      RUN_LEASE_MS: '5000',
      RUN_SWEEP_MS: '300',
    });
    const token = async (owner: string) => {
      const res = await call('POST', '/api/tokens', admin, { owner, role: 'user' });
      expect(res.status).toBe(201);
      return res.json['token'] as string;
    };
    alice = await token('alice');
    bob = await token('bob');
    const me = await call('GET', '/api/me', alice);
    aliceArea = join(workspace, 'owners', (me.json['owner'] as { id: string }).id);
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
    await db?.drop();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('plans from a goal with streamed tokens, waits for approval, runs independent steps at once, then the dependent one', async () => {
    const plan = {
      steps: [
        wait('a', 400, { n: 1 }),
        wait('b', 400, { n: 2 }),
        wait('c', 0, '{{node.a.result.n}}', ['a', 'b']),
      ],
    };
    const content = JSON.stringify(plan);
    llm.enqueue({ content, chunkSize: 16, chunkDelayMs: 5 });
    const runId = await start({ goal: 'wait twice in parallel, then report a' });
    const s = await stream(runId);
    await s.next('plan_approval_requested');
    // Pieces that arrive while a write is in flight merge into one event, so how many events the 16
    // chunks make depends on the machine's pace; that they stream, in order and whole, does not.
    const tokens = s.all('plan_token');
    expect(tokens.length).toBeGreaterThanOrEqual(1);
    expect(tokens.map((f) => f.data.data.text).join('')).toBe(content);
    expect((await s.next('plan_ready')).data.data.plan).toEqual(
      expect.objectContaining({ steps: expect.any(Array) }),
    );
    expect(s.all('step_start')).toHaveLength(0); // nothing runs before approval
    expect((await detail(runId)).status).toBe('awaiting_plan_approval');
    // The prompt carried the catalog (tools are described, not bound) and the goal.
    const request = llm.requests[llm.requests.length - 1];
    expect(request?.tools).toBeUndefined();
    expect(JSON.stringify(request?.messages)).toContain('wait twice in parallel');

    const approved = await call('POST', `/api/agent/${runId}/approve`, alice);
    expect(approved.status).toBe(200);
    const done = await s.next('complete');
    expect(done.data.data.result).toBe(1); // exact placeholder kept the number type
    await s.reading;
    expect(s.ended()).toBe(true);

    const seqOf = (type: StepEventType, id: string) => stepEvent(s.frames, type, id)?.id ?? NaN;
    // a and b both started before either finished: they ran at the same time.
    expect(Math.max(seqOf('step_start', 'a'), seqOf('step_start', 'b'))).toBeLessThan(
      Math.min(seqOf('step_complete', 'a'), seqOf('step_complete', 'b')),
    );
    const ta = Date.parse(stepEvent(s.frames, 'step_complete', 'a')?.data?.at ?? '');
    const tb = Date.parse(stepEvent(s.frames, 'step_complete', 'b')?.data?.at ?? '');
    expect(Math.abs(ta - tb)).toBeLessThan(300);
    // c only after both.
    expect(seqOf('step_start', 'c')).toBeGreaterThan(
      Math.max(seqOf('step_complete', 'a'), seqOf('step_complete', 'b')),
    );
    // Gapless ids from 1, no duplicates.
    expect(s.frames.map((f) => f.id)).toEqual(s.frames.map((_, i) => i + 1));
    const d = await detail(runId);
    expect(d.status).toBe('completed');
    expect(d.executions.map((x) => [x.stepId, x.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
      ['c', 'completed'],
    ]);
  });

  it('runs a supplied workflow with references of every kind, keeping exact placeholders typed', async () => {
    const runId = await start({
      goal: 'references',
      config: noReview,
      inputs: { name: 'ada', cfg: { k: [1, 2] } },
      workflow: {
        steps: [
          wait('s0', 0, { obj: { list: [{ v: 7 }] }, flag: true }),
          wait('s1', 0, '{{steps.0.result.obj.list[0].v}}', ['s0']),
          wait(
            's2',
            0,
            {
              last: '{{last.result}}',
              text: 'v={{node.s0.result.obj.list[0].v}} name={{inputs.name}} flag={{node.s0.result.flag}}',
              list: '{{inputs.cfg.k}}',
              flag: ' {{node.s0.result.flag}} ',
            },
            ['s1'],
          ),
        ],
      },
    });
    const s = await stream(runId);
    const done = await s.next('complete');
    expect(done.data.data.result).toEqual({
      last: 7,
      text: 'v=7 name=ada flag=true',
      list: [1, 2],
      flag: true,
    });
    const d = await detail(runId);
    expect(d.executions.find((x) => x.stepId === 's1')?.result).toBe(7);
  });

  it('fails the step with a clear error when a reference path does not resolve at run time', async () => {
    const runId = await start({
      config: noReview,
      workflow: { steps: [wait('s0', 0, { a: 1 }), wait('s1', 0, '{{node.s0.result.missing[0]}}', ['s0'])] },
    });
    const s = await stream(runId);
    const error = await s.next('error');
    expect(String(error.data.data.message)).toContain('node.s0.result.missing does not exist');
    expect(String(stepEvent(s.frames, 'step_failed', 's1')?.data.data.error)).toContain('missing');
    expect(stepEvent(s.frames, 'step_start', 's1')).toBeUndefined(); // the tool was never called
    expect((await detail(runId)).status).toBe('failed');
  });

  it('adopts an edited plan sent with the approval, after validating it', async () => {
    const runId = await start({ workflow: { steps: [wait('x', 0, 'original')] } });
    const s = await stream(runId);
    await s.next('plan_approval_requested');
    const bad = await call('POST', `/api/agent/${runId}/approve`, alice, {
      steps: [{ id: 'y', tool: 'no_such_tool', arguments: {} }],
    });
    expect(bad.status).toBe(400);
    expect(bad.json['code']).toBe('validation_failed');
    expect((bad.json['errors'] as Array<{ path: string }>)[0]?.path).toBe('$.steps[0].tool');
    expect((await detail(runId)).status).toBe('awaiting_plan_approval'); // still waiting
    const ok = await call('POST', `/api/agent/${runId}/approve`, alice, {
      steps: [wait('y', 0, 'edited'), wait('z', 0, '{{node.y.result}}!', ['y'])],
    });
    expect(ok.status).toBe(200);
    const done = await s.next('complete');
    expect(done.data.data.result).toBe('edited!');
    expect(stepEvent(s.frames, 'step_start', 'x')).toBeUndefined();
    expect((await detail(runId)).plan?.steps.map((x) => x['id'])).toEqual(['y', 'z']);
  });

  it('asks before a non-read tool in ask mode and runs it only after the step is approved', async () => {
    const runId = await start({
      config: { planApproval: false, permissionMode: 'ask' },
      workflow: {
        steps: [
          wait('r', 0, 'hello from a run'),
          {
            id: 'w',
            tool: 'write_file',
            arguments: { filePath: join(workspace, 'approved.txt'), content: '{{node.r.result}}' },
            dependsOn: ['r'],
          },
        ],
      },
    });
    const s = await stream(runId);
    const asked = await s.next('step_approval_requested');
    expect(asked.data?.data).toMatchObject({ stepId: 'w', tool: 'write_file', effect: 'write' });
    expect((await detail(runId)).status).toBe('awaiting_step_approval');
    await new Promise((r) => setTimeout(r, 200));
    expect(existsSync(join(aliceArea, 'approved.txt'))).toBe(false);
    const approved = await call('POST', `/api/agent/${runId}/approve`, alice);
    expect(approved.json).toMatchObject({ released: ['w'] });
    await s.next('complete');
    expect(readFileSync(join(aliceArea, 'approved.txt'), 'utf8')).toBe('hello from a run');
  });

  it('retries a retry-safe step with backoff, each attempt an event, until it succeeds', async () => {
    const file = join(workspace, 'appears-later.txt');
    const runId = await start({
      config: noReview,
      workflow: {
        steps: [
          {
            id: 'reader',
            tool: 'read_file',
            arguments: { filePath: file },
            // Retried for up to 30 s (2+4+8+16): a bound on how late the writer may be, not a speed.
            retry: { attempts: 5, backoffMs: 2_000 },
          },
          wait('delay', 200, 'now'),
          {
            id: 'writer',
            tool: 'write_file',
            arguments: { filePath: file, content: 'here' },
            dependsOn: ['delay'],
          },
        ],
      },
    });
    const s = await stream(runId);
    await s.next('complete');
    const retries = stepFrames(s.frames, 'step_retry', 'reader');
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries.map((f) => f.data.data.delayMs)).toEqual(retries.map((_, i) => 2_000 * 2 ** i));
    const starts = stepFrames(s.frames, 'step_start', 'reader');
    expect(starts.map((f) => f.data.data.attempt)).toEqual(starts.map((_, i) => i + 1));
    expect(stepEvent(s.frames, 'step_complete', 'reader')?.data.data.result).toContain('here');
  });

  it('does not retry a refusal: one attempt, and its code reaches step_failed, the run error and the history', async () => {
    const runId = await start({
      config: noReview,
      workflow: {
        steps: [
          {
            id: 'outside',
            tool: 'read_file',
            arguments: { filePath: '/etc/hostname' },
            retry: { attempts: 5, backoffMs: 50 },
          },
        ],
      },
    });
    const s = await stream(runId);
    const error = await s.next('error');
    expect(s.all('step_retry')).toEqual([]);
    expect(stepFrames(s.frames, 'step_start', 'outside')).toHaveLength(1);
    expect(stepEvent(s.frames, 'step_failed', 'outside')?.data.data).toMatchObject({
      cancelled: false,
      code: 'forbidden',
      attempt: 1,
    });
    expect(error.data.data).toMatchObject({ code: 'forbidden', stepId: 'outside' });
    expect((await detail(runId)).executions).toEqual([
      expect.objectContaining({ stepId: 'outside', status: 'failed', code: 'forbidden', attempt: 1 }),
    ]);
  });

  it('stores a tool output holding NUL bytes losslessly, as JSON text flagged encoded, and the run completes', async () => {
    const runId = await start({
      config: noReview,
      workflow: {
        steps: [{ id: 'proc', tool: 'execute_command', arguments: { command: 'cat /proc/self/cmdline' } }],
      },
    });
    const s = await stream(runId);
    const done = await s.next('complete');
    const kept = stepEvent(s.frames, 'step_complete', 'proc')?.data.data;
    expect(kept).toMatchObject({ encoded: 'json', truncated: false, sandboxed: true });
    const output = JSON.parse(String(kept?.result)) as string;
    expect(output).toContain('cat\u0000/proc/self/cmdline\u0000');
    expect(done.data.data).toMatchObject({ encoded: ['proc'] });
    const d = await detail(runId);
    expect(d.status).toBe('completed');
    expect(d.executions[0]?.result).toBe(output); // the history gives the bytes back
  });

  it('refuses a forged plan asking retries of a tool that is not retry-safe, before anything runs', async () => {
    const res = await call('POST', '/api/agent/run', alice, {
      config: noReview,
      workflow: {
        steps: [
          {
            id: 'w',
            tool: 'execute_command',
            arguments: { command: 'touch twice.txt' },
            retry: { attempts: 3 },
          },
        ],
      },
    });
    expect(res.status).toBe(400);
    expect((res.json['details'] as { issues: unknown[] }).issues).toContainEqual(
      expect.objectContaining({ path: '$.steps[0].retry', code: 'retry_not_allowed' }),
    );
    expect(existsSync(join(aliceArea, 'twice.txt'))).toBe(false);
  });

  it('keeps a capped copy of a large result, flagged truncated, while later steps see it whole', async () => {
    const big = 'y'.repeat(70 * 1024);
    const out = join(workspace, 'big.txt');
    const runId = await start({
      config: noReview,
      workflow: {
        steps: [
          wait('big', 0, { big }),
          {
            id: 'save',
            tool: 'write_file',
            arguments: { filePath: out, content: '{{node.big.result.big}}' },
            dependsOn: ['big'],
          },
        ],
      },
    });
    const s = await stream(runId);
    await s.next('complete');
    const d = await detail(runId);
    const kept = d.executions.find((x) => x.stepId === 'big');
    expect(kept?.truncated).toBe(true);
    expect(String(kept?.result)).toHaveLength(64 * 1024);
    expect(readFileSync(join(aliceArea, 'big.txt'), 'utf8')).toBe(big); // the next step got all of it
    expect(stepEvent(s.frames, 'step_start', 'save')?.data.data.argumentsTruncated).toBe(true);
  });

  it('releases one step gate by stepId, the other stays closed; cancel at a gate ends the run', async () => {
    const runId = await start({
      config: { planApproval: false, permissionMode: 'ask' },
      workflow: {
        steps: [
          { id: 'w1', tool: 'write_file', arguments: { filePath: join(workspace, 'g1.txt'), content: '1' } },
          { id: 'w2', tool: 'write_file', arguments: { filePath: join(workspace, 'g2.txt'), content: '2' } },
        ],
      },
    });
    const s = await stream(runId);
    await s.next('step_approval_requested');
    await waitFor(async () => s.all('step_approval_requested').length === 2, 60_000);
    const one = await call('POST', `/api/agent/${runId}/approve?stepId=w1`, alice);
    expect(one.json).toMatchObject({ released: ['w1'], status: 'awaiting_step_approval' });
    await waitFor(async () => existsSync(join(aliceArea, 'g1.txt')), 60_000);
    expect((await call('POST', `/api/agent/${runId}/approve?stepId=nope`, alice)).status).toBe(409);
    const cancelled = await call('POST', `/api/agent/${runId}/cancel`, alice);
    expect(cancelled.status).toBe(200);
    await s.next('cancelled');
    expect(existsSync(join(workspace, 'g2.txt'))).toBe(false);
    expect(stepEvent(s.frames, 'step_failed', 'w2')?.data.data.cancelled).toBe(true);
  });

  it('cancels a run waiting at the plan gate', async () => {
    const runId = await start({ workflow: { steps: [wait('never', 0, 1)] } });
    const s = await stream(runId);
    await s.next('plan_approval_requested');
    expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
    await s.next('cancelled');
    expect(stepEvent(s.frames, 'step_start', 'never')).toBeUndefined();
    expect((await call('POST', `/api/agent/${runId}/approve`, alice)).status).toBe(409);
  });

  it('cancels mid-step: the in-flight call is aborted and the stream ends without complete', async () => {
    const runId = await start({
      config: noReview,
      // Longer than any bound here: a run that ends at all was cancelled, not waited out.
      workflow: { steps: [wait('long', 3_000_000, 'never'), wait('after', 0, 1, ['long'])] },
    });
    const s = await stream(runId);
    await s.next('step_start');
    const res = await call('POST', `/api/agent/${runId}/cancel`, alice);
    expect(res.status).toBe(200);
    await s.next('cancelled', 60_000);
    await s.reading;
    expect(s.all('complete')).toHaveLength(0);
    expect(stepEvent(s.frames, 'step_failed', 'long')?.data.data.cancelled).toBe(true);
    expect(stepEvent(s.frames, 'step_start', 'after')).toBeUndefined();
    expect((await detail(runId)).status).toBe('cancelled');
    expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(409);
  });

  it('resumes a stream from Last-Event-ID with no gap and no duplicate', async () => {
    const steps = Array.from({ length: 12 }, (_, i) => wait(`s${i}`, 60, i, i ? [`s${i - 1}`] : []));
    const runId = await start({ config: noReview, workflow: { steps } });
    const first = await stream(runId);
    await first.next('step_complete');
    first.close();
    const seen = first.frames.map((f) => f.id as number);
    const last = seen[seen.length - 1] as number;
    const second = await stream(runId, alice, last);
    await second.next('complete');
    const all = [...seen, ...second.frames.map((f) => f.id as number)];
    expect(all).toEqual(all.map((_, i) => i + 1));
    // ?lastEventId= does the same for clients that cannot send the header.
    const third = await openStream(
      `${stack.gatewayUrl}/api/agent/stream?runId=${runId}&token=${alice}&lastEventId=${all.length - 2}`,
    );
    streams.push(third);
    await third.reading;
    expect(third.frames.map((f) => f.id)).toEqual([all.length - 1, all.length]);
  });

  it('marks runs of a killed executor interrupted, and resume finishes without re-running completed steps', async () => {
    const runId = await start({
      config: noReview,
      workflow: {
        steps: [
          wait('done', 0, 'kept'),
          wait('slow', 20_000, 'x', ['done']),
          wait('tail', 0, '{{node.done.result}}', ['slow']),
        ],
      },
    });
    const s = await stream(runId);
    await waitFor(async () => stepEvent(s.frames, 'step_start', 'slow') !== undefined, 60_000);
    await stack.restartAll('executor', 'SIGKILL');
    // How soon after the kill is a benchmark's figure (npm run bench -- scale), not this test's.
    const interrupted = await s.next('interrupted', 60_000);
    expect(String(interrupted.data.data.message)).toContain('lease');
    expect((await detail(runId)).status).toBe('interrupted');

    const resumed = await call('POST', `/api/agent/runs/${runId}/resume`, alice);
    expect(resumed.status).toBe(200);
    expect(resumed.json['runId']).toBe(runId);
    const after = await stream(runId, alice, interrupted.id);
    const review = await after.next('plan_approval_requested');
    expect(review.data.data.reusedSteps).toEqual(['done']);
    // Shorten the slow step at the review gate; the completed step stays as it was.
    const edited = await call('POST', `/api/agent/${runId}/approve`, alice, {
      steps: [
        wait('done', 0, 'kept'),
        wait('slow', 0, 'x', ['done']),
        wait('tail', 0, '{{node.done.result}}', ['slow']),
      ],
    });
    expect(edited.status).toBe(200);
    const done = await after.next('complete');
    expect(done.data.data.result).toBe('kept');
    const d = await detail(runId);
    expect(d.events.filter((e) => e.type === 'step_start' && e.data.stepId === 'done')).toHaveLength(1);
    expect(d.executions.find((x) => x.stepId === 'done')).toMatchObject({
      status: 'completed',
      reused: true,
    });
    expect(d.status).toBe('completed');
  });

  it('marks the runs of an executor stopped gracefully interrupted at once', async () => {
    const runId = await start({ config: noReview, workflow: { steps: [wait('slow', 20_000, 'x')] } });
    const s = await stream(runId);
    await s.next('step_start');
    const executors = stack.replicas('executor').map((p) => p.id);
    expect(await Promise.all(executors.map((id) => stack.stopService(id)))).toEqual(executors.map(() => 0));
    // "At once": said by the stopping replica itself (not found later through its lease).
    const interrupted = await s.next('interrupted', 60_000);
    expect(String(interrupted.data.data.message)).toContain('shut down');
    await Promise.all(executors.map(() => stack.startService('executor')));
  });

  it('forks a finished run into a new reviewed run, and rewinds keeping the first steps', async () => {
    const source = await start({
      goal: 'fork me',
      config: noReview,
      workflow: { steps: [wait('one', 0, 1), wait('two', 0, '{{node.one.result}}', ['one'])] },
    });
    await (await stream(source)).next('complete');

    const forked = await call('POST', `/api/agent/runs/${source}/fork`, alice);
    expect(forked.status).toBe(200);
    const forkId = forked.json['runId'] as string;
    expect(forkId).not.toBe(source);
    const f = await stream(forkId);
    await f.next('plan_approval_requested');
    await call('POST', `/api/agent/${forkId}/approve`, alice);
    await f.next('complete');
    expect(f.all('step_start')).toHaveLength(2); // nothing reused by a fork

    const rewound = await call('POST', `/api/agent/runs/${source}/rewind`, alice, { keepSteps: 1 });
    expect(rewound.status).toBe(200);
    const rewindId = rewound.json['runId'] as string;
    const r = await stream(rewindId);
    const review = await r.next('plan_approval_requested');
    expect(review.data.data.reusedSteps).toEqual(['one']);
    await call('POST', `/api/agent/${rewindId}/approve`, alice);
    await r.next('complete');
    expect(r.all('step_start')).toHaveLength(0);
    const d = await detail(rewindId);
    expect(d.plan?.steps).toHaveLength(1);
    expect(d.executions).toEqual([
      expect.objectContaining({ stepId: 'one', status: 'completed', reused: true, result: 1 }),
    ]);
    const summary = (await call('GET', `/api/agent/runs?q=fork%20me`, alice)).json['items'] as Array<{
      id: string;
      sourceRunId: string | null;
    }>;
    expect(summary.map((x) => x.id).sort()).toEqual([source, forkId, rewindId].sort());
    expect((await call('POST', `/api/agent/runs/${source}/rewind`, alice, { keepSteps: 9 })).status).toBe(
      400,
    );
    expect((await call('POST', `/api/agent/runs/${source}/resume`, alice)).status).toBe(409); // completed
  });

  it("answers a start on the gateway's fast path exactly as the framework route does", async () => {
    const both = async (raw: string, token: string | undefined) => {
      const { fast, framework } = await postBothWays(stack.gatewayUrl, '/api/agent/run', raw, token);
      const shape = (r: ApiResponse) => {
        const { correlationId: _c, runId, ...rest } = r.json;
        return {
          status: r.status,
          type: r.type,
          retryAfter: r.headers.get('retry-after'),
          runId: typeof runId,
          body: rest,
        };
      };
      expect(fast.headers.get('x-correlation-id')).toBeTruthy();
      expect(shape(fast)).toEqual(shape(framework));
      return shape(fast);
    };
    const ok = JSON.stringify({ config: noReview, workflow: { steps: [wait('a', 0, 1)] } });
    expect(await both(ok, alice)).toMatchObject({ status: 200, runId: 'string' });
    expect((await both('{"workflow": ', alice)).body).toMatchObject({ code: 'validation_failed' });
    expect((await both('"a string"', alice)).body).toMatchObject({ code: 'validation_failed' });
    expect((await both(ok, undefined)).status).toBe(401);
    expect((await both(ok, 'not-a-token')).status).toBe(401);
    expect(
      (await both(JSON.stringify({ config: noReview, workflow: { steps: [{ id: 'a' }] } }), alice)).body,
    ).toMatchObject({ code: 'validation_failed' });
    expect((await both(JSON.stringify({ goal: 'a\u0000b' }), alice)).status).toBe(400);
    // A plan the executor refuses (a tool that does not exist): the same code from either way.
    const unknownTool = JSON.stringify({
      config: noReview,
      workflow: { steps: [{ id: 'a', tool: 'no_such_tool', arguments: {}, dependsOn: [] }] },
    });
    expect((await both(unknownTool, alice)).status).toBeGreaterThanOrEqual(400);
    expect((await both('', alice)).status).toBe(400);
  });

  it('starts a run and streams it in one request, on the fast path and the framework route alike', async () => {
    const body = JSON.stringify({
      config: noReview,
      workflow: { steps: [wait('a', 0, 1), wait('b', 0, '{{node.a.result}}+1', ['a'])] },
    });
    const startStreaming = async (headers: Record<string, string> = {}) => {
      const s = await openStream(
        `${stack.gatewayUrl}/api/agent/run/stream`,
        { 'x-switchyard-token': alice, ...headers },
        { post: body },
      );
      streams.push(s);
      expect(s.res.status).toBe(200);
      expect(s.res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(s.res.headers.get('x-correlation-id')).toBeTruthy();
      const runId = s.res.headers.get('x-switchyard-run-id') ?? '';
      expect(runId).toMatch(/^[0-9a-f-]{36}$/);
      const end = await s.next('complete');
      expect(end.data.data.result).toBe('1+1');
      await s.reading;
      expect(s.ended()).toBe(true);
      // Every event of the run from its first, once each, in order, all of this run.
      expect(s.frames.map((f) => f.id)).toEqual(s.frames.map((_, i) => i + 1));
      expect(s.frames[0]?.event).toBe('run_created');
      expect(new Set(s.frames.map((f) => f.data.runId))).toEqual(new Set([runId]));
      // What the run's own stream replays afterwards, frame for frame.
      const replay = await stream(runId);
      await replay.next('complete');
      expect(replay.frames.map((f) => [f.id, f.event])).toEqual(s.frames.map((f) => [f.id, f.event]));
      return { runId, events: s.frames.map((f) => f.event) };
    };
    const fast = await startStreaming();
    // An Idempotency-Key sends the request the framework's way (see JsonFastPath).
    const framework = await startStreaming({ 'idempotency-key': `k-${randomBytes(6).toString('hex')}` });
    expect(framework.runId).not.toBe(fast.runId);
    expect(framework.events).toEqual(fast.events);
    // Resumed after a dropped connection: the rest, from the run's own stream.
    const resumed = await stream(fast.runId, alice, 2);
    await resumed.next('complete');
    expect(resumed.frames[0]?.id).toBe(3);
    // Refusals are problem responses, nothing streamed, the same either way.
    for (const key of [undefined, 'k-refused']) {
      const post = (raw: string, token?: string) =>
        api(stack.gatewayUrl, 'POST', '/api/agent/run/stream', {
          raw,
          ...(token ? { token } : {}),
          ...(key ? { headers: { 'idempotency-key': `${key}-${randomBytes(4).toString('hex')}` } } : {}),
        });
      const invalid = await post(
        JSON.stringify({ config: noReview, workflow: { steps: [{ id: 'a' }] } }),
        alice,
      );
      expect(invalid.status).toBe(400);
      expect(invalid.type).toMatch(/problem\+json/);
      expect(invalid.json).toMatchObject({ code: 'validation_failed' });
      expect((await post('{"workflow": ', alice)).status).toBe(400);
      expect((await post(JSON.stringify({ goal: 'a\u0000b' }), alice)).status).toBe(400);
      expect((await post(body)).status).toBe(401);
      expect((await post(body, 'not-a-token')).status).toBe(401);
      const unknownTool = await post(
        JSON.stringify({
          config: noReview,
          workflow: { steps: [{ id: 'a', tool: 'no_such_tool', arguments: {}, dependsOn: [] }] },
        }),
        alice,
      );
      expect(unknownTool.status).toBeGreaterThanOrEqual(400);
      expect(unknownTool.status).toBeLessThan(500);
      expect(unknownTool.headers.get('x-switchyard-run-id')).toBeNull();
    }
  });

  it('starts a batch of 8 independent runs, and refuses a read-only batch holding a write step before anything runs', async () => {
    const runs = Array.from({ length: 8 }, (_, i) => ({
      goal: `batch ${i}`,
      config: noReview,
      workflow: { steps: [wait('only', 50, i)] },
    }));
    const res = await call('POST', '/api/agent/batch', alice, { runs });
    expect(res.status).toBe(200);
    const ids = res.json['runIds'] as string[];
    expect(new Set(ids).size).toBe(8);
    const results = await Promise.all(
      ids.map(async (id) => (await (await stream(id)).next('complete')).data.data.result),
    );
    expect(results).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);

    const before = await runCount();
    const refused = await call('POST', '/api/agent/batch', alice, {
      capabilityMode: 'read-only',
      runs: [
        { workflow: { steps: [wait('fine', 0, 1)] } },
        {
          workflow: {
            steps: [
              {
                id: 'w',
                tool: 'write_file',
                arguments: { filePath: join(workspace, 'ro.txt'), content: 'no' },
              },
            ],
          },
        },
      ],
    });
    expect(refused.status).toBe(400);
    expect(refused.json['code']).toBe('validation_failed');
    expect((refused.json['errors'] as Array<{ path: string }>)[0]?.path).toBe(
      'runs[1].workflow.steps[0].tool',
    );
    expect(await runCount()).toBe(before);
    expect(existsSync(join(workspace, 'ro.txt'))).toBe(false);
  });

  it("gives another owner 404 for someone else's run, everywhere", async () => {
    const runId = await start({ workflow: { steps: [wait('p', 0, 1)] } });
    expect((await call('GET', `/api/agent/runs/${runId}`, bob)).status).toBe(404);
    expect((await call('POST', `/api/agent/${runId}/approve`, bob)).status).toBe(404);
    expect((await call('POST', `/api/agent/${runId}/cancel`, bob)).status).toBe(404);
    expect((await call('POST', `/api/agent/runs/${runId}/fork`, bob)).status).toBe(404);
    const s = await fetch(`${stack.gatewayUrl}/api/agent/stream?runId=${runId}&token=${bob}`);
    expect(s.status).toBe(404);
    expect(((await call('GET', '/api/agent/runs', bob)).json['items'] as unknown[]).length).toBe(0);
    // The admin may see it; the owner may still cancel it.
    expect((await call('GET', `/api/agent/runs/${runId}`, admin)).status).toBe(200);
    expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
  });

  describe('refuses invalid plans with the exact path, before any run or tool exists', () => {
    const ref = (value: string, deps: string[] = ['a']) => [wait('a', 0, 1), wait('b', 0, value, deps)];
    let nested: unknown = 'deep';
    for (let i = 0; i < 40; i++) nested = { n: nested };
    const cases: Array<[string, unknown, string, string]> = [
      [
        'a cycle',
        { steps: [wait('a', 0, 1, ['b']), wait('b', 0, 1, ['a'])] },
        '$.steps[0].dependsOn',
        'cycle',
      ],
      [
        'a self-dependency',
        { steps: [wait('a', 0, 1, ['a'])] },
        '$.steps[0].dependsOn[0]',
        'self_dependency',
      ],
      [
        'an unknown tool',
        { steps: [{ id: 'a', tool: 'rm_everything', arguments: {} }] },
        '$.steps[0].tool',
        'unknown_tool',
      ],
      [
        'a missing required argument',
        { steps: [{ id: 'a', tool: 'wait', arguments: {} }] },
        '$.steps[0].arguments.ms',
        'invalid_arguments',
      ],
      [
        'a dangling reference',
        { steps: ref('{{node.ghost.result}}') },
        '$.steps[1].arguments.value',
        'dangling_reference',
      ],
      [
        'a malformed reference',
        { steps: ref('{{steps.one.result}}') },
        '$.steps[1].arguments.value',
        'malformed_reference',
      ],
      [
        '65 steps',
        { steps: Array.from({ length: 65 }, (_, i) => wait(`s${i}`, 0, i)) },
        '$.steps',
        'too_many_steps',
      ],
      ['huge JSON', { steps: [wait('a', 0, 'x'.repeat(300_000))] }, '$', 'too_large'],
      ['deeply nested JSON', { steps: [wait('a', 0, nested)] }, '$.steps[0].arguments', 'too_large'],
    ];
    it.each(cases)('%s', async (_, workflow, path, code) => {
      const before = await runCount();
      const res = await call('POST', '/api/agent/run', alice, { config: noReview, workflow });
      expect(res.status).toBe(400);
      expect(res.json['code']).toBe('validation_failed');
      const issues = (res.json['details'] as { issues: Array<{ path: string; code: string }> }).issues;
      expect(issues).toContainEqual(expect.objectContaining({ path, code }));
      expect(await runCount()).toBe(before);
    });
  });

  it('sends an invalid draft back to the model with the errors, at most twice, then fails the run with them', async () => {
    const bad = JSON.stringify({ steps: [{ id: 'a', tool: 'does_not_exist', arguments: {} }] });
    llm.enqueue({ content: bad }, { content: bad }, { content: bad });
    const runId = await start({ goal: 'plan badly' });
    const s = await stream(runId);
    const error = await s.next('error', 60_000);
    expect(error.data.data.issues).toContainEqual(
      expect.objectContaining({ path: '$.steps[0].tool', code: 'unknown_tool' }),
    );
    expect(error.data.data.attempts).toBe(3);
    const retry = llm.requests[llm.requests.length - 1];
    expect(JSON.stringify(retry?.messages)).toContain('does_not_exist');
    expect(stepEvent(s.frames, 'step_start', 'a')).toBeUndefined();
  });

  it('refuses a goal-only run with model_not_configured when the model cannot be built', async () => {
    const res = await call('POST', '/api/agent/run', alice, {
      goal: 'plan',
      config: { model: { provider: 'anthropic' } },
    });
    expect(res.status).toBe(400);
    expect(res.json['code']).toBe('model_not_configured');
    expect(String(res.json['detail'])).toContain('LLM_API_KEY');
  });
});
