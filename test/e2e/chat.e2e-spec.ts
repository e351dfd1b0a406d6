import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  api,
  createTestDatabase,
  FakeLlmServer,
  lastToolResult,
  sseBlocks,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type RecordedRequest,
  type TestDatabase,
} from '@switchyard/testing';

const EVERYTHING = join(
  __dirname,
  '..',
  '..',
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

interface Frame {
  readonly id: number;
  readonly type: string;
  readonly data: Record<string, unknown>;
}

/** A turn's SSE answer, read as it arrives. */
class TurnStream {
  readonly frames: Frame[] = [];
  ended = false;
  private readonly reading: Promise<void>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.reading = (async () => {
      for await (const b of sseBlocks(body)) {
        if (!b.event || !b.data) continue;
        const e = JSON.parse(b.data) as { seq: number; type: string; data: Record<string, unknown> };
        expect([b.event, Number(b.id)]).toEqual([e.type, e.seq]);
        this.frames.push({ id: e.seq, type: e.type, data: e.data });
      }
      this.ended = true;
    })();
  }

  /** The first frame of `type` (after `from` frames), once it has arrived. */
  async next(type: string, from = 0): Promise<Frame> {
    return waitFor(() => this.frames.slice(from).find((f) => f.type === type), 60_000, 20);
  }

  /** Every frame, once the stream has ended. */
  async all(): Promise<Frame[]> {
    await this.reading;
    return this.frames;
  }

  of(type: string): Frame[] {
    return this.frames.filter((f) => f.type === type);
  }
}

const toolNames = (r: RecordedRequest | undefined) =>
  (r?.tools ?? []).map((t) => (t as { function: { name: string } }).function.name);

/**
 * AI chat through the gateway against all five services and a scripted model: tools of every kind,
 * the permission gate (deny, ask with edits), cancel, background tasks, limits, agents, and owners.
 */
