import { join } from 'node:path';
import { FakeLlmServer, Platform, waitFor } from '@switchyard/testing';

const ROOT = join(__dirname, '..', '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const SAMPLE = 'mcp__sampler__trigger-sampling-request';

interface EventJson {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Sampling (`sampling/createMessage`) from a real server (npm's server-everything, whose
 * trigger-sampling-request tool asks the client's model): off by default, so the server does not even
 * offer the tool; on, the configured model (the fake one) answers under the record's caps, the step
 * records what it cost, and a spent daily budget refuses with a clear sentence. Only admins turn it on.
 */
describe('MCP sampling through the platform', () => {
  let p: Platform;
  let llm: FakeLlmServer;
  let alice: string;
  let id: number;

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    p = await Platform.start('sampling', {
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake-sampler',
      LLM_BASE_URL: llm.baseUrl,
      MCP_HANDSHAKE_TIMEOUT_MS: '8000',
    });
    alice = await p.token('alice');
    const rec = await p.call('POST', '/mcp/tool', p.admin, {
      name: 'sampler',
      type: 'LOCAL',
      configJson: JSON.stringify({ command: process.execPath, args: [EVERYTHING, 'stdio'] }),
    });
    expect(rec.status).toBe(201);
    id = rec.json['id'] as number;
  }, 180_000);

  afterAll(async () => {
    await p?.stop();
    await llm?.close();
  });

  const test = async () => {
    const tested = await p.call('POST', `/mcp/tool/${id}/test`, p.admin);
    expect(tested.json).toMatchObject({ success: true });
    return tested.json['tools'] as string[];
  };
  const run = async (runId: string) =>
    (await p.call('GET', `/api/agent/runs/${runId}`, alice)).json as { status: string; events: EventJson[] };
  const finished = (runId: string) =>
    waitFor(async () => {
      const r = await run(runId);
      return ['completed', 'failed', 'cancelled', 'interrupted'].includes(r.status) ? r : undefined;
    });
  const sampleRun = (prompt: string, maxTokens: number) =>
    p.startRun(
      {
        goal: 'ask the model through the server',
        workflow: { steps: [{ id: 'ask', tool: SAMPLE, arguments: { prompt, maxTokens } }] },
        config: { planApproval: false, permissionMode: 'full-access' },
      },
      alice,
    );

  it('is off by default: the client does not declare sampling, so the server offers no sampling tool', async () => {
    const shown = await p.call('GET', `/mcp/tool/${id}`, p.admin);
    expect(shown.json['sampling']).toEqual({ enabled: false, maxTokens: 1024, dailyTokens: 100000 });
    const tools = await test();
    expect(tools).toEqual(expect.arrayContaining(['echo']));
    expect(tools).not.toContain('trigger-sampling-request');
  });

  it('refuses bad settings and users who are not admins', async () => {
    const bad = await p.call('PUT', '/mcp/tool', p.admin, {
      id,
      sampling: { enabled: true, maxTokens: 0, dailyTokens: 10 },
    });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('sampling.maxTokens');
    const user = await p.call('PUT', '/mcp/tool', alice, { id, sampling: { enabled: true } });
    expect(user.status).toBe(403);
  });

  it('on: the configured model answers, capped at the record’s maxTokens, and the step records the request', async () => {
    const on = await p.call('PUT', '/mcp/tool', p.admin, {
      id,
      sampling: { enabled: true, maxTokens: 50, dailyTokens: 2_000 },
    });
    expect(on.status).toBe(200);
    expect(on.json['sampling']).toEqual({ enabled: true, maxTokens: 50, dailyTokens: 2000 });
    // The new capability changes what the server offers: tested again, its sampling tool is there.
    expect(await test()).toContain('trigger-sampling-request');

    llm.enqueue({ content: 'a haiku about queues', usage: { promptTokens: 30, completionTokens: 6 } });
    const done = await finished(await sampleRun('write a haiku', 400));
    expect(done.status).toBe('completed');
    const complete = done.events.find((e) => e.type === 'step_complete')?.data;
    expect(JSON.stringify(complete?.['result'])).toContain('a haiku about queues');
    expect(complete?.['sampling']).toEqual([
      expect.objectContaining({
        model: 'fake-sampler',
        inputTokens: 30,
        outputTokens: 6,
        stopReason: 'endTurn',
      }),
    ]);
    const asked = llm.requests.at(-1);
    expect(asked).toMatchObject({ model: 'fake-sampler', maxTokens: 50 });
    expect(asked?.messages[0]).toEqual({ role: 'system', content: 'You are a helpful test server.' });
    expect(JSON.stringify(asked?.messages[1])).toContain('write a haiku');
  });

  it('a spent daily budget refuses the request with a sentence the step shows', async () => {
    // 36 used; a budget of 60 cannot hold another prompt plus up to 50 answered tokens.
    const low = await p.call('PUT', '/mcp/tool', p.admin, {
      id,
      sampling: { enabled: true, maxTokens: 50, dailyTokens: 60 },
    });
    expect(low.status).toBe(200);
    await test();
    const before = llm.requests.length;
    const done = await finished(await sampleRun('another one', 400));
    expect(done.status).toBe('failed');
    const failed = done.events.find((e) => e.type === 'step_failed')?.data;
    expect(failed?.['code']).toBe('tool_failed');
    expect(String(failed?.['error'])).toMatch(
      /sampling budget of the tool record sampler is spent for today/,
    );
    expect(llm.requests.length).toBe(before); // the model was not asked
  });
});
