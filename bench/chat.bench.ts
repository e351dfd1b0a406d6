import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { Rpc } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createScratchDatabase } from '@switchyard/server-db';
import { api, FakeLlmServer, sseBlocks, Stack } from '@switchyard/testing';

/*
 * npm run bench -- chat
 * 1. Per tool call: a chat turn whose model asks for N `wait {ms:0}` calls at once (then answers),
 *    against a turn with one call; the difference over N − 1 is what one more call costs the chat
 *    loop (event rows, tool-call rows, the permission gate, the registry call). Compared with the
 *    same `registry.tools.invoke` made directly over the bus from this process. Goal: ≤ 2 ms added.
 * 2. First token: from the fake model writing the first piece of text of an answer to the `token`
 *    frame reaching this process over SSE (executor → Postgres → NATS → gateway → HTTP). Same
 *    process, same clock. Goal: ≤ 5 ms.
 * The fake model answers at once; gateway, executor and tool-registry run as processes.
 */

const NATS_URL = 'nats://127.0.0.1:4222';
const PG_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const ROUNDS = 4;
const CALLS = 40;
const FIRST_TOKENS = 30;

const r3 = (x: number) => Math.round(x * 1000) / 1000;
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
};
const p99 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(0.99 * s.length))] ?? NaN;
};

export async function runChatBench(outDir: string): Promise<Record<string, unknown>> {
  const loadAtStart = loadavg();
  const db = await createScratchDatabase(PG_SERVER, { label: 'bench_chat' });
  const llm = await FakeLlmServer.start();
  const prefix = `benchchat${process.pid}.`;
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const stack = await Stack.start(
    {
      DATABASE_URL: db.url,
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      WORKSPACE_DIR: join(__dirname, '..', '..', 'tmp', 'bench-workspace'),
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
      CHAT_MAX_TOOL_CALLS: '10000',
    },
    ['gateway', 'executor', 'tool-registry'],
  );
  const bus = await Bus.connect({
    servers: [NATS_URL],
    name: 'bench-chat',
    subjectPrefix: prefix,
    defaultTimeoutMs: 20_000,
  });
  try {
    const base = stack.gatewayUrl;
    const me = await api(base, 'GET', '/api/me', { token: admin });
    const ctx = {
      correlationId: 'bench-chat',
      ownerId: (me.json['owner'] as { id: string }).id,
      role: 'admin' as const,
    };
    const session = (
      await api(base, 'POST', '/api/chat/sessions', { token: admin, body: { permissionMode: 'full-access' } })
    ).json['id'] as string;

    /** One turn to its end; calls `onFrame` with each frame's type as it arrives. */
    const turn = async (onFrame: (type: string) => void = () => undefined): Promise<number> => {
      const t0 = performance.now();
      const res = await fetch(`${base}/api/chat/sessions/${session}/messages`, {
        method: 'POST',
        headers: { 'x-switchyard-token': admin, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'go' }),
      });
      if (res.status !== 200) throw new Error(`send answered ${res.status}: ${await res.text()}`);
      let last = '';
      for await (const b of sseBlocks(res.body as ReadableStream<Uint8Array>)) {
        if (!b.event) continue;
        last = b.event;
        onFrame(b.event);
      }
      if (last !== 'message_complete') throw new Error(`the turn ended with ${last}`);
      return performance.now() - t0;
    };
    const withCalls = (n: number) =>
      llm.enqueue(
        {
          toolCalls: Array.from({ length: n }, (_, i) => ({ name: 'wait', arguments: { ms: 0, value: i } })),
        },
        { content: 'done' },
      );
    const direct = async (n: number): Promise<number> => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++)
        await bus.call(Rpc.registry.invoke, { tool: 'wait', arguments: { ms: 0, value: i } }, { ctx });
      return performance.now() - t0;
    };

    // Warm-up: connections, the gate's cache, JIT.
    for (let i = 0; i < 2; i++) {
      withCalls(CALLS);
      await turn();
      await direct(CALLS);
    }
    const chatPerCall: number[] = [];
    const directPerCall: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      withCalls(1);
      const one = await turn();
      withCalls(CALLS);
      const many = await turn();
      chatPerCall.push((many - one) / (CALLS - 1));
      directPerCall.push((await direct(CALLS)) / CALLS);
    }
    const chatMs = median(chatPerCall);
    const directMs = median(directPerCall);

    const firstToken: number[] = [];
    for (let i = 0; i < FIRST_TOKENS + 3; i++) {
      llm.enqueue({ content: 'Hello there, this is the answer.', chunkSize: 4 });
      const sent = llm.firstTextAt.length;
      let at: number | undefined;
      await turn((type) => {
        if (type === 'token' && at === undefined) at = performance.now();
      });
      const wrote = llm.firstTextAt[sent];
      if (i >= 3 && at !== undefined && wrote !== undefined) firstToken.push(at - wrote);
    }

    const result = {
      benchmark: 'chat',
      at: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        node: process.version,
        loadAvgAtStart: loadAtStart.map(r3),
        loadAvgAtEnd: loadavg().map(r3),
      },
      method: {
        rounds: ROUNDS,
        callsPerTurn: CALLS,
        statistic: 'median of rounds',
        perToolCall:
          `(turn with ${CALLS} wait {ms:0} calls − turn with 1) / ${CALLS - 1}, through POST /api/chat/sessions/{id}/messages → SSE end; ` +
          `direct: ${CALLS} sequential registry.tools.invoke from this process over NATS`,
        firstToken: `${FIRST_TOKENS} turns: fake model writes its first text chunk → the first token frame read by this process`,
        path: 'gateway, executor, tool-registry as processes (NODE_ENV=production); the fake model answers at once',
      },
      perToolCall: {
        chatMs: r3(chatMs),
        directMs: r3(directMs),
        addedMs: r3(chatMs - directMs),
        ratio: r3(chatMs / directMs),
        goalAddedMs: 2,
        goalMet: chatMs - directMs <= 2,
      },
      firstToken: {
        p50Ms: r3(median(firstToken)),
        p99Ms: r3(p99(firstToken)),
        goalMs: 5,
        goalMet: median(firstToken) <= 5,
      },
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'chat.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await bus.close();
    await stack.stop();
    await llm.close();
    await db.drop();
  }
}
