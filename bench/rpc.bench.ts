import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { connect, JSONCodec } from 'nats';
import { Rpc } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';

/*
 * npm run bench -- rpc
 * Service RPC through our bus wrapper and a Nest handler vs raw nats.js request() against the same
 * NATS, in the same run, alternating rounds so machine noise hits both alike. Latency: one request
 * at a time. Throughput: `CONCURRENCY` requests kept in flight.
 */

const NATS_URL = 'nats://127.0.0.1:4222';
const ROUNDS = 8;
const LATENCY_PER_ROUND = 1_000;
const THROUGHPUT_PER_ROUND = 10_000;
const CONCURRENCY = 64;
const WARMUP = 1_000;
const PAYLOAD = 'x'.repeat(256);

type Call = (n: number) => Promise<unknown>;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function latencies(call: Call, count: number, into: number[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    await call(i);
    into.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
}

async function throughput(call: Call, total: number): Promise<number> {
  let next = 0;
  const t0 = process.hrtime.bigint();
  const worker = async () => {
    while (next < total) await call(next++);
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return total / (Number(process.hrtime.bigint() - t0) / 1e9);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

export async function runRpcBench(outDir: string): Promise<Record<string, unknown>> {
  const prefix = `bench${process.pid}.`;
  const server = spawn(process.execPath, [join(__dirname, 'rpc-server.js'), NATS_URL, prefix], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
    server.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
  });

  const bus = await Bus.connect({
    servers: [NATS_URL],
    name: 'bench-bus',
    subjectPrefix: prefix,
    defaultTimeoutMs: 10_000,
  });
  // Same connection options as Bus uses, so the comparison is of the layers, not of the settings.
  const raw = await connect({ servers: NATS_URL, name: 'bench-raw-client', noAsyncTraces: true });
  const codec = JSONCodec<unknown>();
  const ctx = {
    correlationId: 'bench',
    ownerId: '00000000-0000-4000-8000-000000000000',
    role: 'user' as const,
  };
  const ours: Call = (n) => bus.call(Rpc.bench.echo, { n, payload: PAYLOAD }, { ctx });
  const rawCall: Call = async (n) =>
    codec.decode(
      (await raw.request(`${prefix}raw.echo`, codec.encode({ n, payload: PAYLOAD }), { timeout: 10_000 }))
        .data,
    );

  try {
    const sink: number[] = [];
    await latencies(ours, WARMUP, sink);
    await latencies(rawCall, WARMUP, sink);
    await throughput(ours, WARMUP * 4);
    await throughput(rawCall, WARMUP * 4);

    const lat = { ours: [] as number[], raw: [] as number[] };
    const tput = { ours: [] as number[], raw: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const order: Array<['ours' | 'raw', Call]> =
        r % 2 === 0
          ? [
              ['ours', ours],
              ['raw', rawCall],
            ]
          : [
              ['raw', rawCall],
              ['ours', ours],
            ];
      for (const [name, call] of order) await latencies(call, LATENCY_PER_ROUND, lat[name]);
      for (const [name, call] of order) tput[name].push(await throughput(call, THROUGHPUT_PER_ROUND));
    }
    const summary = (name: 'ours' | 'raw') => {
      const sorted = [...lat[name]].sort((a, b) => a - b);
      return {
        p50Ms: round3(percentile(sorted, 50)),
        p99Ms: round3(percentile(sorted, 99)),
        meanMs: round3(sorted.reduce((a, b) => a + b, 0) / sorted.length),
        throughputPerSec: Math.round(median(tput[name])),
        throughputRoundsPerSec: tput[name].map(Math.round),
      };
    };
    const o = summary('ours');
    const w = summary('raw');
    const result = {
      benchmark: 'rpc',
      at: new Date().toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, node: process.version },
      method: {
        description:
          'Bus.call → NATS → SwitchyardNatsServer → Nest handler (interceptor, filter, zod pipe) vs raw nats.js request() → raw subscription; both JSON, same NATS, responders in one child process, rounds alternate',
        rounds: ROUNDS,
        latencyRequestsPerRound: LATENCY_PER_ROUND,
        throughputRequestsPerRound: THROUGHPUT_PER_ROUND,
        concurrency: CONCURRENCY,
        payloadBytes: PAYLOAD.length,
      },
      ours: o,
      raw: w,
      ratios: {
        p50AddedMs: round3(o.p50Ms - w.p50Ms),
        p99AddedMs: round3(o.p99Ms - w.p99Ms),
        p50Ratio: round3(o.p50Ms / w.p50Ms),
        throughputRatio: round3(o.throughputPerSec / w.throughputPerSec),
      },
      goals: { p50AddedMsAtMost: 0.1, throughputRatioAtLeast: 0.7 },
      met: {
        p50: o.p50Ms - w.p50Ms <= 0.1,
        throughput: o.throughputPerSec / w.throughputPerSec >= 0.7,
      },
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'rpc.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await bus.close();
    await raw.drain();
    server.kill('SIGTERM');
  }
}
