import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOllama } from '@langchain/ollama';
import { AppError } from '@switchyard/contracts';
import { FakeLlmServer, testConfig } from '@switchyard/testing';
import { createChatModel } from './chat-model';

describe('createChatModel', () => {
  let fake: FakeLlmServer;

  beforeAll(async () => {
    fake = await FakeLlmServer.start();
  });

  afterAll(() => fake.close());

  const llm = (env: Record<string, string>) => testConfig('planner', env).llm;

  it('refuses with model_not_configured and says how to configure one', () => {
    let err: unknown;
    try {
      createChatModel(llm({}));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'model_not_configured',
      details: { missing: ['LLM_PROVIDER', 'LLM_MODEL'] },
    });
    expect((err as Error).message).toContain('LLM_PROVIDER');
    expect(() => createChatModel(llm({ LLM_PROVIDER: 'openai', LLM_MODEL: 'm' }))).toThrow(
      /needs LLM_API_KEY, or LLM_BASE_URL/,
    );
    expect(() => createChatModel(llm({ LLM_PROVIDER: 'anthropic', LLM_MODEL: 'm' }))).toThrow(
      /anthropic needs LLM_API_KEY/,
    );
  });

  it('talks to an OpenAI-compatible endpoint, with agent settings over the defaults', async () => {
    const model = createChatModel(
      llm({ LLM_PROVIDER: 'openai', LLM_MODEL: 'default-model', LLM_BASE_URL: fake.baseUrl }),
      {
        model: 'agent-model',
        temperature: 0.1,
      },
    );
    fake.enqueue({ content: 'ready' });
    expect((await model.invoke('hello')).content).toBe('ready');
    expect(fake.requests.at(-1)?.model).toBe('agent-model');
  });

  it('builds the other providers without contacting them', () => {
    expect(
      createChatModel(llm({ LLM_PROVIDER: 'anthropic', LLM_MODEL: 'claude-x', LLM_API_KEY: 'k' })),
    ).toBeInstanceOf(ChatAnthropic);
    expect(
      createChatModel(
        llm({ LLM_PROVIDER: 'ollama', LLM_MODEL: 'llama3', LLM_BASE_URL: 'http://127.0.0.1:11434' }),
      ),
    ).toBeInstanceOf(ChatOllama);
  });
});
