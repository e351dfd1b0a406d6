import { createServer, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Platform, sseBlocks, waitFor, type ServiceProcess } from '@switchyard/testing';

type Step = { id: string; tool: string; arguments: Record<string, unknown>; dependsOn?: string[] };

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/**
 * Switchyard as an MCP server: the SDK's own client over Streamable HTTP against /mcp, with two
 * gateway replicas. Alice publishes workflows; Bob is another owner.
 */
describe('the MCP endpoint (/mcp) with the SDK client', () => {
  let p: Platform;
  let second: ServiceProcess;
  let alice: string;
  let bob: string;
  const clients: Client[] = [];
  const ids: Record<string, string> = {};
  /** A page the `held` workflow fetches: answered only when the test releases it. */
  let holder: HttpServer;
  const held = new Map<string, ServerResponse>();

  /** A fetch that sends request i to urls[i % n]: every request of a session may land elsewhere. */
  function spread(urls: string[], onGetOpen?: () => void): typeof fetch {
    let i = 0;
    return async (input, init) => {
      const target = new URL(String(input instanceof Request ? input.url : input));
      const base = new URL(urls[i++ % urls.length] as string);
      target.host = base.host;
      const res = await fetch(target, init);
      if (init?.method === 'GET' && res.ok) onGetOpen?.();
      return res;
    };
  }

  async function connect(
    token: string,
    opts: { urls?: string[]; sessionId?: string; onGetOpen?: () => void } = {},
  ): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const urls = opts.urls ?? [p.url];
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', urls[0]), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
      fetch: spread(urls, opts.onGetOpen),
      ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
    });
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return { client, transport };
  }

  async function publish(token: string, name: string, steps: Step[]): Promise<string> {
    const created = await p.call('POST', '/api/workflows', token, {
      name,
      description: `the ${name} workflow`,
      inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
      plan: { steps },
    });
    if (created.status !== 201) throw new Error(`${name}: ${created.text}`);
    const id = created.json['id'] as string;
    const published = await p.call('POST', `/api/workflows/${id}/publish`, token, { revision: 1 });
    if (published.status !== 200) throw new Error(`${name}: ${published.text}`);
    return id;
  }

  const text = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

  beforeAll(async () => {
    holder = createServer((req, res) => void held.set(req.url ?? '', res));
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const holdAt = `127.0.0.1:${(holder.address() as AddressInfo).port}`;
    p = await Platform.start('mcpserver', {
      TOOL_TIMEOUT_MS: '600000',
      WEB_FETCH_PRIVATE_HOSTS: holdAt,
      WEB_FETCH_TIMEOUT_MS: '300000',
    });
    second = await p.stack.startService('gateway');
    alice = await p.token('alice');
    bob = await p.token('bob');
    ids['echo'] = await publish(alice, 'echo', [
      { id: 'a', tool: 'wait', arguments: { ms: 0, value: { tag: '{{inputs.tag}}' } } },
      { id: 'b', tool: 'wait', arguments: { ms: 0, value: { seen: '{{inputs.tag}}' } }, dependsOn: ['a'] },
    ]);
    ids['slow'] = await publish(alice, 'slow', [
      { id: 'first', tool: 'wait', arguments: { ms: 0, value: 1 } },
      { id: 'long', tool: 'wait', arguments: { ms: 600_000, value: 2 }, dependsOn: ['first'] },
    ]);
    ids['writer'] = await publish(alice, 'writer', [
      { id: 'w', tool: 'write_file', arguments: { filePath: 'mcp-{{inputs.tag}}.txt', content: 'hello' } },
    ]);
    ids['held'] = await publish(alice, 'held', [
      { id: 'a', tool: 'wait', arguments: { ms: 0, value: 'a' } },
      {
        id: 'hold',
        tool: 'web_fetch',
        arguments: { url: `http://${holdAt}/{{inputs.tag}}` },
        dependsOn: ['a'],
      },
      { id: 'b', tool: 'wait', arguments: { ms: 0, value: 'b' }, dependsOn: ['hold'] },
      { id: 'c', tool: 'wait', arguments: { ms: 0, value: { done: '{{inputs.tag}}' } }, dependsOn: ['b'] },
    ]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    held.forEach((res) => res.end());
    await new Promise((resolve) => holder?.close(resolve));
    await p?.stop();
  });

  /** Raw Streamable HTTP, for what the SDK client does not expose (event ids, dropping a stream). */
  const headers = (token: string, extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${token}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...extra,
  });
  const post = (url: string, body: unknown, extra: Record<string, string> = {}, signal?: AbortSignal) =>
    fetch(`${url}/mcp`, {
      method: 'POST',
      headers: headers(alice, extra),
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    });
  const resume = (url: string, session: Record<string, string>, lastEventId: string, signal?: AbortSignal) =>
    fetch(`${url}/mcp`, {
      headers: { ...headers(alice, session), accept: 'text/event-stream', 'last-event-id': lastEventId },
      ...(signal ? { signal } : {}),
    });
  type Seen = {
    id?: string;
    message?: {
      id?: number;
      method?: string;
      params?: { progress?: number };
      result?: Record<string, unknown>;
    };
  };
  /** The SSE blocks of a response until `stop` says so (or, without one, until the stream ends). */
  const read = async (res: Response, stop?: (seen: Seen) => boolean) => {
    const seen: Seen[] = [];
    for await (const b of sseBlocks(res.body as ReadableStream<Uint8Array>)) {
      const message = b.data ? (JSON.parse(b.data) as Seen['message']) : undefined;
      const one = { ...(b.id ? { id: b.id } : {}), ...(message ? { message } : {}) };
      if (!b.id && !message) continue; // a keep-alive
      seen.push(one);
      if (stop?.(one)) break;
    }
    return seen;
  };
  /** The SSE blocks of a response until one carries the JSON-RPC answer to `id`. */
  const until = (res: Response, id: number) => read(res, (b) => b.message?.id === id);
  /** A session opened with `version` on `url`: the headers its later requests carry. */
  const open = async (url: string, version: string) => {
    const init = await post(url, { ...INIT, params: { ...INIT.params, protocolVersion: version } });
    expect(init.status).toBe(200);
    const session = init.headers.get('mcp-session-id') as string;
    const answer = (await until(init, 1)).find((b) => b.message?.id === 1)?.message;
    expect(answer?.result?.['protocolVersion']).toBe(version);
    const s = { 'mcp-session-id': session, 'mcp-protocol-version': version };
    expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, s)).status).toBe(202);
    return s;
  };

  it('refuses a request without a token (401) or with an unknown one', async () => {
    for (const headers of [{}, { authorization: 'Bearer not-a-token' }] as Array<Record<string, string>>) {
      const res = await fetch(`${p.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        body: JSON.stringify(INIT),
      });
      expect(res.status).toBe(401);
      expect(await res.text()).not.toContain('serverInfo');
    }
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', p.url));
    await expect(new Client({ name: 'anon', version: '1' }).connect(transport)).rejects.toThrow();
  });

  it('lists the published workflows as tools with input and output schemas, and the task tools', async () => {
    const { client } = await connect(alice);
    const { tools } = await client.listTools();
    const echo = tools.find((t) => t.name === `run_workflow_${ids['echo']}`);
    expect(echo?.description).toContain('the echo workflow');
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { tag: { type: 'string' } } });
    expect(echo?.outputSchema).toMatchObject({ type: 'object', required: ['runId', 'status'] });
    expect(echo?.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === `run_workflow_${ids['writer']}`)?.annotations?.readOnlyHint).toBe(
      false,
    );
    expect(tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['task_submit_workflow', 'task_output', 'task_wait', 'task_kill', 'task_list']),
    );
  });

  it('calls a published workflow, with a progress notification per finished step', async () => {
    const { client } = await connect(alice);
    const progress: Array<{ progress: number; total?: number; message?: string }> = [];
    const r = (await client.callTool(
      { name: `run_workflow_${ids['echo']}`, arguments: { tag: 'hi' } },
      undefined,
      { onprogress: (n) => progress.push(n) },
    )) as CallToolResult;
    expect(r.isError).toBeFalsy();
    const out = r.structuredContent as { runId: string; status: string; result: Record<string, unknown> };
    expect(out.status).toBe('completed');
    expect(JSON.stringify(out.result)).toContain('"seen":"hi"');
    expect(progress.map((n) => [n.progress, n.total])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(progress[0]?.message).toContain('step a');
    // The run is the caller's, recorded like any other: readable over REST as well.
    const run = await p.call('GET', `/api/agent/runs/${out.runId}`, alice);
    expect(run.status).toBe(200);
    expect(run.json['status']).toBe('completed');
    ids['echoRun'] = out.runId;
  });

  it('reads a run resource (plan, step results, status) and lists recent runs and the template', async () => {
    const { client } = await connect(alice);
    const uri = `switchyard://runs/${ids['echoRun']}`;
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['switchyard://runs/{runId}']);
    const read = await client.readResource({ uri });
    const content = read.contents[0] as { mimeType: string; text: string };
    expect(content.mimeType).toBe('application/json');
    const run = JSON.parse(content.text) as {
      status: string;
      plan: { steps: Array<{ id: string }> };
      executions: Array<{ stepId: string; status: string; result: unknown }>;
    };
    expect(run.status).toBe('completed');
    expect(run.plan.steps.map((s) => s.id)).toEqual(['a', 'b']);
    expect(run.executions.map((s) => [s.stepId, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'completed'],
    ]);
    expect(run.executions[1]?.result).toEqual({ seen: 'hi' });
    await expect(client.readResource({ uri: 'switchyard://runs/not-a-run' })).rejects.toThrow(/not found/i);
  });

  it('cancels the run when the client cancels the call mid-run', async () => {
    const { client } = await connect(alice, { urls: [p.url, second.url] });
    const abort = new AbortController();
    const call = client.callTool(
      { name: `run_workflow_${ids['slow']}`, arguments: { tag: 'x' } },
      undefined,
      {
        signal: abort.signal,
        // The first step's progress: the run is in its long step now.
        onprogress: () => abort.abort('enough'),
        timeout: 600_000,
      },
    );
    await expect(call).rejects.toThrow();
    const cancelled = await waitFor(
      async () => {
        const page = await p.call('GET', '/api/agent/runs?limit=20', alice);
        const items = page.json['items'] as Array<{ id: string; goal: string; status: string }>;
        return items.find((r) => r.goal === 'slow' && r.status === 'cancelled');
      },
      60_000,
      200,
    );
    expect(cancelled.status).toBe('cancelled');
  });

  it("runs unattended under the owner's MCP permission mode: an ask becomes a denial", async () => {
    const { client } = await connect(alice);
    const name = `run_workflow_${ids['writer']}`;
    const denied = (await client.callTool({ name, arguments: { tag: 'a' } })) as CallToolResult;
    expect(denied.isError).toBe(true);
    expect(text(denied)).toMatch(/failed/);
    const put = await p.call('PUT', '/api/settings/mcp', alice, { permissionMode: 'full-access' });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ owner: 'alice', enabled: true, permissionMode: 'full-access' });
    const allowed = (await client.callTool({ name, arguments: { tag: 'b' } })) as CallToolResult;
    expect(allowed.isError).toBeFalsy();
    expect((await p.call('PUT', '/api/settings/mcp', alice, { permissionMode: 'ask' })).status).toBe(200);
  });

  it('submits a background task and awaits it with task_wait', async () => {
    const { client } = await connect(alice);
    const submitted = (await client.callTool({
      name: 'task_submit_workflow',
      arguments: { workflowId: ids['echo'], inputs: { tag: 'bg' } },
    })) as CallToolResult;
    expect(submitted.isError).toBeFalsy();
    const taskId = (submitted.structuredContent as { taskId: string }).taskId;
    const waited = (await client.callTool({
      name: 'task_wait',
      arguments: { taskIds: [taskId], timeoutMs: 120_000 },
    })) as CallToolResult;
    const done = (waited.structuredContent as { done: Array<{ id: string; state: string; output: unknown }> })
      .done;
    expect(done.map((t) => [t.id, t.state])).toEqual([[taskId, 'completed']]);
    expect(JSON.stringify(done[0]?.output)).toContain('"seen":"bg"');
  });

  it('tells an open session that its tool list changed on publish and unpublish, and its resources on a new run', async () => {
    let opened!: () => void;
    const getOpen = new Promise<void>((resolve) => (opened = resolve));
    const { client } = await connect(alice, { onGetOpen: () => opened() });
    let toolChanges = 0;
    let resourceChanges = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void toolChanges++);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void resourceChanges++);
    await getOpen;
    const id = await publish(alice, 'fresh', [{ id: 's', tool: 'wait', arguments: { ms: 0 } }]);
    await waitFor(async () => toolChanges >= 1, 30_000, 50);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(`run_workflow_${id}`);
    const wf = await p.call('GET', `/api/workflows/${id}`, alice);
    expect(
      (await p.call('POST', `/api/workflows/${id}/unpublish`, alice, { revision: wf.json['revision'] }))
        .status,
    ).toBe(200);
    await waitFor(async () => toolChanges >= 2, 30_000, 50);
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain(`run_workflow_${id}`);
    await client.callTool({ name: `run_workflow_${ids['echo']}`, arguments: { tag: 'r' } });
    await waitFor(async () => resourceChanges >= 1, 30_000, 50);
  });

  it("shows another owner's token none of these workflows, runs or sessions", async () => {
    const { client } = await connect(bob);
    const { tools } = await client.listTools();
    expect(tools.filter((t) => t.name.startsWith('run_workflow_'))).toEqual([]);
    await expect(
      client.callTool({ name: `run_workflow_${ids['echo']}`, arguments: { tag: 'x' } }),
    ).rejects.toThrow(/Unknown tool/);
    const submitted = (await client.callTool({
      name: 'task_submit_workflow',
      arguments: { workflowId: ids['echo'], inputs: { tag: 'x' } },
    })) as CallToolResult;
    expect(submitted.isError).toBe(true);
    expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(
      `switchyard://runs/${ids['echoRun']}`,
    );
    await expect(client.readResource({ uri: `switchyard://runs/${ids['echoRun']}` })).rejects.toThrow(
      /not found/i,
    );
    for (const uri of [
      'switchyard://runs/',
      `switchyard://runs/${ids['echoRun']}/..`,
      `switchyard://runs/../runs/${ids['echoRun']}`,
      `SWITCHYARD://RUNS/${ids['echoRun']}`,
      'file:///etc/passwd',
      `switchyard://runs/${ids['echoRun']}?owner=alice`,
    ])
      await expect(client.readResource({ uri })).rejects.toThrow(/not found/i);
    // Alice's session id with Bob's token is no session at all; neither is a made-up one.
    const { transport } = await connect(alice);
    const res = await fetch(`${p.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bob}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    expect(res.status).toBe(404);
    for (const sessionId of ['00000000-0000-4000-8000-000000000000', '../../s', '*']) {
      const made = await fetch(`${p.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bob}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sessionId,
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }),
      });
      expect(made.status).toBe(404);
    }
  });

  it('continues a session started on one gateway replica on the other', async () => {
    const { client, transport } = await connect(alice, { urls: [p.url] });
    const sessionId = transport.sessionId as string;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const { client: other, transport: otherTransport } = await connect(alice, {
      urls: [second.url],
      sessionId,
    });
    const names = (await other.listTools()).tools.map((t) => t.name);
    expect(names).toContain(`run_workflow_${ids['echo']}`);
    const r = (await other.callTool({
      name: `run_workflow_${ids['echo']}`,
      arguments: { tag: 'b2' },
    })) as CallToolResult;
    expect((r.structuredContent as { status: string }).status).toBe('completed');
    // Ended on the second replica: the first answers 404 for it.
    await otherTransport.terminateSession();
    await expect(client.listTools()).rejects.toThrow(/404|not found/i);
  });

  it("speaks revision 2025-06-18 too, and replays a call's stream after Last-Event-ID on the other replica", async () => {
    const older = await open(p.url, '2025-06-18');
    const listed = await until(
      await post(second.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, older),
      2,
    );
    const tools = listed.find((b) => b.message?.id === 2)?.message?.result?.['tools'] as Array<{
      name: string;
    }>;
    expect(tools.map((t) => t.name)).toContain(`run_workflow_${ids['echo']}`);

    const session = await open(p.url, '2025-11-25');
    const call = { name: `run_workflow_${ids['echo']}`, arguments: { tag: 'resume' } };
    const first = await until(
      await post(p.url, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: call }, session),
      5,
    );
    const priming = first[0];
    expect(priming?.id).toBeDefined();
    expect(priming?.message).toBeUndefined();
    const answered = first.find((b) => b.message?.id === 5);
    expect(JSON.stringify(answered?.message)).toContain('"seen":"resume"');
    // As if the stream had broken after its first event: resume on the other replica.
    const abort = new AbortController();
    const resumed = await resume(second.url, session, priming?.id as string, abort.signal);
    expect(resumed.status).toBe(200);
    // The call had answered: the replay is its answer, and the stream ends with it.
    const replayed = await read(resumed);
    abort.abort();
    expect(replayed.map((b) => b.message)).toEqual([answered?.message]);
    expect(replayed[0]?.id).toBe(answered?.id);
  });

  it('resumes a running call on the other replica and follows it live: the remaining progress and the result, each once', async () => {
    expect((await p.call('PUT', '/api/settings/mcp', alice, { permissionMode: 'full-access' })).status).toBe(
      200,
    );
    try {
      const session = await open(p.url, '2025-11-25');
      const call = {
        name: `run_workflow_${ids['held']}`,
        arguments: { tag: 'live' },
        _meta: { progressToken: 'held' },
      };
      const dropA = new AbortController();
      const onA = await post(
        p.url,
        { jsonrpc: '2.0', id: 9, method: 'tools/call', params: call },
        session,
        dropA.signal,
      );
      expect(onA.status).toBe(200);
      // Replica A sends the priming event and the first step's progress; then the stream breaks.
      const beforeDrop = await read(onA, (b) => b.message?.params?.progress === 1);
      dropA.abort();
      expect(beforeDrop[0]?.message).toBeUndefined();
      const cursor = beforeDrop[beforeDrop.length - 1]?.id as string;
      expect(cursor).toMatch(/\.1$/);
      // The run waits in its second step (the page it fetches is held) while the client resumes on B.
      await waitFor(async () => held.has('/live'), 60_000, 50);
      // Not with another owner's token, nor with an event id that is not one.
      const bobs = await fetch(`${second.url}/mcp`, {
        headers: { ...headers(bob, session), accept: 'text/event-stream', 'last-event-id': cursor },
      });
      expect(bobs.status).toBe(404);
      for (const bad of ['nope', '../x.1', `${cursor}x`])
        expect((await resume(second.url, session, bad)).status).toBe(400);

      const dropB = new AbortController();
      const onB = await resume(second.url, session, cursor, dropB.signal);
      expect(onB.status).toBe(200); // subscribed: what A sends from now on reaches this stream
      held.get('/live')?.end('released');
      const afterResume = await read(onB); // ends after the answer
      dropB.abort();
      expect(afterResume.map((b) => b.message?.params?.progress ?? b.message?.id)).toEqual([2, 3, 4, 9]);
      const answer = afterResume[afterResume.length - 1]?.message;
      expect(answer?.result?.['structuredContent']).toMatchObject({ status: 'completed' });
      expect(JSON.stringify(answer?.result?.['structuredContent'])).toContain('"done":"live"');
      const eventIds = [...beforeDrop, ...afterResume].flatMap((b) => (b.id ? [b.id] : []));
      expect(new Set(eventIds).size).toBe(eventIds.length);
      const stream = cursor.replace(/\.\d+$/, '');
      expect(eventIds).toEqual([0, 1, 2, 3, 4, 5].map((n) => `${stream}.${n}`));

      // The whole stream is kept: resumed from its start on A, it replays everything once and ends.
      const again = await read(await resume(p.url, session, `${stream}.0`));
      expect(again.map((b) => b.id)).toEqual(eventIds.slice(1));
      expect(again[again.length - 1]?.message).toEqual(answer);
    } finally {
      await p.call('PUT', '/api/settings/mcp', alice, { permissionMode: 'ask' });
    }
  });

  it('resumes the standalone stream on the other replica, where list changes go on arriving', async () => {
    const session = await open(p.url, '2025-11-25');
    const dropA = new AbortController();
    const onA = await fetch(`${p.url}/mcp`, {
      headers: { ...headers(alice, session), accept: 'text/event-stream' },
      signal: dropA.signal,
    });
    expect(onA.status).toBe(200);
    const first = read(onA, (b) => b.message?.method === 'notifications/tools/list_changed');
    // The GET stream is subscribed once its answer has come: publish until A tells of a change.
    await publish(alice, 'changes-1', [{ id: 's', tool: 'wait', arguments: { ms: 0 } }]);
    const toldOnA = await first;
    dropA.abort();
    const cursor = toldOnA[toldOnA.length - 1]?.id as string;
    expect(cursor).toMatch(/^_GET_stream\.\d+$/);

    const dropB = new AbortController();
    const onB = await resume(second.url, session, cursor, dropB.signal);
    expect(onB.status).toBe(200);
    const next = read(onB, (b) => b.message?.method === 'notifications/tools/list_changed');
    await publish(alice, 'changes-2', [{ id: 's', tool: 'wait', arguments: { ms: 0 } }]);
    const toldOnB = await next;
    dropB.abort();
    const seqs = [...toldOnA, ...toldOnB].map((b) => Number(b.id?.split('.')[1]));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('follows the admin settings: exposed workflows, and access turned off per owner', async () => {
    const { client } = await connect(alice);
    expect(
      (await p.call('PUT', '/api/settings/mcp', alice, { exposedWorkflows: [ids['echo']] })).status,
    ).toBe(200);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain(`run_workflow_${ids['echo']}`);
    expect(names).not.toContain(`run_workflow_${ids['slow']}`);
    // Only an admin turns access off, for any owner.
    expect((await p.call('PUT', '/api/settings/mcp', alice, { enabled: false })).status).toBe(403);
    expect((await p.call('PUT', '/api/settings/mcp?owner=bob', alice, { enabled: false })).status).toBe(403);
    const off = await p.call('PUT', '/api/settings/mcp?owner=alice', p.admin, { enabled: false });
    expect(off.json).toMatchObject({ owner: 'alice', enabled: false, exposedWorkflows: [ids['echo']] });
    await expect(connect(alice)).rejects.toThrow();
    expect((await p.call('GET', '/api/settings/mcp', alice)).json['enabled']).toBe(false);
    expect(
      (
        await p.call('PUT', '/api/settings/mcp?owner=alice', p.admin, {
          enabled: true,
          exposedWorkflows: 'all',
        })
      ).status,
    ).toBe(200);
    const again = await connect(alice);
    expect((await again.client.listTools()).tools.map((t) => t.name)).toContain(
      `run_workflow_${ids['slow']}`,
    );
  });
});