describe('AI chat', () => {
  let db: TestDatabase;
  let stack: Stack;
  let llm: FakeLlmServer;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  let recordId: number;
  let workflowId: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const session = async (body: Record<string, unknown> = {}, token = alice): Promise<string> => {
    const r = await call('POST', '/api/chat/sessions', token, body);
    expect([r.status, r.text]).toEqual([201, expect.any(String)]);
    return r.json['id'] as string;
  };
  const streams: TurnStream[] = [];
  /** Sends a message; the SSE answer, or the problem when the gateway refused. */
  const send = async (
    id: string,
    content: string,
    token = alice,
    extra: Record<string, unknown> = {},
  ): Promise<TurnStream> => {
    const res = await fetch(`${stack.gatewayUrl}/api/chat/sessions/${id}/messages`, {
      method: 'POST',
      headers: { 'x-switchyard-token': token, 'content-type': 'application/json' },
      body: JSON.stringify({ content, ...extra }),
    });
    if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const s = new TurnStream(res.body as ReadableStream<Uint8Array>);
    streams.push(s);
    return s;
  };
  const rules = (lists: Record<string, string[]>) =>
    call('PUT', '/api/settings/permissions?scope=owner', alice, { allow: [], ask: [], deny: [], ...lists });
  const detail = async (id: string, token = alice) =>
    (await call('GET', `/api/chat/sessions/${id}`, token)).json;

  beforeAll(async () => {
    db = await createTestDatabase();
    llm = await FakeLlmServer.start();
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('chat'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
      MCP_HANDSHAKE_TIMEOUT_MS: '8000',
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');

    const rec = await call('POST', '/mcp/tool', admin, {
      name: 'everything',
      type: 'LOCAL',
      configJson: JSON.stringify({ command: process.execPath, args: [EVERYTHING, 'stdio'] }),
    });
    expect(rec.status).toBe(201);
    recordId = rec.json['id'] as number;
    expect((await call('POST', `/mcp/tool/${recordId}/test`, admin)).json).toMatchObject({ success: true });

    const wf = await call('POST', '/api/workflows', alice, {
      name: 'greet',
      description: 'says hello',
      inputSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      plan: { steps: [{ id: 'hello', tool: 'wait', arguments: { ms: 0, value: 'hello {{inputs.name}}' } }] },
    });
    expect(wf.status).toBe(201);
    workflowId = wf.json['id'] as string;
    expect((await call('POST', `/api/workflows/${workflowId}/publish`, alice, { revision: 1 })).status).toBe(
      200,
    );
  });

  afterEach(async () => {
    await rules({});
    await Promise.all(streams.splice(0).map((s) => s.all().catch(() => undefined)));
    expect(llm.pending).toBe(0);
  });

  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
    await db?.drop();
  });

  it('calls a built-in tool, streams the answer, keeps everything, and resumes the stream', async () => {
    const id = await session({ permissionMode: 'ask' });
    llm.enqueue(
      { toolCalls: [{ name: 'wait', arguments: { ms: 0, value: 'from wait' } }] },
      { content: 'The wait said: from wait.', chunkSize: 5 },
    );
    const s = await send(id, 'please wait');
    const frames = await s.all();
    expect(frames.map((f) => f.type)).toEqual(
      expect.arrayContaining(['turn_started', 'tool_call', 'tool_result', 'token', 'message_complete']),
    );
    expect(frames[0]).toMatchObject({ type: 'turn_started', data: { content: 'please wait' } });
    expect(s.of('tool_call')[0]?.data).toMatchObject({
      tool: 'wait',
      arguments: { ms: 0, value: 'from wait' },
    });
    expect(s.of('tool_result')[0]?.data).toMatchObject({ tool: 'wait', result: 'from wait' });
    expect(
      s
        .of('token')
        .map((f) => f.data['text'])
        .join(''),
    ).toBe('The wait said: from wait.');
    expect(frames.at(-1)).toMatchObject({
      type: 'message_complete',
      data: { content: 'The wait said: from wait.', usage: { toolCalls: 1 } },
    });
    // Gapless.
    expect(frames.map((f) => f.id)).toEqual(frames.map((_, i) => frames[0]!.id + i));

    // The model was offered the catalog and read the result.
    const [first, second] = llm.requests.slice(-2);
    expect(toolNames(first)).toEqual(
      expect.arrayContaining(['wait', 'task_submit_workflow', `run_workflow_${workflowId}`]),
    );
    expect(lastToolResult(second!)).toContain('from wait');

    const d = await detail(id);
    expect(d).toMatchObject({ status: 'completed', title: 'please wait', lastEventId: frames.at(-1)!.id });
    expect((d['messages'] as Array<{ role: string }>).map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(d['toolCalls']).toEqual([
      expect.objectContaining({ tool: 'wait', status: 'completed', result: 'from wait' }),
    ]);

    // A dropped connection resumes after its last event and ends at the turn's end.
    const resumed = await fetch(`${stack.gatewayUrl}/api/chat/sessions/${id}/stream`, {
      headers: { 'x-switchyard-token': alice, 'last-event-id': String(frames[0]!.id) },
    });
    const rest = await new TurnStream(resumed.body as ReadableStream<Uint8Array>).all();
    expect(rest.map((f) => f.id)).toEqual(frames.slice(1).map((f) => f.id));

    // The next turn sees the conversation so far.
    llm.enqueue({ content: 'again' });
    await (await send(id, 'and now?')).all();
    expect(llm.requests.at(-1)?.messages.map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
  });

  it('calls an MCP tool of server-everything and a published workflow', async () => {
    const id = await session({ permissionMode: 'full-access' });
    llm.enqueue(
      { toolCalls: [{ name: 'mcp__everything__echo', arguments: { message: 'ping' } }] },
      { toolCalls: [{ name: `run_workflow_${workflowId}`, arguments: { name: 'chat' } }] },
      { content: 'both done' },
    );
    const s = await send(id, 'echo, then greet');
    await s.all();
    const results = s.of('tool_result').map((f) => f.data);
    expect(results).toHaveLength(2);
    expect(results[0]).toMatchObject({ tool: 'mcp__everything__echo' });
    expect(results[0]).not.toHaveProperty('error');
    expect(JSON.stringify(results[0]?.['result'])).toContain('Echo: ping');
    expect(results[1]).toMatchObject({ tool: `run_workflow_${workflowId}` });
    expect(results[1]).not.toHaveProperty('error');
    expect(JSON.stringify(results[1]?.['result'])).toContain('hello chat');
    expect(s.frames.at(-1)?.type).toBe('message_complete');
  });

  it('tells the model why a call was denied, and the model goes another way', async () => {
    expect((await rules({ deny: ['Tool(wait)'] })).status).toBe(200);
    const id = await session({ permissionMode: 'full-access' });
    let reason = '';
    llm.enqueue(
      { toolCalls: [{ name: 'wait', arguments: { ms: 0 } }] },
      (req) => {
        reason = lastToolResult(req);
        return reason.includes('Tool(wait)')
          ? { toolCalls: [{ name: 'task_list', arguments: {} }] }
          : { content: 'the reason did not reach me' };
      },
      { content: 'listed instead' },
    );
    const s = await send(id, 'wait a bit');
    await s.all();
    const [denied, listed] = s.of('tool_result').map((f) => f.data);
    expect(denied).toMatchObject({ tool: 'wait', denied: true, error: { code: 'forbidden' } });
    expect(reason).toContain((denied?.['error'] as { message: string }).message);
    expect(s.of('tool_call').map((f) => f.data['tool'])).toEqual(['wait', 'task_list']);
    expect(listed).toMatchObject({ tool: 'task_list' });
    expect(listed).not.toHaveProperty('error');
    expect((await detail(id))['toolCalls']).toEqual([
      expect.objectContaining({
        tool: 'wait',
        status: 'denied',
        decision: expect.objectContaining({ decision: 'deny' }),
      }),
      expect.objectContaining({ tool: 'task_list', status: 'completed' }),
    ]);
    await rules({});
  });

  it('pauses at a confirmation card; the card refuses bad edits, other owners and a second message; runs the edited call', async () => {
    expect((await rules({ ask: ['Tool(wait)'] })).status).toBe(200);
    const id = await session({ permissionMode: 'ask' });
    llm.enqueue(
      { toolCalls: [{ name: 'wait', arguments: { ms: 600_000, value: 'original' } }] },
      { content: 'approved and done' },
    );
    const s = await send(id, 'wait long');
    const card = await s.next('approval_requested');
    const callId = card.data['callId'] as string;
    expect(card.data).toMatchObject({ tool: 'wait', arguments: { ms: 600_000, value: 'original' } });
    expect((await detail(id))['status']).toBe('awaiting_approval');

    // One turn at a time.
    const again = await call('POST', `/api/chat/sessions/${id}/messages`, alice, { content: 'hello?' });
    expect([again.status, again.json['code']]).toEqual([409, 'conflict']);
    // Another owner sees nothing.
    for (const [method, path, body] of [
      ['GET', `/api/chat/sessions/${id}`, undefined],
      ['GET', `/api/chat/sessions/${id}/stream`, undefined],
      ['POST', `/api/chat/sessions/${id}/calls/${callId}/approve`, {}],
      ['POST', `/api/chat/sessions/${id}/calls/${callId}/deny`, {}],
      ['POST', `/api/chat/sessions/${id}/cancel`, undefined],
      ['POST', `/api/chat/sessions/${id}/messages`, { content: 'mine now' }],
      ['PATCH', `/api/chat/sessions/${id}`, { title: 'mine' }],
      ['DELETE', `/api/chat/sessions/${id}`, undefined],
    ] as const) {
      const r = await call(method, path, bob, body);
      expect([method, path, r.status, r.json['code']]).toEqual([method, path, 404, 'not_found']);
    }
    expect(((await call('GET', '/api/chat/sessions', bob)).json['items'] as unknown[]).length).toBe(0);

    // Edited arguments that do not fit the tool are refused; the card stays.
    const bad = await call('POST', `/api/chat/sessions/${id}/calls/${callId}/approve`, alice, {
      arguments: { ms: 'soon' },
    });
    expect([bad.status, bad.json['code']]).toEqual([400, 'validation_failed']);
    const ok = await call('POST', `/api/chat/sessions/${id}/calls/${callId}/approve`, alice, {
      arguments: { ms: 0, value: 'edited' },
    });
    expect(ok.json).toEqual({ accepted: true, status: 'running' });
    await s.all();
    expect(s.of('tool_result')[0]?.data).toMatchObject({ tool: 'wait', result: 'edited' });
    expect(s.frames.at(-1)?.type).toBe('message_complete');
    expect((await detail(id))['toolCalls']).toEqual([
      expect.objectContaining({
        status: 'completed',
        arguments: { ms: 600_000, value: 'original' },
        editedArguments: { ms: 0, value: 'edited' },
      }),
    ]);
    await rules({});
  });

  it('a denied card tells the model the reason', async () => {
    expect((await rules({ ask: ['Tool(wait)'] })).status).toBe(200);
    const id = await session({ permissionMode: 'ask' });
    llm.enqueue({ toolCalls: [{ name: 'wait', arguments: { ms: 0 } }] }, { content: 'understood' });
    const s = await send(id, 'wait');
    const card = await s.next('approval_requested');
    const no = await call(
      'POST',
      `/api/chat/sessions/${id}/calls/${String(card.data['callId'])}/deny`,
      alice,
      {
        reason: 'not today',
      },
    );
    expect(no.json).toEqual({ accepted: true, status: 'running' });
    await s.all();
    expect(s.of('tool_result')[0]?.data).toMatchObject({ denied: true, error: { code: 'forbidden' } });
    expect(lastToolResult(llm.requests.at(-1)!)).toContain('not today');
    await rules({});
  });

  it('cancel aborts the call in flight and ends the stream cancelled', async () => {
    const id = await session({ permissionMode: 'full-access' });
    llm.enqueue({ toolCalls: [{ name: 'wait', arguments: { ms: 600_000 } }] });
    const s = await send(id, 'wait forever');
    await s.next('tool_call');
    await waitFor(async () => {
      const calls = (await detail(id))['toolCalls'] as Array<{ status: string }>;
      return calls[0]?.status === 'running';
    });
    const r = await call('POST', `/api/chat/sessions/${id}/cancel`, alice);
    expect(r.json).toEqual({ accepted: true, status: 'cancelled' });
    const frames = await s.all();
    expect(frames.at(-1)?.type).toBe('cancelled');
    const d = await detail(id);
    expect(d).toMatchObject({
      status: 'cancelled',
      toolCalls: [expect.objectContaining({ status: 'cancelled' })],
    });
    // Nothing left to cancel; the session takes the next message.
    expect((await call('POST', `/api/chat/sessions/${id}/cancel`, alice)).json).toEqual({
      accepted: false,
      status: 'cancelled',
    });
    llm.enqueue({ content: 'back' });
    expect((await (await send(id, 'hello again')).all()).at(-1)?.type).toBe('message_complete');
  });

  it('submits a background task and waits for it', async () => {
    const id = await session({ permissionMode: 'full-access' });
    let taskId = '';
    llm.enqueue(
      { toolCalls: [{ name: 'task_submit_workflow', arguments: { workflowId, inputs: { name: 'bg' } } }] },
      (req) => {
        const submitted = lastToolResult(req);
        taskId = /"taskId":"([0-9a-f-]{36})"/.exec(submitted)?.[1] ?? '';
        return taskId
          ? {
              toolCalls: [
                { name: 'task_wait', arguments: { taskIds: [taskId], mode: 'all', timeoutMs: 60_000 } },
              ],
            }
          : { content: `no task: ${submitted}` };
      },
      { content: 'the task finished' },
    );
    const s = await send(id, 'run greet in the background');
    await s.all();
    const [submitted, waited] = s.of('tool_result').map((f) => f.data);
    expect(submitted).not.toHaveProperty('error');
    expect(waited).toMatchObject({ tool: 'task_wait' });
    expect(waited?.['result']).toMatchObject({
      done: [expect.objectContaining({ id: taskId })],
      pending: [],
    });
    expect(s.frames.at(-1)?.type).toBe('message_complete');
  });

  it('ends a turn that crosses a limit with budget_exceeded naming it', async () => {
    const id = await session({ permissionMode: 'full-access', budget: { maxToolCalls: 1 } });
    llm.enqueue({
      toolCalls: [
        { name: 'wait', arguments: { ms: 0, value: 1 } },
        { name: 'wait', arguments: { ms: 0, value: 2 } },
      ],
    });
    const s = await send(id, 'two waits');
    const frames = await s.all();
    expect(frames.at(-1)).toMatchObject({
      type: 'error',
      data: { code: 'budget_exceeded', details: { limit: 'maxToolCalls' } },
    });
    expect(s.of('tool_result')).toHaveLength(1);
    expect((await detail(id))['status']).toBe('failed');

    // Tokens: the model reports what it used.
    const patched = await call('PATCH', `/api/chat/sessions/${id}`, alice, { budget: { maxTokens: 50 } });
    expect(patched.json).toMatchObject({ budget: { maxTokens: 50 } });
    llm.enqueue({ content: 'a long answer', usage: { promptTokens: 40, completionTokens: 20 } });
    const t = await (await send(id, 'talk')).all();
    expect(t.at(-1)).toMatchObject({
      type: 'error',
      data: { code: 'budget_exceeded', details: { limit: 'maxTokens' } },
    });
  });

  it("offers an agent's chat only the agent's tool set, under the agent's prompt", async () => {
    const agent = await call('POST', '/api/agents', alice, {
      name: 'echoer',
      systemPrompt: 'You only echo.',
      mcpToolIds: [recordId],
    });
    expect(agent.status).toBe(201);
    const id = await session({ agentId: agent.json['id'] as number });
    llm.enqueue({ content: 'echo ready' });
    await (await send(id, 'hi')).all();
    const req = llm.requests.at(-1);
    const names = toolNames(req);
    expect(names).toContain('mcp__everything__echo');
    expect(names.every((n) => n.startsWith('mcp__everything__'))).toBe(true);
    expect(req?.messages[0]).toMatchObject({ role: 'system', content: 'You only echo.' });
    // Another owner's agent is not found.
    expect((await call('POST', '/api/chat/sessions', bob, { agentId: agent.json['id'] })).status).toBe(404);
  });

  it("puts the owner's relevant memories in the system prompt once memory is on, and shows them", async () => {
    const id = await session({ permissionMode: 'full-access' });
    llm.enqueue({ content: 'no memories yet' });
    await (await send(id, 'which machine builds?')).all();
    expect(JSON.stringify(llm.requests.at(-1)?.messages[0])).not.toContain('remember');

    expect((await call('PUT', '/api/settings/memory', alice, { enabled: true })).status).toBe(200);
    llm.enqueue(
      { toolCalls: [{ name: 'memory_remember', arguments: { text: 'Anvil is the build machine' } }] },
      { content: 'Noted.' },
    );
    await (await send(id, 'remember that Anvil is the build machine')).all();
    llm.enqueue({ content: 'Anvil builds.' });
    const s = await send(id, 'which machine builds?');
    await s.all();
    expect(s.of('memory_injected')[0]?.data).toMatchObject({
      memories: [expect.objectContaining({ text: 'Anvil is the build machine' })],
    });
    expect(llm.requests.at(-1)?.messages[0]).toMatchObject({
      role: 'system',
      content: expect.stringContaining('- Anvil is the build machine'),
    });
    // Bob's chat never sees Alice's memories.
    expect((await call('PUT', '/api/settings/memory', bob, { enabled: true })).status).toBe(200);
    const other = await session({}, bob);
    llm.enqueue({ content: 'no idea' });
    const b = await send(other, 'which machine builds?', bob);
    await b.all();
    expect(b.of('memory_injected')).toEqual([]);
    expect(JSON.stringify(llm.requests.at(-1)?.messages)).not.toContain('Anvil');
    await call('PUT', '/api/settings/memory', alice, { enabled: false });
    await call('PUT', '/api/settings/memory', bob, { enabled: false });
  });

  describe('the flow-authoring assistant (a message carrying the canvas)', () => {
    const START = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
    const waitNode = (id: string, args: Record<string, unknown>) => ({
      id,
      type: 'tool',
      position: { x: 300, y: 0 },
      data: { tool: 'wait', arguments: args },
    });
    const INPUTS = { type: 'object', properties: {} };
    const resultOf = (s: TurnStream, tool: string) => {
      const call = s.of('tool_call').find((f) => f.data['tool'] === tool);
      return s.of('tool_result').find((f) => f.data['callId'] === call?.data['callId'])?.data;
    };

    it('reads an unsaved invalid canvas, refuses to run it, and proposes a fix without writing anything', async () => {
      const id = await session({ permissionMode: 'full-access' });
      const before = (await call('GET', '/api/workflows?q=assistant-draft', alice)).json['total'];
      llm.enqueue(
        { toolCalls: [{ name: 'inspect_current_flow', arguments: {} }] },
        { toolCalls: [{ name: 'diagnose_current_flow', arguments: {} }] },
        { toolCalls: [{ name: 'run_current_flow', arguments: {} }] },
        {
          toolCalls: [
            {
              name: 'edit_current_flow',
              arguments: {
                mode: 'edit',
                summary: 'give the wait its delay',
                ops: [{ op: 'update_node', id: 'a', data: { arguments: { ms: 0, value: 'fixed' } } }],
              },
            },
          ],
        },
        { content: 'I proposed a fix: apply it on the canvas.' },
      );
      const flow = {
        name: 'assistant-draft',
        graph: { nodes: [START, waitNode('a', {})], edges: [{ source: 'start', target: 'a' }] },
        inputSchema: INPUTS,
      };
      const s = await send(id, 'why does my flow not work?', alice, { flow });
      const frames = await s.all();
      expect(frames.at(-1)?.type).toBe('message_complete');
      // The model was offered the canvas's tools.
      expect(toolNames(llm.requests.at(-5))).toEqual(
        expect.arrayContaining([
          'inspect_current_flow',
          'diagnose_current_flow',
          'edit_current_flow',
          'run_current_flow',
        ]),
      );
      expect(JSON.stringify(resultOf(s, 'inspect_current_flow'))).toContain('missing_argument');
      expect(resultOf(s, 'diagnose_current_flow')).toMatchObject({
        result: { diagnostics: [expect.objectContaining({ kind: 'missing_argument', nodeId: 'a' })] },
      });
      expect(resultOf(s, 'run_current_flow')).toMatchObject({
        error: { code: 'validation_failed', message: expect.stringContaining('not valid') },
      });
      const proposal = s.of('flow_proposal')[0]?.data['proposal'] as Record<string, unknown>;
      expect(proposal).toMatchObject({ valid: true, diff: { changedNodes: ['a'], addedNodes: [] } });
      // Nothing was saved.
      expect((await call('GET', '/api/workflows?q=assistant-draft', alice)).json['total']).toBe(before);
    });

    it('saves the pending edits through the revision check and runs the flow; a moved revision is a conflict', async () => {
      const created = await call('POST', '/api/workflows', alice, {
        name: 'assistant-saved',
        inputSchema: INPUTS,
        graph: { nodes: [START, waitNode('a', { ms: 0, value: 'one' })], edges: [] },
      });
      expect(created.status).toBe(201);
      const wf = created.json['id'] as string;
      const flow = {
        workflowId: wf,
        revision: 1,
        name: 'assistant-saved',
        graph: { nodes: [START, waitNode('a', { ms: 0, value: 'one' })], edges: [] },
        inputSchema: INPUTS,
      };
      const editThenRun = () =>
        llm.enqueue(
          {
            toolCalls: [
              {
                name: 'edit_current_flow',
                arguments: {
                  mode: 'edit',
                  summary: 'a second step',
                  ops: [
                    { op: 'add_node', node: waitNode('b', { ms: 0, value: '{{node.a.result}} two' }) },
                    { op: 'add_edge', source: 'a', target: 'b' },
                  ],
                },
              },
            ],
          },
          { toolCalls: [{ name: 'run_current_flow', arguments: {} }] },
          { content: 'Saved and started.' },
        );
      const id = await session({ permissionMode: 'full-access' });
      editThenRun();
      const s = await send(id, 'add a step and run it', alice, { flow });
      await s.all();
      const saved = s.of('flow_saved')[0]?.data;
      expect(saved).toMatchObject({ workflowId: wf, revision: 2, runId: expect.any(String) });
      const stored = (await call('GET', `/api/workflows/${wf}`, alice)).json;
      expect(stored['revision']).toBe(2);
      expect(JSON.stringify(stored['graph'])).toContain('{{node.a.result}} two');
      await waitFor(async () => {
        const run = (await call('GET', `/api/agent/runs/${saved?.['runId'] as string}`, alice)).json;
        return run['status'] === 'completed';
      }, 60_000);

      // The same canvas again (still at revision 1): the save is refused, nothing runs.
      editThenRun();
      const again = await send(id, 'once more', alice, { flow });
      await again.all();
      expect(resultOf(again, 'run_current_flow')).toMatchObject({ error: { code: 'conflict' } });
      expect(again.of('flow_saved')).toEqual([]);
      expect((await call('GET', `/api/workflows/${wf}`, alice)).json['revision']).toBe(2);
    });

    it("asks before running the flow under the session's mode, like the Run button's gates", async () => {
      const id = await session({ permissionMode: 'ask' });
      llm.enqueue({ toolCalls: [{ name: 'run_current_flow', arguments: {} }] }, { content: 'Not run.' });
      const flow = {
        name: 'assistant-gated',
        graph: { nodes: [START, waitNode('a', { ms: 0 })], edges: [] },
        inputSchema: INPUTS,
      };
      const s = await send(id, 'run it', alice, { flow });
      const card = await s.next('approval_requested');
      expect(card.data).toMatchObject({ tool: 'run_current_flow', effect: 'external' });
      const denied = await call(
        'POST',
        `/api/chat/sessions/${id}/calls/${card.data['callId'] as string}/deny`,
        alice,
        {
          reason: 'not now',
        },
      );
      expect(denied.status).toBe(200);
      await s.all();
      expect(s.of('flow_saved')).toEqual([]);
    });
  });

  it('refuses to send when no model is configured, saying how, and stores nothing', async () => {
    const agent = await call('POST', '/api/agents', alice, {
      name: 'unconfigured',
      modelSettings: { provider: 'anthropic', model: 'claude' },
    });
    const id = await session({ agentId: agent.json['id'] as number });
    const r = await call('POST', `/api/chat/sessions/${id}/messages`, alice, { content: 'hello' });
    expect([r.status, r.json['code']]).toEqual([400, 'model_not_configured']);
    expect(String(r.json['detail'])).toContain('LLM_API_KEY');
    expect(await detail(id)).toMatchObject({ status: 'idle', messages: [], lastEventId: 0 });
  });

  it('lists, renames and deletes sessions', async () => {
    const id = await session({ title: 'to delete' });
    const page = await call('GET', '/api/chat/sessions?q=to%20del', alice);
    expect(page.json['items']).toEqual([expect.objectContaining({ id, title: 'to delete' })]);
    expect((await call('PATCH', `/api/chat/sessions/${id}`, alice, { title: 'renamed' })).json).toMatchObject(
      {
        title: 'renamed',
      },
    );
    expect((await call('DELETE', `/api/chat/sessions/${id}`, alice)).status).toBe(200);
    expect((await call('GET', `/api/chat/sessions/${id}`, alice)).status).toBe(404);
  });

  // Last: it kills the executor.
  it('a session whose executor died is taken over by the next message', async () => {
    expect((await rules({ ask: ['Tool(wait)'] })).status).toBe(200);
    const id = await session({ permissionMode: 'ask' });
    llm.enqueue({ toolCalls: [{ name: 'wait', arguments: { ms: 0 } }] });
    const s = await send(id, 'wait');
    const card = await s.next('approval_requested');
    await stack.restartAll('executor', 'SIGKILL');
    expect((await detail(id))['status']).toBe('awaiting_approval');
    // Nobody drives the turn: its card cannot be answered, there is nothing to cancel.
    const approve = await call(
      'POST',
      `/api/chat/sessions/${id}/calls/${String(card.data['callId'])}/approve`,
      alice,
      {},
    );
    expect([approve.status, approve.json['code']]).toEqual([409, 'conflict']);
    expect((await call('POST', `/api/chat/sessions/${id}/cancel`, alice)).json).toMatchObject({
      accepted: false,
    });
    await rules({});
    llm.enqueue({ content: 'taken over' });
    const next = await (await send(id, 'are you there?')).all();
    expect(next.at(-1)).toMatchObject({ type: 'message_complete', data: { content: 'taken over' } });
    // The stream of the lost turn ended with the new turn's end, too.
    expect((await s.all()).at(-1)?.type).toBe('message_complete');
    expect((await detail(id))['toolCalls']).toEqual([expect.objectContaining({ status: 'cancelled' })]);
  });
});
