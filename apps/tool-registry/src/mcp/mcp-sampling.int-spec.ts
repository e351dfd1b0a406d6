import { randomBytes } from 'node:crypto';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpSamplingSettings } from '@switchyard/contracts';
import { createRedis, type Redis } from '@switchyard/server-queue';
import { FakeLlmServer, testConfig, uniquePrefix } from '@switchyard/testing';
import { McpSampler, messagesOf, stopReasonOf } from './mcp-sampling';
import type { Clock } from './record-health';

/** Real Redis and the fake OpenAI-compatible model: caps, the shared daily budget, refusals. */
describe('McpSampler', () => {
  let redis: Redis;
  let llm: FakeLlmServer;
  let now = Date.UTC(2026, 11, 4, 23, 59, 0);
  const clock: Clock = { now: () => now };
  const prefix = uniquePrefix('sampling');
  let replicaA: McpSampler;
  let replicaB: McpSampler;
  const id = Number.parseInt(randomBytes(3).toString('hex'), 16);
  const record = (sampling: Partial<McpSamplingSettings>) => ({
    id,
    name: 'helper',
    sampling: { enabled: true, maxTokens: 64, dailyTokens: 1_000, ...sampling },
  });
  const ask = (text: string, maxTokens = 500) => ({
    messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }],
    systemPrompt: 'You are terse.',
    maxTokens,
    temperature: 0.3,
    stopSequences: ['END'],
  });
  const signal = new AbortController().signal;

  beforeAll(async () => {
    redis = createRedis({ url: 'redis://127.0.0.1:6379', name: 'sampling-test' });
    await redis.connect();
    llm = await FakeLlmServer.start();
    const config = testConfig('tool-registry', {
      NATS_SUBJECT_PREFIX: prefix,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake-small',
      LLM_BASE_URL: llm.baseUrl,
    });
    replicaA = new McpSampler(redis, config, clock);
    replicaB = new McpSampler(redis, config, clock);
  });

  afterAll(async () => {
    const keys = await redis.keys(`sy:${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    await llm.close();
  });

  it('asks the configured model with the system prompt, capped at the record’s maxTokens', async () => {
    llm.enqueue({ content: 'forty-two', usage: { promptTokens: 12, completionTokens: 3 } });
    const out = await replicaA.sample(record({}), ask('the answer?'), signal);
    expect(out.result).toEqual({
      role: 'assistant',
      content: { type: 'text', text: 'forty-two' },
      model: 'fake-small',
      stopReason: 'endTurn',
    });
    expect(out).toMatchObject({ inputTokens: 12, outputTokens: 3, maxTokens: 64 });
    const sent = llm.requests.at(-1);
    expect(sent).toMatchObject({ model: 'fake-small', maxTokens: 64, temperature: 0.3, stop: ['END'] });
    expect(sent?.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'the answer?' },
    ]);
    // What the model really used is what counts against the day.
    expect(await replicaB.usedToday(id)).toBe(15);
  });

  it('shares one daily budget between replicas and refuses a request that could overspend it', async () => {
    llm.enqueue({ content: 'ok', usage: { promptTokens: 400, completionTokens: 500 } });
    await replicaB.sample(record({ maxTokens: 64 }), ask('x'), signal);
    expect(await replicaA.usedToday(id)).toBe(915);
    // 915 used; "one more" under the system prompt is about 6 tokens, plus up to 100 answered: 1,021.
    const refused = replicaA.sample(record({ maxTokens: 100 }), ask('one more'), signal);
    await expect(refused).rejects.toThrow(McpError);
    await expect(refused).rejects.toThrow(/budget of the tool record helper is spent for today: 915 of 1000/);
    // A new UTC day starts a new budget.
    now += 60_000;
    llm.enqueue({ content: 'fresh', usage: { promptTokens: 1, completionTokens: 1 } });
    await expect(replicaA.sample(record({}), ask('one more'), signal)).resolves.toMatchObject({
      outputTokens: 1,
    });
  });

  it('refuses when the record has sampling off, and gives nothing back from a failed model', async () => {
    await expect(replicaA.sample(record({ enabled: false }), ask('x'), signal)).rejects.toThrow(
      /sampling is off for the tool record helper/,
    );
    const before = await replicaA.usedToday(id);
    llm.enqueue({ errorStatus: 400 }, { errorStatus: 400 }, { errorStatus: 400 });
    await expect(replicaA.sample(record({}), ask('x'), signal)).rejects.toThrow(/the model failed/);
    expect(await replicaA.usedToday(id)).toBe(before);
  });

  it('converts text and image content, refuses audio and tools', () => {
    const messages = messagesOf({
      maxTokens: 10,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          ],
        },
        { role: 'assistant', content: { type: 'text', text: 'a square' } },
      ],
    });
    expect(messages.map((m) => [m.getType(), m.content])).toEqual([
      [
        'human',
        [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      ],
      ['ai', 'a square'],
    ]);
    expect(() =>
      messagesOf({
        maxTokens: 10,
        messages: [{ role: 'user', content: { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' } }],
      }),
    ).toThrow(/audio is not supported|of type audio/);
    expect(() =>
      messagesOf({
        maxTokens: 10,
        messages: [{ role: 'user', content: { type: 'text', text: 'x' } }],
        tools: [{ name: 't', inputSchema: { type: 'object' } }],
      }),
    ).toThrow(/sampling with tools is not supported/);
    expect(() => messagesOf({ maxTokens: 10, messages: [] })).toThrow(/at least one message/);
  });

  it('names stop reasons in MCP’s words', () => {
    expect(stopReasonOf({ finish_reason: 'length' })).toBe('maxTokens');
    expect(stopReasonOf({ stop_reason: 'end_turn' })).toBe('endTurn');
    expect(stopReasonOf({ stop_reason: 'stop_sequence' })).toBe('stopSequence');
    expect(stopReasonOf({ done_reason: 'other' })).toBe('other');
    expect(stopReasonOf({})).toBeUndefined();
  });
});
