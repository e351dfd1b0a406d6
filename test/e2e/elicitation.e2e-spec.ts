import { join } from 'node:path';
import { api, FakeLlmServer, Platform, sseBlocks, waitFor, type ApiResponse } from '@switchyard/testing';

const FIXTURE = join(__dirname, '..', '..', 'libs', 'testing', 'fixtures', 'elicit', 'server.mjs');
const ASK = 'mcp__forms__ask_profile';
const LINK = 'mcp__forms__ask_link';

interface InputRequestJson {
  id: string;
  ownerId: string;
  status: string;
  runId: string | null;
  stepId: string | null;
  sessionId: string | null;
  callId: string | null;
  label: string;
  tool: string;
  server: string;
  mode: string;
  message: string;
  requestedSchema: { properties: Record<string, unknown>; required?: string[] } | null;
  url: string | null;
  content: Record<string, unknown> | null;
  reason: string | null;
  answeredBy: string | null;
}

interface EventJson {
  type: string;
  data: Record<string, unknown>;
}

/** A LOCAL record of the eliciting fixture server, tested so its tools are in the catalog. */
async function formsRecord(p: Platform): Promise<void> {
  const rec = await p.call('POST', '/mcp/tool', p.admin, {
    name: 'forms',
    type: 'LOCAL',
    configJson: JSON.stringify({ command: process.execPath, args: [FIXTURE] }),
  });
  // The answer's body beside its status, so a refusal says why.
  expect({ status: rec.status, body: rec.json }).toMatchObject({ status: 201 });
  const tested = await p.call('POST', `/mcp/tool/${String(rec.json['id'])}/test`, p.admin);
  expect(tested.json).toMatchObject({ success: true });
}

/** A run of one step calling `tool`, needing no approval. */
const oneStep = (tool: string, args: Record<string, unknown> = {}) => ({
  goal: `call ${tool}`,
  workflow: { steps: [{ id: 'ask', tool, arguments: args }] },
  config: { planApproval: false, permissionMode: 'full-access' },
});

/**
 * MCP elicitation end to end, all five services and a real stdio server asking through the SDK's
 * `elicitInput`: a run's step waits, the request shows in the run and the inbox, its owner answers
 * over the API (accept with checked content, decline, cancel) and the call completes with the answer;
 * unattended runs decline at once; cancelling the run ends the wait; URL mode; the chat path; and
 * every boundary: another owner sees nothing and can answer nothing (404), bad content is 400, a
 * direct call cannot borrow someone's run to ask in.
 */
