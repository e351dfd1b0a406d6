import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { FakeLlmServer } from './fake-llm';

/** The fake model must be indistinguishable, for the real LangChain OpenAI client, from the API. */
describe('FakeLlmServer through @langchain/openai', () => {
  let fake: FakeLlmServer;
  let model: ChatOpenAI;

  beforeAll(async () => {
    fake = await FakeLlmServer.start();
    model = new ChatOpenAI({
      model: 'fake-model',
      apiKey: 'test-key',
      maxRetries: 0,
      configuration: { baseURL: fake.baseUrl },
    });
  });

  afterAll(() => fake.close());

  it('answers a plain completion and records the request', async () => {
    fake.enqueue({ content: 'Hello, planner.' });
    const reply = await model.invoke([{ role: 'user', content: 'hi' }]);
    expect(reply.content).toBe('Hello, planner.');
    expect(fake.requests.at(-1)).toMatchObject({
      model: 'fake-model',
      stream: false,
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('streams in chunks', async () => {
    fake.enqueue({ content: '{"steps":[{"id":"a"}]}', chunkSize: 4 });
    const pieces: string[] = [];
    for await (const chunk of await model.stream('plan please')) pieces.push(String(chunk.content));
    expect(pieces.filter(Boolean).length).toBeGreaterThan(3);
    expect(pieces.join('')).toBe('{"steps":[{"id":"a"}]}');
    expect(fake.requests.at(-1)?.stream).toBe(true);
  });

  it('returns tool calls, streamed or not', async () => {
    const withTools = model.bindTools([
      { name: 'get_sum', description: 'add', schema: z.object({ a: z.number(), b: z.number() }) },
    ]);
    fake.enqueue({ toolCalls: [{ name: 'get_sum', arguments: { a: 2, b: 40 } }] });
    const reply = await withTools.invoke('what is 2+40?');
    expect(reply.tool_calls).toEqual([expect.objectContaining({ name: 'get_sum', args: { a: 2, b: 40 } })]);
    expect(fake.requests.at(-1)?.tools).toEqual([expect.objectContaining({ type: 'function' })]);

    fake.enqueue({ content: 'thinking', toolCalls: [{ name: 'get_sum', arguments: { a: 1, b: 1 } }] });
    let merged: Awaited<ReturnType<typeof withTools.invoke>> | undefined;
    for await (const chunk of await withTools.stream('again')) merged = merged ? merged.concat(chunk) : chunk;
    expect(merged?.tool_calls).toEqual([expect.objectContaining({ name: 'get_sum', args: { a: 1, b: 1 } })]);
  });

  it('fails like the API when scripted to, or when the script runs out', async () => {
    fake.enqueue({ errorStatus: 429 });
    await expect(model.invoke('x')).rejects.toThrow(/429/);
    await expect(model.invoke('x')).rejects.toThrow(/no scripted reply left/);
  });
});
