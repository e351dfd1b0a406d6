import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Rpc } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { createScratchDatabase } from '@switchyard/server-db';
import { buildFixturePlugin } from '@switchyard/testing';

/*
 * npm run bench -- tools
 * 1. A built-in tool (`wait` with ms=0) invoked through registry.tools.invoke (bus → NATS → the
 *    tool-registry process → validation, deadline, output cap) vs the same work in process.
 * 2. An MCP tool (server-everything `echo`, stdio) invoked through the registry vs a direct SDK
 *    client talking to its own server-everything child.
 * 3. execute_command `echo hi` through the registry, inside the command sandbox (bubblewrap) vs the
 *    same call to a second registry with COMMAND_SANDBOX=none (an admin's unsandboxed run).
 * 4. A plugin tool (the fixture plugin's `fixture_echo`, stdio MCP) through the registry inside the
 *    plugin sandbox vs the second registry with PLUGIN_SANDBOX=none, and a direct SDK client to the
 *    same server file: per-call p50 once warm, and the cold start (launch + handshake + first call).
 * Sequential calls, alternating rounds; p50/p99 and the added milliseconds.
 */

const NATS_URL = 'nats://127.0.0.1:4222';
const ROUNDS = 6;
const PER_ROUND = 500;
const WARMUP = 300;
const ROOT = join(__dirname, '..', '..');
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

type Call = () => Promise<unknown>;

async function sample(call: Call, n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await call();
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

function stats(xs: number[]): { p50Ms: number; p99Ms: number } {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) =>
    Math.round((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN) * 1000) / 1000;
  return { p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function compare(
  viaRegistry: Call,
  direct: Call,
  opts: { perRound: number; warmup: number; goalAddedMs: number } = {
    perRound: PER_ROUND,
    warmup: WARMUP,
    goalAddedMs: 0.3,
  },
): Promise<Record<string, unknown>> {
  const sink: number[] = [];
  await sample(viaRegistry, opts.warmup, sink);
  await sample(direct, opts.warmup, sink);
  const a: number[] = [];
  const b: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    if (r % 2 === 0) {
      await sample(viaRegistry, opts.perRound, a);
      await sample(direct, opts.perRound, b);
    } else {
      await sample(direct, opts.perRound, b);
      await sample(viaRegistry, opts.perRound, a);
    }
  }
  const registry = stats(a);
  const raw = stats(b);
  const added = Math.round((registry.p50Ms - raw.p50Ms) * 1000) / 1000;
  return {
    viaRegistry: registry,
    direct: raw,
    p50AddedMs: added,
    p50Ratio: Math.round((registry.p50Ms / raw.p50Ms) * 100) / 100,
    goalMet: added <= opts.goalAddedMs,
  };
}

const COLD_STARTS = 7;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.floor(s.length / 2)] ?? NaN) * 10) / 10;
}