describe('MCP elicitation through the platform', () => {
  let p: Platform;
  let llm: FakeLlmServer;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    p = await Platform.start('elicit', {
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
      MCP_HANDSHAKE_TIMEOUT_MS: '8000',
    });
    await formsRecord(p);
    alice = await p.token('alice');
    bob = await p.token('bob');
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await llm?.close();
  });

  const run = async (id: string, token = alice) =>
    (await p.call('GET', `/api/agent/runs/${id}`, token)).json as {
      status: string;
      events: EventJson[];
      inputRequests?: InputRequestJson[];
      summary: string | null;
    };
  const finished = (id: string) =>
    waitFor(async () => {
      const r = await run(id);
      return ['completed', 'failed', 'cancelled', 'interrupted'].includes(r.status) ? r : undefined;
    });
  /** The run's one waiting input request, once it is there. */
  const waiting = (id: string) => waitFor(async () => (await run(id)).inputRequests?.[0]);
  const result = (r: { events: EventJson[] }) =>
    r.events.find((e) => e.type === 'step_complete')?.data['result'];
  const answer = (id: string, body: unknown, token = alice): Promise<ApiResponse> =>
    p.call('POST', `/api/elicitations/${id}`, token, body);

  it("an attended run's step waits: the request shows in the run and the inbox, the owner's answer completes the call", async () => {
    const runId = await p.startRun(oneStep(ASK, { reason: 'For the newsletter' }), alice);
    const req = await waiting(runId);
    expect(req).toMatchObject({
      status: 'pending',
      runId,
      stepId: 'ask',
      sessionId: null,
      label: `call ${ASK}`,
      tool: ASK,
      server: 'forms',
      mode: 'form',
      message: 'For the newsletter',
      url: null,
      answeredBy: null,
    });
    expect(Object.keys(req.requestedSchema?.properties ?? {})).toEqual([
      'name',
      'email',
      'age',
      'score',
      'color',
      'plan',
      'toppings',
      'subscribe',
      'birthday',
    ]);
    expect(req.requestedSchema?.required).toEqual(['name', 'email', 'age']);
    // The run is still running (its step's call waits) and its log shows the request.
    const during = await run(runId);
    expect(during.status).toBe('running');
    expect(during.events.find((e) => e.type === 'step_input_requested')?.data).toMatchObject({
      stepId: 'ask',
      tool: ASK,
      elicitationId: req.id,
      server: 'forms',
      mode: 'form',
      message: 'For the newsletter',
    });
    // The inbox and the list show it to its owner.
    const inbox = await p.call('GET', '/api/agent/inbox', alice);
    expect((inbox.json['inputRequests'] as InputRequestJson[]).map((r) => r.id)).toEqual([req.id]);
    const listed = await p.call('GET', `/api/elicitations?runId=${runId}`, alice);
    expect((listed.json['items'] as InputRequestJson[]).map((r) => r.id)).toEqual([req.id]);
    expect((await p.call('GET', `/api/elicitations/${req.id}`, alice)).status).toBe(200);

    // Content that does not fit the form: 400 naming each field, and the request still waits.
    const bad = await answer(req.id, {
      action: 'accept',
      content: { name: 'A', email: 'not-an-email', age: 200, color: 'purple', toppings: [], extra: true },
    });
    expect(bad.status).toBe(400);
    expect(bad.json['code']).toBe('validation_failed');
    expect(
      Object.fromEntries(
        (bad.json['errors'] as Array<{ path: string; message: string }>).map((i) => [i.path, i.message]),
      ),
    ).toEqual({
      'content.extra': 'is not a field of this form',
      'content.name': 'must be at least 2 characters',
      'content.email': 'must be an email address',
      'content.age': 'must be at most 150',
      'content.color': 'must be one of "red", "green", "blue"',
      'content.toppings': 'must have at least 1 choice',
    });
    const missing = await answer(req.id, { action: 'accept', content: { name: 'Ada' } });
    expect(missing.status).toBe(400);
    expect(missing.json['errors']).toEqual([{ path: 'content.email', message: 'is required' }]);
    const withContent = await answer(req.id, { action: 'decline', content: { name: 'Ada' } });
    expect(withContent.status).toBe(400);
    expect((await p.call('GET', `/api/elicitations/${req.id}`, alice)).json['status']).toBe('pending');

    // The owner accepts; fields left out take their defaults (what the form shows pre-filled).
    const ok = await answer(req.id, {
      action: 'accept',
      content: {
        name: 'Ada',
        email: 'ada@example.com',
        toppings: ['olives', 'basil'],
        birthday: '1815-12-10',
      },
    });
    expect([ok.status, ok.json]).toEqual([200, { id: req.id, status: 'accepted' }]);
    const done = await finished(runId);
    expect(done.status).toBe('completed');
    const content = {
      name: 'Ada',
      email: 'ada@example.com',
      age: 30,
      score: 7.5,
      color: 'green',
      plan: 'free',
      toppings: ['olives', 'basil'],
      subscribe: true,
      birthday: '1815-12-10',
    };
    expect(result(done)).toEqual({ action: 'accept', content });
    expect(done.events.find((e) => e.type === 'step_input_answered')?.data).toEqual({
      stepId: 'ask',
      tool: ASK,
      elicitationId: req.id,
      action: 'accept',
      content,
      by: 'person',
    });
    expect(done.inputRequests).toEqual([]);
    const settled = (await p.call('GET', `/api/elicitations/${req.id}`, alice)).json;
    expect(settled).toMatchObject({ status: 'accepted', answeredBy: 'person', content });
    // Settled once: a second answer is refused, and the inbox is empty again.
    const again = await answer(req.id, { action: 'decline' });
    expect([again.status, again.json['code']]).toEqual([409, 'conflict']);
    expect((await p.call('GET', '/api/agent/inbox', alice)).json['inputRequests']).toEqual([]);
  });

  it("another owner can neither see nor answer someone's input request (404), nor find it in their inbox", async () => {
    const runId = await p.startRun(oneStep(ASK), alice);
    const req = await waiting(runId);
    expect((await p.call('GET', `/api/elicitations/${req.id}`, bob)).status).toBe(404);
    const attempt = await answer(
      req.id,
      { action: 'accept', content: { name: 'Bob', email: 'b@example.com' } },
      bob,
    );
    expect([attempt.status, attempt.json['code']]).toEqual([404, 'not_found']);
    expect((await p.call('GET', '/api/agent/inbox', bob)).json['inputRequests']).toEqual([]);
    expect((await p.call('GET', '/api/elicitations', bob)).json['items']).toEqual([]);
    expect((await p.call('GET', `/api/elicitations?runId=${runId}`, bob)).json['items']).toEqual([]);
    expect((await p.call('GET', `/api/agent/runs/${runId}`, bob)).status).toBe(404);
    // A request id that does not exist, or is not an id at all.
    expect(
      (await p.call('GET', '/api/elicitations/00000000-0000-4000-8000-000000000000', alice)).status,
    ).toBe(404);
    expect((await answer('not-a-uuid', { action: 'decline' })).status).toBe(400);
    // Bob's attempts changed nothing: the owner's decline reaches the server.
    expect((await answer(req.id, { action: 'decline' })).json).toEqual({ id: req.id, status: 'declined' });
    const done = await finished(runId);
    expect(result(done)).toEqual({ action: 'decline' });
  });

  it('passes cancel back, and cancelling the run ends the wait with cancel and the reason', async () => {
    const first = await p.startRun(oneStep(ASK), alice);
    const a = await waiting(first);
    expect((await answer(a.id, { action: 'cancel' })).json).toEqual({ id: a.id, status: 'cancelled' });
    expect(result(await finished(first))).toEqual({ action: 'cancel' });

    const second = await p.startRun(oneStep(ASK), alice);
    const b = await waiting(second);
    expect((await p.call('POST', `/api/agent/${second}/cancel`, alice)).status).toBe(200);
    const stopped = await finished(second);
    expect(stopped.status).toBe('cancelled');
    const settled = await waitFor(async () => {
      const r = (await p.call('GET', `/api/elicitations/${b.id}`, alice)).json as unknown as InputRequestJson;
      return r.status !== 'pending' ? r : undefined;
    });
    expect(settled).toMatchObject({
      status: 'cancelled',
      answeredBy: 'platform',
      reason: 'the run stopped: cancelled by the user',
    });
    expect((await answer(b.id, { action: 'decline' })).status).toBe(409);
  });

  it('declines at once in an unattended task, with the reason in its run', async () => {
    const wf = await p.call('POST', '/api/workflows', alice, {
      name: 'asks for a profile',
      plan: { steps: [{ id: 'ask', tool: ASK, arguments: {} }] },
    });
    expect(wf.status).toBe(201);
    const wfId = wf.json['id'] as string;
    expect((await p.call('POST', `/api/workflows/${wfId}/publish`, alice, { revision: 1 })).status).toBe(200);
    const submitted = await p.call('POST', '/api/agent/tasks', alice, {
      workflowId: wfId,
      permissionMode: 'full-access',
    });
    expect(submitted.status).toBe(202);
    const task = await waitFor(async () => {
      const t = (await p.call('GET', `/api/agent/tasks/${String(submitted.json['id'])}`, alice)).json;
      return t['state'] === 'completed' || t['state'] === 'failed' ? t : undefined;
    });
    expect(task['state']).toBe('completed');
    const r = await run(task['runId'] as string);
    expect(result(r)).toEqual({ action: 'decline' });
    const answered = r.events.find((e) => e.type === 'step_input_answered')?.data;
    expect(answered).toMatchObject({
      stepId: 'ask',
      action: 'decline',
      by: 'platform',
      reason: expect.stringContaining('nobody can answer during an unattended run'),
    });
    const id = answered?.['elicitationId'] as string;
    expect((await p.call('GET', `/api/elicitations/${id}`, alice)).json).toMatchObject({
      status: 'declined',
      answeredBy: 'platform',
      reason: expect.stringContaining('unattended'),
    });
    expect((await p.call('GET', '/api/agent/inbox', alice)).json['inputRequests']).toEqual([]);
  });

  it('shows a URL request as its link (never fetched) and takes accept without content', async () => {
    const runId = await p.startRun(oneStep(LINK), alice);
    const req = await waiting(runId);
    expect(req).toMatchObject({
      mode: 'url',
      url: 'https://provider.example/connect?session=fixture',
      requestedSchema: null,
      message: 'Connect your account on the provider’s page',
    });
    const withContent = await answer(req.id, { action: 'accept', content: { done: true } });
    expect([withContent.status, withContent.json['errors']]).toEqual([
      400,
      [{ path: 'content', message: 'goes only with a form request' }],
    ]);
    expect((await answer(req.id, { action: 'accept' })).json).toEqual({ id: req.id, status: 'accepted' });
    expect(result(await finished(runId))).toEqual({ action: 'accept' });
  });

  it("declines during a direct call, which cannot borrow someone's run to ask in", async () => {
    // A second record of the same server: its connection has only the direct call in flight.
    const rec = await p.call('POST', '/mcp/tool', p.admin, {
      name: 'forms2',
      type: 'LOCAL',
      configJson: JSON.stringify({ command: process.execPath, args: [FIXTURE] }),
    });
    expect((await p.call('POST', `/mcp/tool/${String(rec.json['id'])}/test`, p.admin)).json).toMatchObject({
      success: true,
    });
    const runId = await p.startRun(oneStep(ASK), alice);
    const req = await waiting(runId);
    // The admin's direct call names alice's waiting step as its asker (and her call's invocation id):
    // the field is not part of the HTTP body, so the server's request during it is declined.
    const direct = await p.call('POST', '/api/agent/tools/invoke', p.admin, {
      tool: 'mcp__forms2__ask_profile',
      arguments: {},
      asker: { kind: 'run', runId, stepId: 'ask' },
      invocationId: `${runId}:ask:1:direct`,
    });
    expect(direct.status).toBe(200);
    expect(direct.json['value']).toEqual({ action: 'decline' });
    // Alice's request was not touched, and still takes her answer.
    const same = (await p.call('GET', `/api/elicitations/${req.id}`, alice)).json;
    expect(same['status']).toBe('pending');
    const listed = (await run(runId)).inputRequests ?? [];
    expect(listed.map((r) => r.id)).toEqual([req.id]);
    // An admin sees every run, so may read (and answer) a run's request, as with approvals.
    expect((await p.call('GET', `/api/elicitations/${req.id}`, p.admin)).status).toBe(200);
    expect((await answer(req.id, { action: 'decline' })).status).toBe(200);
    await finished(runId);
  });

  it('asks in the chat: the turn shows the request, the owner answers, the model reads the result', async () => {
    const s = await p.call('POST', '/api/chat/sessions', alice, { permissionMode: 'full-access' });
    expect(s.status).toBe(201);
    const sessionId = s.json['id'] as string;
    llm.enqueue(
      { toolCalls: [{ name: ASK, arguments: { reason: 'Who is asking?' } }] },
      { content: 'Thanks, Ada.' },
    );
    const res = await fetch(`${p.url}/api/chat/sessions/${sessionId}/messages`, {
      method: 'POST',
      headers: { 'x-switchyard-token': alice, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'sign me up' }),
    });
    expect(res.status).toBe(200);
    const frames: EventJson[] = [];
    const reading = (async () => {
      for await (const b of sseBlocks(res.body as ReadableStream<Uint8Array>)) {
        if (!b.event || !b.data) continue;
        const e = JSON.parse(b.data) as EventJson;
        frames.push({ type: e.type, data: e.data });
      }
    })();
    const asked = await waitFor(() => frames.find((f) => f.type === 'input_requested'));
    const id = asked.data['elicitationId'] as string;
    expect(asked.data).toMatchObject({ tool: ASK, server: 'forms', mode: 'form', message: 'Who is asking?' });
    const detail = (await p.call('GET', `/api/chat/sessions/${sessionId}`, alice)).json;
    expect((detail['inputRequests'] as InputRequestJson[]).map((r) => [r.id, r.sessionId, r.callId])).toEqual(
      [[id, sessionId, expect.any(String)]],
    );
    expect(
      ((await p.call('GET', '/api/agent/inbox', alice)).json['inputRequests'] as InputRequestJson[]).map(
        (r) => r.id,
      ),
    ).toEqual([id]);
    // Chats are private: not even an admin reads another owner's, and bob cannot answer.
    expect((await p.call('GET', `/api/elicitations/${id}`, p.admin)).status).toBe(404);
    expect((await answer(id, { action: 'decline' }, bob)).status).toBe(404);
    expect(
      (await answer(id, { action: 'accept', content: { name: 'Ada', email: 'ada@example.com', age: 36 } }))
        .json,
    ).toEqual({ id, status: 'accepted' });
    await reading;
    expect(frames.find((f) => f.type === 'input_answered')?.data).toMatchObject({
      elicitationId: id,
      action: 'accept',
      by: 'person',
      content: { name: 'Ada', email: 'ada@example.com', age: 36 },
    });
    expect(frames.find((f) => f.type === 'tool_result')?.data).toMatchObject({
      tool: ASK,
      result: { action: 'accept', content: { name: 'Ada', email: 'ada@example.com', age: 36 } },
    });
    expect(frames.at(-1)).toMatchObject({ type: 'message_complete', data: { content: 'Thanks, Ada.' } });
    expect(llm.pending).toBe(0);
  });
});

