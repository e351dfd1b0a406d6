import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { FINISHED_RUN_STATUSES, Memory, MemoryPage, RunDetail, type RunEvent } from '@switchyard/contracts';
import {
  api,
  createTestDatabase,
  FakeLlmServer,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

const MEMORY_TOOLS = ['memory_forget', 'memory_list', 'memory_remember', 'memory_search'];
const noReview = { planApproval: false, permissionMode: 'full-access' };
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Memory end to end (experimental, off by default): the setting decides whether the memory tools
 * are in an owner's catalog; remember and search run as steps of ordinary runs; facts rank by
 * keyword overlap under a 7-day half-life; a goal run injects the relevant ones into the planning
 * prompt and records them as `memory_injected`; one owner never reaches another's memories.
 */
describe('memory end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let llm: FakeLlmServer;
  let pg: Client;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const memoryTools = async (token: string): Promise<Array<{ name: string; effect: string }>> => {
    const res = await call('GET', '/api/agent/tools', token);
    expect(res.status).toBe(200);
    return (res.json as unknown as Array<{ name: string; effect: string }>)
      .filter((t) => t.name.startsWith('memory_'))
      .sort((a, b) => a.name.localeCompare(b.name));
  };
  const setMemory = async (token: string, enabled: boolean) => {
    const res = await call('PUT', '/api/settings/memory', token, { enabled });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ enabled });
  };
  /** Starts a run and waits for its end; answers its detail. */
  const run = async (body: Record<string, unknown>, token: string): Promise<RunDetail> => {
    const res = await call('POST', '/api/agent/run', token, body);
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    const runId = res.json['runId'] as string;
    return waitFor(async () => {
      const d = RunDetail.parse((await call('GET', `/api/agent/runs/${runId}`, token)).json);
      return FINISHED_RUN_STATUSES.has(d.status) && d;
    }, 60_000);
  };
  /** One tool call as a run of its own; answers the step's result, or its failure event. */
  const tool = async (token: string, name: string, args: Record<string, unknown>) => {
    const d = await run(
      { workflow: { steps: [{ id: 's', tool: name, arguments: args }] }, config: noReview },
      token,
    );
    const done = d.events.find((e) => e.type === 'step_complete');
    const failed = d.events.find((e) => e.type === 'step_failed');
    return {
      status: d.status,
      result: done?.type === 'step_complete' ? done.data.result : undefined,
      failed,
    };
  };
  const remember = async (token: string, text: string): Promise<Memory> => {
    const r = await tool(token, 'memory_remember', { text });
    expect(r.status).toBe('completed');
    return Memory.parse(r.result);
  };
  const searchIds = async (token: string, query: string): Promise<string[]> => {
    const r = await tool(token, 'memory_search', { query });
    expect(r.status).toBe('completed');
    return (r.result as { items: Memory[] }).items.map((m) => m.id);
  };
  const backdate = (id: string, days: number) =>
    pg.query('UPDATE memory SET created_at = $2 WHERE id = $1', [id, new Date(Date.now() - days * DAY_MS)]);
  const eventTypes = (events: readonly RunEvent[]) => events.map((e) => e.type);

  beforeAll(async () => {
    db = await createTestDatabase();
    llm = await FakeLlmServer.start();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    stack = await Stack.start({
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('memory'),
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
    const token = async (owner: string) => {
      const res = await call('POST', '/api/tokens', admin, { owner, role: 'user' });
      expect(res.status).toBe(201);
      return res.json['token'] as string;
    };
    alice = await token('alice');
    bob = await token('bob');
  });

  afterAll(async () => {
    await pg?.end();
    await stack?.stop();
    await llm?.close();
    await db?.drop();
  });

  it('is off by default: no memory tools in the catalog, and a memory tool cannot be run', async () => {
    expect((await call('GET', '/api/settings/memory', alice)).json).toEqual({ enabled: false });
    expect(await memoryTools(alice)).toEqual([]);
    const refused = await call('POST', '/api/agent/run', alice, {
      workflow: { steps: [{ id: 's', tool: 'memory_remember', arguments: { text: 'x' } }] },
      config: noReview,
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('memory_remember');
  });

  it('turned on, the four tools appear at once with their effects (only for that owner)', async () => {
    // The off answer above is cached by the registry; the change event replaces it.
    await setMemory(alice, true);
    const tools = await waitFor(async () => {
      const t = await memoryTools(alice);
      return t.length > 0 && t;
    }, 60_000);
    expect(tools.map((t) => [t.name, t.effect])).toEqual([
      ['memory_forget', 'write'],
      ['memory_list', 'read'],
      ['memory_remember', 'write'],
      ['memory_search', 'read'],
    ]);
    expect(tools.map((t) => t.name)).toEqual(MEMORY_TOOLS);
    expect(await memoryTools(bob)).toEqual([]);
  });

  it('remembers and searches through runs: a fresh fact beats an older one with more overlap, as the half-life says', async () => {
    const fresh = await remember(alice, 'Anvil is the build server');
    const older = await remember(alice, 'The nightly build server reboots at 3am');
    await remember(alice, 'I drink my coffee black');
    // "nightly build server": fresh shares 2 words → 2; older shares 3 but is 8 days old → 3 × 0.5^(8/7) ≈ 1.36.
    await backdate(older.id, 8);
    expect(await searchIds(alice, 'nightly build server')).toEqual([fresh.id, older.id]);
    // 3 days old → 3 × 0.5^(3/7) ≈ 2.22 > 2: enough more overlap wins.
    await backdate(older.id, 3);
    expect(await searchIds(alice, 'nightly build server')).toEqual([older.id, fresh.id]);
    // 咖啡 (coffee) in Chinese is found by its characters.
    const coffee = await remember(alice, '我喜欢喝黑咖啡');
    expect(await searchIds(alice, '推荐一款咖啡')).toEqual([coffee.id]);

    const listed = await tool(alice, 'memory_list', {});
    expect(MemoryPage.parse(listed.result).items.map((m) => m.text)).toContain('Anvil is the build server');
    const page = await call('GET', '/api/memories?limit=2&q=build', alice);
    expect(page.status).toBe(200);
    const first = MemoryPage.parse(page.json);
    expect(first.total).toBe(2);
    expect(first.items).toHaveLength(2);
    expect(first.nextCursor).toBeNull();
  });

  it('refuses a fact over 2,000 characters with a clear error before anything runs', async () => {
    const r = await call('POST', '/api/agent/run', alice, {
      workflow: { steps: [{ id: 's', tool: 'memory_remember', arguments: { text: 'x'.repeat(2_001) } }] },
      config: noReview,
    });
    expect(r.status).toBe(400);
    expect(r.json['code']).toBe('validation_failed');
    expect(r.text).toMatch(/text/);
    expect(r.text).toMatch(/2000/);
  });

  it("never lets one owner see or delete another's memories, through routes or tools", async () => {
    await setMemory(bob, true);
    await waitFor(async () => (await memoryTools(bob)).length === 4, 60_000);
    const bobs = await remember(bob, 'Bob keeps the nightly build server password in the vault');
    const alices = MemoryPage.parse((await call('GET', '/api/memories?limit=200', alice)).json).items;
    expect(alices.map((m) => m.id)).not.toContain(bobs.id);
    const bobList = MemoryPage.parse((await call('GET', '/api/memories?limit=200', bob)).json).items;
    expect(bobList.map((m) => m.id)).toEqual([bobs.id]);
    expect(await searchIds(bob, 'anvil build server coffee')).toEqual([bobs.id]);

    const bobTool = await tool(bob, 'memory_list', {});
    expect(MemoryPage.parse(bobTool.result).items.map((m) => m.id)).toEqual([bobs.id]);

    const target = alices[0] as Memory;
    // Another owner's memory answers exactly as a missing one.
    for (const id of [target.id, randomUUID()]) {
      const del = await call('DELETE', `/api/memories/${id}`, bob);
      expect([del.status, del.json['code']]).toEqual([404, 'not_found']);
    }
    const forget = await tool(bob, 'memory_forget', { id: target.id });
    expect(forget.status).toBe('failed');
    expect(
      forget.failed?.type === 'step_failed' && !forget.failed.data.cancelled && forget.failed.data.code,
    ).toBe('not_found');
    expect((await call('DELETE', '/api/memories/not-a-uuid', bob)).status).toBe(400);
    // Still there for Alice.
    const after = MemoryPage.parse((await call('GET', '/api/memories?limit=200', alice)).json).items;
    expect(after.map((m) => m.id)).toContain(target.id);
    // Alice's own delete works.
    const mine = await call('DELETE', `/api/memories/${target.id}`, alice);
    expect(mine.status).toBe(200);
    expect(Memory.parse(mine.json).id).toBe(target.id);
    expect((await call('DELETE', `/api/memories/${target.id}`, alice)).status).toBe(404);
  });

  it("injects the owner's relevant memories into the planning prompt and records them as memory_injected before plan_ready", async () => {
    const plan = { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: 'ok' } }] };
    llm.enqueue({ content: JSON.stringify(plan) });
    const before = llm.requests.length;
    const d = await run({ goal: 'restart the nightly build server', config: noReview }, alice);
    expect(d.status).toBe('completed');
    const types = eventTypes(d.events);
    expect(types.indexOf('memory_injected')).toBeGreaterThan(-1);
    expect(types.indexOf('memory_injected')).toBeLessThan(types.indexOf('plan_ready'));
    const injected = d.events.find((e) => e.type === 'memory_injected');
    const memories = injected?.type === 'memory_injected' ? injected.data.memories : [];
    expect(memories.length).toBeGreaterThan(0);
    expect(memories.length).toBeLessThanOrEqual(5);
    expect(memories.every((m) => m.score > 0)).toBe(true);
    const texts = memories.map((m) => m.text);
    expect(texts).toContain('Anvil is the build server');
    expect(texts).not.toContain('I drink my coffee black');

    expect(llm.requests.length).toBe(before + 1);
    const prompt = JSON.stringify(llm.requests[before]?.messages);
    expect(prompt).toContain('Things the user asked you to remember');
    expect(prompt).toContain('Anvil is the build server');
    // Bob's fact shares the words but is Bob's.
    expect(prompt).not.toContain('password in the vault');
  });

  it('turned off, the tools leave the catalog at once and nothing is injected; the memories stay listed', async () => {
    await setMemory(alice, false);
    await waitFor(async () => (await memoryTools(alice)).length === 0, 60_000);
    expect(await memoryTools(bob)).toHaveLength(4);

    const plan = { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 0, value: 'ok' } }] };
    llm.enqueue({ content: JSON.stringify(plan) });
    const before = llm.requests.length;
    const d = await run({ goal: 'restart the nightly build server', config: noReview }, alice);
    expect(d.status).toBe('completed');
    expect(eventTypes(d.events)).not.toContain('memory_injected');
    expect(JSON.stringify(llm.requests[before]?.messages)).not.toContain(
      'Things the user asked you to remember',
    );

    const kept = MemoryPage.parse((await call('GET', '/api/memories', alice)).json);
    expect(kept.items.map((m) => m.text)).toContain('Anvil is the build server');
  });
});