async function timed(call: Call): Promise<number> {
  const t0 = process.hrtime.bigint();
  await call();
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

/**
 * The fixture plugin installed once (both registries share the database and the plugins folder),
 * enabled on each; warm calls compared like the others; cold starts timed as the first call after
 * a settings change stopped the server (the call launches it: sandbox, Node, MCP handshake).
 */
async function pluginBench(
  sandboxed: Bus,
  plain: Bus,
  ctx: { correlationId: string; ownerId: string; role: 'admin' },
): Promise<Record<string, unknown>> {
  const dir = join(ROOT, 'tmp', 'bench-plugin');
  await buildFixturePlugin(dir, join(ROOT, 'tmp', 'bench-plugin-cache'));
  await sandboxed.call(Rpc.registry.pluginInstall, { path: dir, upload: false }, { ctx, timeoutMs: 60_000 });
  const posture = await sandboxed.call(Rpc.registry.pluginPosture, {}, { ctx });
  if (posture.posture !== 'sandboxed')
    throw new Error(`the plugin sandbox is not available here: ${posture.reason ?? ''}`);
  for (const b of [sandboxed, plain])
    await b.call(Rpc.registry.pluginEnable, { id: 'fixture-plugin' }, { ctx, timeoutMs: 30_000 });
  const echo = { tool: 'fixture_echo', arguments: { text: 'bench' } };
  const warm = await compare(
    () => sandboxed.call(Rpc.registry.invoke, echo, { ctx }),
    () => plain.call(Rpc.registry.invoke, echo, { ctx }),
    { perRound: 200, warmup: 100, goalAddedMs: 1 },
  );

  const directClient = async () => {
    const client = new Client({ name: 'bench-plugin-direct', version: '0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(dir, 'server.cjs')],
        env: getDefaultEnvironment(),
        stderr: 'ignore',
      }),
    );
    return client;
  };
  const direct = await directClient();
  const directWarm: number[] = [];
  try {
    await sample(() => direct.callTool({ name: 'fixture_echo', arguments: { text: 'bench' } }), 100, []);
    await sample(
      () => direct.callTool({ name: 'fixture_echo', arguments: { text: 'bench' } }),
      600,
      directWarm,
    );
  } finally {
    await direct.close();
  }

  const cold = { sandboxed: [] as number[], unsandboxed: [] as number[], direct: [] as number[] };
  const restart = (b: Bus) =>
    b.call(Rpc.registry.pluginSettings, { id: 'fixture-plugin', body: { values: {} } }, { ctx });
  for (let i = 0; i < COLD_STARTS; i++) {
    await restart(sandboxed);
    cold.sandboxed.push(await timed(() => sandboxed.call(Rpc.registry.invoke, echo, { ctx })));
    await restart(plain);
    cold.unsandboxed.push(await timed(() => plain.call(Rpc.registry.invoke, echo, { ctx })));
    let client: Client | undefined;
    cold.direct.push(
      await timed(async () => {
        client = await directClient();
        await client.callTool({ name: 'fixture_echo', arguments: { text: 'bench' } });
      }),
    );
    await client?.close();
  }
  const coldMs = {
    sandboxed: median(cold.sandboxed),
    unsandboxed: median(cold.unsandboxed),
    direct: median(cold.direct),
  };
  const coldAdded = Math.round((coldMs.sandboxed - coldMs.unsandboxed) * 10) / 10;
  await sandboxed.call(Rpc.registry.pluginDelete, { id: 'fixture-plugin' }, { ctx });
  return {
    warm: { ...warm, directMcp: stats(directWarm), goalAddedMs: 1 },
    coldStart: {
      samples: COLD_STARTS,
      p50Ms: coldMs,
      sandboxAddedMs: coldAdded,
      goalAddedMs: 150,
      goalMet: coldAdded <= 150,
    },
  };
}