/**
 * Its own platform: a short ELICITATION_TIMEOUT_MS, longer than the tool timeout, so the wait also
 * proves that time spent waiting for a person does not count against the call.
 */
describe('MCP elicitation: nobody answers in time', () => {
  let p: Platform;
  let alice: string;

  beforeAll(async () => {
    p = await Platform.start('elicit-timeout', {
      ELICITATION_TIMEOUT_MS: '4500',
      TOOL_TIMEOUT_MS: '3000',
      MCP_HANDSHAKE_TIMEOUT_MS: '8000',
    });
    await formsRecord(p);
    alice = await p.token('alice');
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
  });

  it('answers cancel once the wait times out, and records why; the wait is not the tool timeout', async () => {
    const runId = await p.startRun(oneStep(ASK), alice);
    const done = await waitFor(async () => {
      const r = (await api(p.url, 'GET', `/api/agent/runs/${runId}`, { token: alice })).json as {
        status: string;
        events: EventJson[];
      };
      return r.status === 'completed' || r.status === 'failed' ? r : undefined;
    });
    expect(done.status).toBe('completed');
    expect(done.events.find((e) => e.type === 'step_complete')?.data['result']).toEqual({ action: 'cancel' });
    const answered = done.events.find((e) => e.type === 'step_input_answered')?.data;
    expect(answered).toMatchObject({
      action: 'cancel',
      by: 'platform',
      reason: 'nobody answered within 4.5 s (ELICITATION_TIMEOUT_MS)',
    });
    const id = answered?.['elicitationId'] as string;
    const req = (await api(p.url, 'GET', `/api/elicitations/${id}`, { token: alice })).json;
    expect(req).toMatchObject({
      status: 'cancelled',
      answeredBy: 'platform',
      reason: expect.stringContaining('4.5 s'),
    });
    const late = await api(p.url, 'POST', `/api/elicitations/${id}`, {
      token: alice,
      body: { action: 'decline' },
    });
    expect(late.status).toBe(409);
  });
});
