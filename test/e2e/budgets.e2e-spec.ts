import { RunDetail } from '@switchyard/contracts';
import { FakeLlmServer, openStream, Platform, type SseStream } from '@switchyard/testing';

type Step = Record<string, unknown>;
const wait = (id: string, ms: number, dependsOn: string[] = []): Step => ({
  id,
  tool: 'wait',
  arguments: { ms, value: id },
  dependsOn,
});
const noReview = { planApproval: false, permissionMode: 'full-access' };

/** The tool names a planner prompt lists under "# Tools" (one `- name [effect]: …` line each). */
function toolsListed(systemPrompt: string): string[] {
  const section = systemPrompt.split('# Tools')[1]?.split('# Answer')[0] ?? '';
  return [...section.matchAll(/^- ([A-Za-z0-9_.-]+) \[/gm)].map((m) => m[1] as string);
}

/**
 * Run budgets and agents end to end: all five services as processes, the fake OpenAI-compatible
 * model, HTTP and SSE through the gateway only.
 */
describe('run budgets and agents end to end', () => {
  let platform: Platform;
  let llm: FakeLlmServer;
  let alice: string;
  let bob: string;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown) =>
    platform.call(method, path, token, body);
  const stream = async (runId: string, lastEventId?: number): Promise<SseStream> => {
    const s = await openStream(`${platform.url}/api/agent/stream?runId=${runId}`, {
      'x-switchyard-token': alice,
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
  /** Alice's run of a supplied plan, to its end: the terminal frame and the whole stream. */
  const runToEnd = async (body: Record<string, unknown>) => {
    const runId = await platform.startRun(body, alice);
    const s = await stream(runId);
    await s.reading;
    const end = s.frames[s.frames.length - 1];
    return { runId, s, end };
  };

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    platform = await Platform.start('budgets', {
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
    alice = await platform.token('alice');
    bob = await platform.token('bob');
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await platform?.stop();
    await llm?.close();
  });

  describe('budgets', () => {
    let stoppedRunId: string;
    /** The id of its terminal event: a stream of it after resuming starts there. */
    let stoppedEndId: number;

    it('maxToolCalls: the third of four sequential waits is not called; the run ends budget_exceeded with its figures', async () => {
      const { runId, s, end } = await runToEnd({
        goal: 'four waits',
        workflow: { steps: [wait('a', 0), wait('b', 0, ['a']), wait('c', 0, ['b']), wait('d', 0, ['c'])] },
        config: { ...noReview, budget: { maxToolCalls: 2 } },
      });
      stoppedRunId = runId;
      stoppedEndId = end?.id ?? 0;
      expect(end?.data).toMatchObject({
        type: 'error',
        data: {
          code: 'budget_exceeded',
          details: { limit: 'maxToolCalls', budget: { maxToolCalls: 2 }, usage: { toolCalls: 2 } },
        },
      });
      expect(s.all('step_start').map((f) => f.data.data.stepId)).toEqual(['a', 'b']);
      expect(s.all('step_failed').map((f) => f.data.data)).toEqual([
        expect.objectContaining({ stepId: 'c', cancelled: true }),
      ]);
      const run = await detail(runId);
      expect(run).toMatchObject({
        status: 'failed',
        budget: { maxToolCalls: 2 },
        usage: { toolCalls: 2, tokens: 0 },
        agentId: null,
      });
      expect(run.error).toContain('maxToolCalls');
    });

    it('resuming a run that spent a limit is refused unless a budget raises it; then its figures carry on', async () => {
      const refused = await call('POST', `/api/agent/runs/${stoppedRunId}/resume`, alice);
      expect(refused.status).toBe(422);
      expect(refused.json).toMatchObject({ code: 'budget_exceeded' });
      const same = await call('POST', `/api/agent/runs/${stoppedRunId}/resume`, alice, {
        budget: { maxToolCalls: 2 },
      });
      expect(same.status).toBe(422);
      // Someone else's run is not found, whatever the budget.
      const foreign = await call('POST', `/api/agent/runs/${stoppedRunId}/resume`, bob, {
        budget: { maxToolCalls: 10 },
      });
      expect(foreign.status).toBe(404);

      const resumed = await call('POST', `/api/agent/runs/${stoppedRunId}/resume`, alice, {
        budget: { maxToolCalls: 10 },
      });
      expect(resumed.status).toBe(200);
      const s = await stream(stoppedRunId, stoppedEndId);
      expect((await s.next('plan_approval_requested')).data.data.reusedSteps).toEqual(['a', 'b']);
      expect((await call('POST', `/api/agent/${stoppedRunId}/approve`, alice)).status).toBe(200);
      await s.reading;
      expect(s.frames[s.frames.length - 1]?.data.type).toBe('complete');
      const run = await detail(stoppedRunId);
      // a and b were reused, c and d called: four calls in all against the raised budget.
      expect(run).toMatchObject({
        status: 'completed',
        budget: { maxToolCalls: 10 },
        usage: { toolCalls: 4 },
      });
      expect(run.events.find((e) => e.type === 'resumed')?.data).toMatchObject({
        budget: { maxToolCalls: 10 },
      });
    });

    it('maxWallMs: a long wait is stopped and the run ends budget_exceeded', async () => {
      const { runId, s, end } = await runToEnd({
        goal: 'a long wait',
        workflow: { steps: [wait('long', 600_000)] },
        config: { ...noReview, budget: { maxWallMs: 1_000 } },
      });
      expect(end?.data).toMatchObject({
        type: 'error',
        data: { code: 'budget_exceeded', details: { limit: 'maxWallMs', budget: { maxWallMs: 1_000 } } },
      });
      // Whatever had started by then was stopped, not waited for.
      const started = s.all('step_start').map((f) => f.data.data.stepId);
      expect(s.all('step_failed').map((f) => [f.data.data.stepId, f.data.data.cancelled])).toEqual(
        started.map((id) => [id, true]),
      );
      expect(s.all('step_complete')).toEqual([]);
      expect(await detail(runId)).toMatchObject({ status: 'failed', budget: { maxWallMs: 1_000 } });
    });

    it('maxTokens: a draft whose model usage crosses it ends the run before any plan', async () => {
      llm.enqueue({
        content: JSON.stringify({ steps: [wait('a', 0)] }),
        usage: { promptTokens: 5_000, completionTokens: 120 },
      });
      const { runId, s, end } = await runToEnd({
        goal: 'wait once',
        config: { ...noReview, budget: { maxTokens: 1_000 } },
      });
      expect(end?.data).toMatchObject({
        type: 'error',
        data: {
          code: 'budget_exceeded',
          details: { limit: 'maxTokens', budget: { maxTokens: 1_000 }, usage: { tokens: 5_120 } },
        },
      });
      expect(s.all('plan_ready')).toEqual([]);
      expect(await detail(runId)).toMatchObject({
        status: 'failed',
        plan: null,
        usage: { tokens: 5_120, toolCalls: 0 },
      });
    });

    it('a draft within the budget is announced with the tokens it spent, and they are on the run', async () => {
      llm.enqueue({
        content: JSON.stringify({ steps: [wait('a', 0)] }),
        usage: { promptTokens: 400, completionTokens: 20 },
      });
      const { runId, s, end } = await runToEnd({
        goal: 'wait once',
        config: { ...noReview, budget: { maxTokens: 1_000, maxToolCalls: 5, maxWallMs: 600_000 } },
      });
      expect(end?.data.type).toBe('complete');
      expect((await s.next('plan_ready')).data.data.tokens).toBe(420);
      expect((await detail(runId)).usage).toMatchObject({ tokens: 420, toolCalls: 1 });
    });

    it('a saved workflow run by hand takes a budget too', async () => {
      const wf = await call('POST', '/api/workflows', alice, {
        name: 'two waits',
        inputSchema: { type: 'object', properties: {} },
        plan: { steps: [wait('a', 0), wait('b', 0, ['a'])] },
      });
      expect(wf.status).toBe(201);
      const started = await call('POST', `/api/workflows/${wf.json['id'] as string}/run`, alice, {
        permissionMode: 'full-access',
        planApproval: false,
        budget: { maxToolCalls: 1 },
      });
      expect(started.status).toBe(200);
      const runId = started.json['runId'] as string;
      const s = await stream(runId);
      await s.reading;
      expect(s.frames[s.frames.length - 1]?.data).toMatchObject({
        type: 'error',
        data: { code: 'budget_exceeded', details: { limit: 'maxToolCalls' } },
      });
      expect(await detail(runId)).toMatchObject({ budget: { maxToolCalls: 1 }, usage: { toolCalls: 1 } });
    });

    it('refuses budgets out of range', async () => {
      for (const budget of [{ maxToolCalls: 0 }, { maxWallMs: -1 }, { maxTokens: 1.5 }, { maxSteps: 3 }]) {
        const res = await call('POST', '/api/agent/run', alice, {
          workflow: { steps: [wait('a', 0)] },
          config: { budget },
        });
        expect(res.status).toBe(400);
      }
    });
  });

  describe('agents', () => {
    let waiter: number;

    beforeAll(async () => {
      const builtins = (await call('GET', '/mcp/tool/all?type=BUILTIN', platform.admin)).json[
        'items'
      ] as Array<{ id: number; name: string }>;
      const waitId = builtins.find((b) => b.name === 'wait')?.id as number;
      const created = await call('POST', '/api/agents', alice, {
        name: 'waiter',
        systemPrompt: 'You are Waiter, an agent that only ever waits.',
        modelSettings: { model: 'fake-waiter' },
        mcpToolIds: [waitId],
      });
      expect(created.status).toBe(201);
      waiter = created.json['id'] as number;
    });

    it("drafts with the agent's prompt first, its model, and only its tool set offered to the model", async () => {
      llm.enqueue({ content: JSON.stringify({ steps: [wait('a', 0)] }) });
      const before = llm.requests.length;
      const { runId, end } = await runToEnd({ goal: 'wait a moment', agentId: waiter, config: noReview });
      expect(end?.data.type).toBe('complete');
      expect(llm.requests.length).toBe(before + 1);
      const request = llm.requests[before];
      expect(request?.model).toBe('fake-waiter');
      const system = String(request?.messages[0]?.content);
      expect(system.startsWith('You are Waiter, an agent that only ever waits.')).toBe(true);
      expect(toolsListed(system)).toEqual(['wait']);
      const run = await detail(runId);
      expect(run.agentId).toBe(waiter);
      expect(run.config).toMatchObject({ model: { model: 'fake-waiter' } });
    });

    it('a fork of an agent run keeps the agent and its tool set', async () => {
      const source = await runToEnd({
        agentId: waiter,
        workflow: { steps: [wait('a', 0)] },
        config: noReview,
      });
      const forked = await call('POST', `/api/agent/runs/${source.runId}/fork`, alice);
      expect(forked.status).toBe(200);
      const runId = forked.json['runId'] as string;
      const s = await stream(runId);
      await s.next('plan_approval_requested');
      expect((await detail(runId)).agentId).toBe(waiter);
      // An edit at the gate is held to the agent's tool set.
      const edit = await call('POST', `/api/agent/${runId}/approve`, alice, {
        steps: [{ id: 'peek', tool: 'read_file', arguments: { filePath: 'x.txt' } }],
      });
      expect(edit.status).toBe(400);
      expect(edit.json['errors']).toEqual([
        expect.objectContaining({ message: expect.stringContaining('no tool named read_file') }),
      ]);
      expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
    });

    it('without an agent the model is offered the whole catalog', async () => {
      llm.enqueue({ content: JSON.stringify({ steps: [wait('a', 0)] }) });
      const before = llm.requests.length;
      await runToEnd({ goal: 'wait a moment', config: noReview });
      const listed = toolsListed(String(llm.requests[before]?.messages[0]?.content));
      expect(listed).toEqual(expect.arrayContaining(['wait', 'read_file']));
    });

    it("refuses a supplied plan with a step outside the agent's tool set, naming the step and the tool", async () => {
      const res = await call('POST', '/api/agent/run', alice, {
        agentId: waiter,
        workflow: {
          steps: [wait('a', 0), { id: 'peek', tool: 'read_file', arguments: { filePath: 'x.txt' } }],
        },
        config: noReview,
      });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ code: 'validation_failed' });
      expect(res.json['errors']).toEqual([
        expect.objectContaining({ message: expect.stringMatching(/step peek uses read_file.*agent/) }),
      ]);
      // The same plan inside the set runs.
      const inside = await runToEnd({
        agentId: waiter,
        workflow: { steps: [wait('a', 0)] },
        config: noReview,
      });
      expect(inside.end?.data.type).toBe('complete');
    });

    it("an unknown agent, or another owner's, is not found; the run does not start", async () => {
      const runsBefore = ((await call('GET', '/api/agent/runs?limit=200', bob)).json['items'] as unknown[])
        .length;
      for (const [agentId, token] of [
        [999_999, alice],
        [waiter, bob],
      ] as const) {
        const res = await call('POST', '/api/agent/run', token, { goal: 'wait', agentId, config: noReview });
        expect(res.status).toBe(404);
        expect(res.json).toMatchObject({ code: 'not_found' });
      }
      const batch = await call('POST', '/api/agent/batch', bob, {
        runs: [{ workflow: { steps: [wait('a', 0)] }, agentId: waiter }],
      });
      expect(batch.status).toBe(404);
      expect(((await call('GET', '/api/agent/runs?limit=200', bob)).json['items'] as unknown[]).length).toBe(
        runsBefore,
      );
    });
  });
});