/** A tool-registry process of its own (own subject prefix), and a bus to it, once it answers. */
async function startRegistry(
  dbUrl: string,
  prefix: string,
  extraEnv: Record<string, string> = {},
): Promise<{ bus: Bus; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist/apps/tool-registry/src/main.js')], {
    env: {
      PATH: process.env['PATH'] ?? '',
      DATABASE_URL: dbUrl,
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      PORT: '0',
      LOG_LEVEL: 'warn',
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
      WORKSPACE_DIR: join(ROOT, 'tmp', 'bench-workspace'),
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const bus = await Bus.connect({
    servers: [NATS_URL],
    name: 'bench-tools',
    subjectPrefix: prefix,
    defaultTimeoutMs: 20_000,
  });
  const stop = async () => {
    await bus.close();
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  for (let i = 0; ; i++) {
    const up = await bus.call(Rpc.health['tool-registry'], {}, { timeoutMs: 500 }).catch(() => undefined);
    if (up) return { bus, stop };
    if (i > 100) {
      await stop();
      throw new Error('tool-registry did not start');
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function runToolsBench(outDir: string): Promise<Record<string, unknown>> {
  const db = await createScratchDatabase('postgresql://postgres@127.0.0.1:5432/postgres', { label: 'bench' });
  const prefix = `benchtools${process.pid}.`;
  const main = await startRegistry(db.url, prefix);
  const bus = main.bus;
  let unsandboxed: Awaited<ReturnType<typeof startRegistry>> | undefined;
  const direct = new Client({ name: 'bench-direct', version: '0' });
  try {
    const ctx = {
      correlationId: 'bench',
      ownerId: '00000000-0000-4000-8000-000000000000',
      role: 'admin' as const,
    };

    // 1. built-in
    // The in-process side does what WaitTool.run does for ms=0 (apps cannot be imported from here):
    // yield one turn (setImmediate), return the value as a json block.
    const waitInProcess = async (value: unknown) => {
      await new Promise<void>((resolve) => setImmediate(resolve));
      return { content: [{ type: 'json', json: value }], isError: false, truncated: false };
    };
    const builtin = await compare(
      () => bus.call(Rpc.registry.invoke, { tool: 'wait', arguments: { ms: 0, value: 1 } }, { ctx }),
      () => waitInProcess(1),
    );

    // 2. MCP stdio
    const record = await bus.call(
      Rpc.registry.create,
      {
        name: 'everything',
        type: 'LOCAL',
        configJson: JSON.stringify({ command: process.execPath, args: [EVERYTHING, 'stdio'] }),
      },
      { ctx },
    );
    // Only tested records lend their tools to the catalog.
    const tested = await bus.call(Rpc.registry.test, { id: record.id }, { ctx, timeoutMs: 30_000 });
    if (!tested.success) throw new Error(`test of server-everything failed: ${tested.message}`);
    await direct.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [EVERYTHING, 'stdio'],
        env: getDefaultEnvironment(),
        stderr: 'ignore',
      }),
    );
    const mcp = await compare(
      () =>
        bus.call(
          Rpc.registry.invoke,
          { tool: 'mcp__everything__echo', arguments: { message: 'bench' } },
          { ctx },
        ),
      () => direct.callTool({ name: 'echo', arguments: { message: 'bench' } }),
    );

    // 3. execute_command, sandboxed vs not (an admin on a registry whose sandbox is switched off)
    unsandboxed = await startRegistry(db.url, `${prefix}nosbx.`, {
      COMMAND_SANDBOX: 'none',
      PLUGIN_SANDBOX: 'none',
    });
    const plain = unsandboxed.bus;
    const echo = { tool: 'execute_command', arguments: { command: 'echo hi' } };
    const probe = await bus.call(Rpc.registry.invoke, echo, { ctx });
    if (!probe.sandboxed) throw new Error('the command sandbox is not available here (install bubblewrap)');
    const command = await compare(
      () => bus.call(Rpc.registry.invoke, echo, { ctx }),
      () => plain.call(Rpc.registry.invoke, echo, { ctx }),
      { perRound: 40, warmup: 20, goalAddedMs: 15 },
    );

    // 4. a plugin tool, sandboxed vs not, and the same server called directly
    const plugin = await pluginBench(bus, plain, ctx);

    const result = {
      benchmark: 'tools',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version },
      method: { rounds: ROUNDS, callsPerRound: PER_ROUND, warmup: WARMUP, sequential: true },
      builtin: { tool: 'wait {ms:0}', ...builtin },
      mcpStdio: { tool: 'server-everything echo', ...mcp },
      commandSandbox: {
        tool: 'execute_command "echo hi"',
        note: 'viaRegistry = sandboxed (bubblewrap); direct = the same registry path unsandboxed',
        ...command,
      },
      plugin: {
        tool: 'fixture plugin fixture_echo (stdio MCP server in one bundled file)',
        note: 'viaRegistry = plugin sandbox (bubblewrap); direct = the same registry path with PLUGIN_SANDBOX=none',
        ...plugin,
      },
      goal:
        'registry adds at most 0.3 ms p50 over the direct call; the sandbox adds at most 15 ms per command; ' +
        'the plugin sandbox adds at most 1 ms per call once up and at most 150 ms to a cold start',
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'tools.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await direct.close().catch(() => undefined);
    await unsandboxed?.stop();
    await main.stop();
    await db.drop();
  }
}
