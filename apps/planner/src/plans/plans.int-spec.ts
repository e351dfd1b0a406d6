import { randomUUID } from 'node:crypto';
import {
  Events,
  Rpc,
  type PlanTokens,
  type DraftPlanResult,
  type RpcRequest,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import type { RunningService } from '@switchyard/server-runtime';
import {
  createTestDatabase,
  FakeLlmServer,
  freePort,
  testConfig,
  uniquePrefix,
  type TestDatabase,
} from '@switchyard/testing';
import { bootstrap } from '../bootstrap';

const tools: ToolDescriptor[] = [
  {
    name: 'read_file',
    description: 'Reads a text file of the workspace',
    inputSchema: {
      type: 'object',
      properties: { filePath: { type: 'string' } },
      required: ['filePath'],
      additionalProperties: false,
    },
    effect: 'read',
    idempotent: true,
    source: 'builtin',
  },
  {
    name: 'write_file',
    description: 'Writes a text file of the workspace',
    inputSchema: {
      type: 'object',
      properties: { filePath: { type: 'string' }, content: { type: 'string' } },
      required: ['filePath', 'content'],
      additionalProperties: false,
    },
    effect: 'write',
    idempotent: true,
    source: 'builtin',
  },
];

const validPlan = {
  goal: 'Copy the notes',
  steps: [
    { id: 'read', tool: 'read_file', arguments: { filePath: 'notes.md' }, description: 'Read the notes' },
    {
      id: 'copy',
      tool: 'write_file',
      arguments: { filePath: 'copy.md', content: '{{node.read.result}}' },
      dependsOn: ['read'],
    },
  ],
};
/** What validation makes of validPlan: defaults filled in. */
const validPlanParsed = {
  goal: 'Copy the notes',
  steps: [
    { ...validPlan.steps[0], dependsOn: [] },
    { ...validPlan.steps[1], description: '' },
  ],
};
const unknownToolPlan = {
  steps: [{ id: 'wipe', tool: 'delete_everything', arguments: { path: '/' } }],
};
const danglingPlan = {
  steps: [{ id: 'w', tool: 'write_file', arguments: { filePath: 'a', content: '{{steps.4.result}}' } }],
};

async function connectBus(prefix: string, name: string): Promise<Bus> {
  return Bus.connect({
    servers: ['nats://127.0.0.1:4222'],
    name,
    subjectPrefix: prefix,
    defaultTimeoutMs: 30_000,
  });
}

/** Collects the plan tokens of one run as the executor would see them. */
async function watchTokens(bus: Bus, runId: string) {
  const received: PlanTokens[] = [];
  const stop = bus.on(Events.planTokens(runId), (tokens) => received.push(tokens));
  await bus.ping(); // the subscription is registered at the server before the draft starts
  const textOf = (attempt: number) =>
    received
      .filter((t) => t.attempt === attempt)
      .map((t) => t.text)
      .join('');
  return { received, stop, textOf };
}

describe('planner drafts plans with a streamed model over NATS', () => {
  let fake: FakeLlmServer;
  let db: TestDatabase;
  let service: RunningService;
  let bus: Bus;

  beforeAll(async () => {
    fake = await FakeLlmServer.start();
    db = await createTestDatabase({ migrate: false });
    const prefix = uniquePrefix('pln');
    service = await bootstrap(
      testConfig('planner', {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: prefix,
        LLM_PROVIDER: 'openai',
        LLM_MODEL: 'fake',
        LLM_BASE_URL: fake.baseUrl,
      }),
    );
    bus = await connectBus(prefix, 'planner-test');
  });

  afterAll(async () => {
    await bus?.close();
    await service?.close();
    await fake?.close();
    await db?.drop();
  });

  afterEach(() => expect(fake.pending).toBe(0));

  const draft = (req: Partial<RpcRequest<typeof Rpc.planner.draft>> & { runId: string }) =>
    bus.call(Rpc.planner.draft, { goal: 'Copy notes.md to copy.md', tools, ...req });

  it('streams the draft on the run token subject and returns the validated plan', async () => {
    const runId = randomUUID();
    const tokens = await watchTokens(bus, runId);
    const content = `Here is the plan:\n\`\`\`json\n${JSON.stringify(validPlan, null, 2)}\n\`\`\`\nIt reads, then writes.`;
    fake.enqueue({
      content,
      chunkSize: 24,
      chunkDelayMs: 40,
      usage: { promptTokens: 1_000, completionTokens: 90 },
    });
    const before = fake.requests.length;

    const result = await draft({ runId, files: ['notes.md'], inputNames: ['files'] });

    // The tokens are the model's own figures (LangChain's usage metadata of the streamed answer).
    expect(result).toEqual({ ok: true, plan: validPlanParsed, attempts: 1, tokens: 1_090 });
    // Every token is routed before the reply is sent, so all have arrived by now.
    expect(tokens.textOf(1)).toBe(content);
    expect(tokens.received.length).toBeGreaterThan(1);
    expect(tokens.received.every((t) => t.runId === runId && t.attempt === 1)).toBe(true);
    tokens.stop();

    expect(fake.requests.length).toBe(before + 1);
    const request = fake.requests.at(-1);
    expect(request).toMatchObject({ model: 'fake', stream: true, tools: undefined });
    const [system, user] = request?.messages ?? [];
    expect(system?.role).toBe('system');
    expect(String(system?.content)).toContain('- read_file [read]: Reads a text file of the workspace');
    expect(String(system?.content)).toContain('{{node.<id>.result.a.b[0]}}');
    expect(user).toEqual({
      role: 'user',
      content: expect.stringContaining('Goal:\nCopy notes.md to copy.md'),
    });
    expect(String(user?.content)).toContain('- notes.md');
  });

  it('sends the validation issues back to the model and takes its corrected plan', async () => {
    const runId = randomUUID();
    const tokens = await watchTokens(bus, runId);
    const first = JSON.stringify(unknownToolPlan);
    const second = JSON.stringify(validPlan);
    fake.enqueue(
      { content: first, usage: { promptTokens: 10, completionTokens: 5 } },
      { content: second, usage: { promptTokens: 20, completionTokens: 7 } },
    );
    const before = fake.requests.length;

    const result = await draft({ runId });

    expect(result).toEqual({ ok: true, plan: validPlanParsed, attempts: 2, tokens: 42 });
    expect(fake.requests.length).toBe(before + 2);
    const retry = fake.requests.at(-1)?.messages ?? [];
    expect(retry.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(retry[2]?.content).toBe(first);
    expect(String(retry[3]?.content)).toContain(
      '- $.steps[0].tool: no tool named delete_everything in the catalog',
    );
    expect(tokens.textOf(1)).toBe(first);
    expect(tokens.textOf(2)).toBe(second);
    tokens.stop();
  });

  it('gives up after three invalid drafts with the issues of the last one', async () => {
    const runId = randomUUID();
    fake.enqueue(
      { content: 'I would rather not plan this.' },
      { content: JSON.stringify(danglingPlan) },
      { content: `\`\`\`json\n${JSON.stringify(unknownToolPlan)}\n\`\`\`` },
    );
    const before = fake.requests.length;

    const result: DraftPlanResult = await draft({ runId });

    expect(result).toEqual({
      ok: false,
      attempts: 3,
      issues: [
        {
          path: '$.steps[0].tool',
          code: 'unknown_tool',
          message: 'no tool named delete_everything in the catalog',
        },
      ],
      message:
        'the model did not produce a valid plan after 3 attempts: $.steps[0].tool: no tool named delete_everything in the catalog',
      tokens: expect.any(Number),
    });
    expect(fake.requests.length).toBe(before + 3);
    const [, second, third] = fake.requests.slice(before).map((r) => r.messages);
    expect(String(second?.at(-1)?.content)).toContain('- $: the answer holds no JSON object');
    expect(String(third?.at(-1)?.content)).toContain(
      '- $.steps[0].arguments.content: {{steps.4.result}}: there is no steps.4 in this plan',
    );
    expect(third).toHaveLength(6);
  });

  it('checks the inputs the plan references against the run inputs', async () => {
    const plan = {
      steps: [{ id: 'r', tool: 'read_file', arguments: { filePath: '{{inputs.path}}' } }],
    };
    fake.enqueue({ content: JSON.stringify(plan) });
    await expect(draft({ runId: randomUUID(), inputNames: ['path'] })).resolves.toMatchObject({
      ok: true,
      attempts: 1,
    });
    fake.enqueue(
      { content: JSON.stringify(plan) },
      { content: JSON.stringify(plan) },
      { content: JSON.stringify(plan) },
    );
    await expect(draft({ runId: randomUUID(), inputNames: [] })).resolves.toMatchObject({
      ok: false,
      issues: [{ path: '$.steps[0].arguments.filePath', code: 'unknown_input' }],
    });
  });

  it('asks for no repair once the drafts spent more than the run may (maxTokens)', async () => {
    // One reply only: a repair asked for would get the fake's "no scripted reply" error instead.
    fake.enqueue({
      content: JSON.stringify(unknownToolPlan),
      usage: { promptTokens: 300, completionTokens: 30 },
    });
    const before = fake.requests.length;
    const result = await draft({ runId: randomUUID(), maxTokens: 200 });
    expect(result).toMatchObject({ ok: false, attempts: 1, tokens: 330 });
    expect(fake.requests.length).toBe(before + 1);
  });

  it("puts the agent's system prompt before the planner's", async () => {
    fake.enqueue({ content: JSON.stringify(validPlan) });
    await expect(
      draft({ runId: randomUUID(), agentPrompt: 'You are Ledger, the accounts agent.' }),
    ).resolves.toMatchObject({ ok: true });
    const system = String(fake.requests.at(-1)?.messages[0]?.content);
    expect(system.startsWith('You are Ledger, the accounts agent.')).toBe(true);
    expect(system).toContain('You are the planner of Switchyard');
  });

  it('reports the effective model, agent settings over configuration', async () => {
    await expect(bus.call(Rpc.planner.checkModel, {})).resolves.toEqual({
      provider: 'openai',
      model: 'fake',
    });
    await expect(bus.call(Rpc.planner.checkModel, { model: { model: 'bigger' } })).resolves.toEqual({
      provider: 'openai',
      model: 'bigger',
    });
  });

  it('answers unavailable when the model fails with HTTP 500', async () => {
    // The client retries a 500 twice; the fake answers 500 to anything not scripted.
    fake.enqueue({ errorStatus: 500 });
    const before = fake.requests.length;
    const failure = draft({ runId: randomUUID() });
    await expect(failure).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^the language model failed: .*500/),
    });
    expect(fake.requests.length).toBeGreaterThan(before);
  });
});

describe('planner without a usable model', () => {
  let db: TestDatabase;
  const services: RunningService[] = [];
  const buses: Bus[] = [];

  const start = async (env: Record<string, string>) => {
    const prefix = uniquePrefix('pln');
    services.push(
      await bootstrap(testConfig('planner', { DATABASE_URL: db.url, NATS_SUBJECT_PREFIX: prefix, ...env })),
    );
    const bus = await connectBus(prefix, 'planner-test');
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
  });

  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await Promise.all(services.map((s) => s.close()));
    await db?.drop();
  });

  it('refuses both RPCs with model_not_configured when no model is configured', async () => {
    const bus = await start({});
    const runId = randomUUID();
    const tokens = await watchTokens(bus, runId);
    const refused = { code: 'model_not_configured', message: expect.stringContaining('LLM_PROVIDER') };
    await expect(bus.call(Rpc.planner.checkModel, {})).rejects.toMatchObject(refused);
    await expect(bus.call(Rpc.planner.draft, { runId, goal: 'anything', tools })).rejects.toMatchObject(
      refused,
    );
    // the agent's settings cannot stand in for the missing configuration of an openai endpoint
    await expect(
      bus.call(Rpc.planner.checkModel, { model: { provider: 'openai', model: 'x' } }),
    ).rejects.toMatchObject({
      code: 'model_not_configured',
      message: expect.stringContaining('LLM_BASE_URL'),
    });
    expect(tokens.received).toEqual([]);
    tokens.stop();
  });

  it('answers unavailable when the model endpoint refuses connections', async () => {
    const port = await freePort();
    const bus = await start({
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: `http://127.0.0.1:${port}/v1`,
    });
    await expect(bus.call(Rpc.planner.checkModel, {})).resolves.toEqual({
      provider: 'openai',
      model: 'fake',
    });
    await expect(
      bus.call(Rpc.planner.draft, { runId: randomUUID(), goal: 'anything', tools }),
    ).rejects.toMatchObject({
      code: 'unavailable',
      message: expect.stringMatching(/^the language model failed: .*ECONNREFUSED/),
    });
  });
});
