import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { SERVICE_NAMES } from '@switchyard/contracts';
import { createScratchDatabase } from '@switchyard/server-db';
import { api, openStream, replicaByInstance, Stack, waitFor, type SseStream } from '@switchyard/testing';
import { Client } from 'pg';
import { CpuTally, sumOf, ticksByCommand, warmUntilSettled } from './cpu';

/*
 * npm run bench -- scale [throughput] [idle] [kill]   (no part: all three, into scale.json)
 *   - sequential step latency (a 20-step chain, ms per step) and the wall time of 1,000 one-step runs
 *     started at once, with one and with two replicas of every service (same machine, same run),
 *     each stack warmed up first by rounds of the parallel pass until its CPU per run settles;
 *   - gateway memory per idle SSE stream with 10,000 streams open on one gateway (goal ≤ 12 KiB);
 *   - time from an executor replica's SIGKILL to its run's `interrupted` frame, against the lease
 *     (RUN_LEASE_MS) + 1 s, with the default lease and sweep.
 */
const PG_SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
const CHAIN = 20;
const PARALLEL = 1_000;
const IDLE_STREAMS = 10_000;
const ROUNDS = 3;
/** Each kill waits out a lease: two are enough for a median. */
const KILL_ROUNDS = 2;
/** The sequential chain is cheap: more rounds, so one scheduling hiccup does not decide the median. */
const SEQUENTIAL_ROUNDS = 7;
/**
 * The throughput phases let all PARALLEL runs be active at once (the defaults, 32 per owner and 512
 * per deployment, would answer most of them 429 and the wall time would measure Retry-After sleeps).
 */
const THROUGHPUT_LIMITS = {
  RUN_OWNER_ACTIVE_LIMIT: String(PARALLEL),
  RUN_DEPLOYMENT_ACTIVE_LIMIT: String(PARALLEL),
};
const LEASE_MS = 15_000;
const SWEEP_MS = 1_000; // the defaults (RUN_LEASE_MS, RUN_SWEEP_MS)

/** The parts `npm run bench -- scale <part…>` can run alone. */
export const SCALE_PARTS = ['throughput', 'idle', 'kill'] as const;
const SETTLE_SAMPLES = 5;

const r1 = (n: number) => Math.round(n * 10) / 10;
const ratio = (a = 0, b = 0) => (b ? Math.round((a / b) * 100) / 100 : null);
/** CPU ms per run of the five services (every replica), without the shared servers and the client. */
const servicesCpu = (perRun: Record<string, number>) => sumOf(perRun, SERVICE_NAMES);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const rssKiB = (pid: number) =>
  Number(
    execFileSync('ps', ['-o', 'rss=', '-p', String(pid)])
      .toString()
      .trim(),
  );
const wait = (id: string, ms: number, dependsOn: string[] = []) => ({
  id,
  tool: 'wait',
  arguments: { ms, value: id },
  dependsOn,
});
const chain = (n: number) => ({
  steps: Array.from({ length: n }, (_, i) => wait(`s${i}`, 0, i ? [`s${i - 1}`] : [])),
});

async function withStack<T>(
  replicas: number,
  env: Record<string, string>,
  body: (stack: Stack, token: string) => Promise<T>,
): Promise<T> {
  const db = await createScratchDatabase(PG_SERVER, { label: 'bench_scale' });
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const stack = await Stack.start(
    {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: `benchscale${process.pid}r${replicas}.`,
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
      ...env,
    },
    SERVICE_NAMES,
    replicas,
  );
  try {
    return await body(stack, admin);
  } finally {
    await stack.stop();
    await db.drop();
  }
}

/**
 * At most `n` connection set-ups at once: a thousand simultaneous connects overflow the listen
 * backlog (the client sees "fetch failed"); the runs themselves still all run at once.
 */
function limiter(n: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => waiting.push(r));
    active++;
    try {
      return await work();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
const connecting = limiter(64);

/** Starts answered 429 (an active-run limit) and retried after Retry-After, per phase. */
let refused429 = 0;

async function startRun(
  url: string,
  token: string,
  workflow: unknown,
  planApproval = false,
): Promise<string> {
  for (;;) {
    const res = await connecting(() =>
      api(url, 'POST', '/api/agent/run', {
        token,
        body: {
          config: { planApproval, permissionMode: 'full-access', limits: { maxParallelSteps: 64 } },
          workflow,
        },
      }),
    );
    if (res.status === 200) return res.json['runId'] as string;
    // An owner or deployment limit on active runs: wait as told and ask again.
    if (res.status === 429) {
      refused429++;
      await new Promise((r) => setTimeout(r, 1_000 * Number(res.headers.get('retry-after') ?? '1')));
      continue;
    }
    throw new Error(`start answered ${res.status}: ${res.text}`);
  }
}

async function runToEnd(url: string, token: string, workflow: unknown): Promise<void> {
  const runId = await startRun(url, token, workflow);
  const s = await connecting(() =>
    openStream(`${url}/api/agent/stream?runId=${runId}`, { 'x-switchyard-token': token }),
  );
  try {
    await s.next('complete', 600_000);
  } finally {
    s.close();
  }
}

/**
 * Every replica of each service, and the shared servers, for CPU per run. The bench process does
 * the same work whatever the replica count: its CPU per run is the control that shows how much a
 * busier machine (more processes on the same two cores) inflates everyone's.
 */
function processes(stack: Stack): Record<string, number[]> {
  const groups: Record<string, number[]> = {};
  for (const name of SERVICE_NAMES) groups[name] = stack.replicas(name).map((r) => r.child.pid as number);
  for (const [pid, p] of ticksByCommand(new Set(['postgres', 'nats-server', 'redis-server'])))
    (groups[p.comm] ??= []).push(pid);
  groups['benchClient'] = [process.pid];
  return groups;
}

/**
 * Per-step latency of a sequential chain, and the wall time of PARALLEL one-step runs at once, on a
 * warm stack: parallel rounds warm it until the services' CPU per run settles (see
 * warmUntilSettled), then the chain's rounds, then the measured parallel rounds.
 */
async function throughput(replicas: number) {
  return withStack(replicas, THROUGHPUT_LIMITS, async (stack, token) => {
    const urls = stack.gatewayUrls;
    // A start answered with an error (not 429) is counted and reported, not retried.
    const failed: string[] = [];
    const parallel = () =>
      Promise.all(
        Array.from({ length: PARALLEL }, (_, i) =>
          runToEnd(urls[i % urls.length] as string, token, chain(1)).catch((err: Error) => {
            failed.push(err.message.slice(0, 300));
          }),
        ),
      );
    const warmUp = await warmUntilSettled(async () => {
      const tally = new CpuTally();
      await tally.during(processes(stack), parallel);
      return servicesCpu(tally.msPer(PARALLEL));
    });
    const perStep: number[] = [];
    for (let i = 0; i < SEQUENTIAL_ROUNDS; i++) {
      const t0 = performance.now();
      await runToEnd(urls[i % urls.length] as string, token, chain(CHAIN));
      perStep.push((performance.now() - t0) / CHAIN);
    }
    const walls: number[] = [];
    refused429 = 0;
    const cpu = new CpuTally();
    for (let round = 0; round < ROUNDS; round++) {
      const t0 = performance.now();
      await cpu.during(processes(stack), parallel);
      walls.push(performance.now() - t0);
    }
    return {
      replicas,
      warmUpServicesCpuMsPerRun: warmUp.passes,
      warmUpSettled: warmUp.settled,
      sequentialMsPerStep: r1(median(perStep)),
      parallelWallMs: Math.round(median(walls)),
      parallelRoundsMs: walls.map(Math.round),
      parallelFailed: failed.length,
      parallelRefused429: refused429,
      parallelCpuMsPerRun: cpu.msPer(PARALLEL * ROUNDS),
      ...(failed[0] ? { firstFailure: failed[0] } : {}),
    };
  });
}

/**
 * The gateway's RSS, as SETTLE_SAMPLES readings one second apart: the first, and the lowest (what
 * stays once the collector has had a moment: garbage of the opens not yet collected is no per-stream
 * cost). No collection is forced. With its JS heap in use (prom-client's gauge, garbage included).
 */
async function settledRss(pid: number, metricsUrl: string) {
  const samples: number[] = [];
  for (let i = 0; i < SETTLE_SAMPLES; i++) {
    if (i) await new Promise((r) => setTimeout(r, 1_000));
    samples.push(rssKiB(pid));
  }
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const heap = /^switchyard_nodejs_heap_size_used_bytes(?:{[^}]*})? (\d+(?:\.\d+)?)/m.exec(text)?.[1];
  return {
    first: samples[0] as number,
    lowest: Math.min(...samples),
    heapUsedKiB: heap === undefined ? undefined : Math.round(Number(heap) / 1024),
  };
}

/** Gateway RSS per idle open stream, with IDLE_STREAMS streams of one run waiting at its plan gate. */
async function idleStreams() {
  return withStack(1, {}, async (stack, token) => {
    const url = stack.gatewayUrl;
    const runId = await startRun(url, token, chain(1), true);
    const open = (): Promise<SseStream> =>
      connecting(() => openStream(`${url}/api/agent/stream?runId=${runId}`, { 'x-switchyard-token': token }));
    const warm = await Promise.all(Array.from({ length: 200 }, open));
    await Promise.all(warm.map((s) => s.next('plan_approval_requested', 120_000)));
    warm.forEach((s) => s.close());
    await new Promise((r) => setTimeout(r, 1_000));
    const gateway = stack.replicas('gateway')[0];
    const pid = gateway?.child.pid as number;
    const metricsUrl = gateway?.metricsUrl as string;
    const before = await settledRss(pid, metricsUrl);
    const streams: SseStream[] = [];
    for (let i = 0; i < IDLE_STREAMS; i += 200) {
      const batch = await Promise.all(Array.from({ length: Math.min(200, IDLE_STREAMS - i) }, open));
      await Promise.all(batch.map((s) => s.next('plan_approval_requested', 120_000)));
      streams.push(...batch);
    }
    await new Promise((r) => setTimeout(r, 2_000));
    const after = await settledRss(pid, metricsUrl);
    const stillOpen = streams.filter((s) => !s.ended()).length;
    streams.forEach((s) => s.close());
    const perStream = (a: number | undefined, b: number | undefined) =>
      a === undefined || b === undefined ? undefined : r1((b - a) / IDLE_STREAMS);
    return {
      streams: IDLE_STREAMS,
      stillOpen,
      gatewayRssKiB: { before: before.lowest, after: after.lowest },
      perStreamKiB: perStream(before.lowest, after.lowest),
      // The first reading of each (2 s after the last open): what this bench reported before it took
      // the lowest of SETTLE_SAMPLES.
      perStreamKiBFirstReading: perStream(before.first, after.first),
      // JS heap in use (live and not yet collected) per stream, from the gateway's /metrics.
      heapPerStreamKiB: perStream(before.heapUsedKiB, after.heapUsedKiB),
      goalKiB: 12,
    };
  });
}

/** From SIGKILL of the executor replica driving a run to the run's `interrupted` frame. */
async function killToInterrupted() {
  return withStack(
    2,
    { RUN_LEASE_MS: String(LEASE_MS), RUN_SWEEP_MS: String(SWEEP_MS) },
    async (stack, token) => {
      const url = stack.gatewayUrl;
      const times: number[] = [];
      for (let round = 0; round < KILL_ROUNDS; round++) {
        const runId = await startRun(url, token, { steps: [wait('slow', 3_000_000)] });
        const s = await openStream(`${url}/api/agent/stream?runId=${runId}`, { 'x-switchyard-token': token });
        await s.next('step_start', 120_000);
        // The replica holding the lease: run.owner_replica is its instance id (<host>-<pid>-<random>).
        const pg = new Client({ connectionString: stack.env['DATABASE_URL'] });
        await pg.connect();
        const row = await waitFor(async () => {
          const r = await pg.query<{ owner_replica: string | null }>(
            'SELECT owner_replica FROM run WHERE id = $1',
            [runId],
          );
          return r.rows[0]?.owner_replica ?? undefined;
        }).finally(() => pg.end());
        const victim = replicaByInstance(stack, row);
        if (victim?.name !== 'executor') throw new Error(`no executor replica is ${row}`);
        const killedAt = performance.now();
        await stack.stopService(victim.id, 'SIGKILL');
        const frame = await s.next('interrupted', 120_000);
        times.push(frame.receivedAt - killedAt);
        s.close();
        await stack.startService('executor');
      }
      return {
        leaseMs: LEASE_MS,
        sweepMs: SWEEP_MS,
        killToInterruptedMs: times.map(Math.round),
        medianMs: Math.round(median(times)),
        goalMs: LEASE_MS + 1_000,
      };
    },
  );
}

export async function runScaleBench(outDir: string, parts: string[] = []): Promise<Record<string, unknown>> {
  const unknown = parts.filter((p) => !(SCALE_PARTS as readonly string[]).includes(p));
  if (unknown.length)
    throw new Error(`unknown part(s) of scale: ${unknown.join(', ')}; parts: ${SCALE_PARTS.join(', ')}`);
  const runs = (part: (typeof SCALE_PARTS)[number]) => !parts.length || parts.includes(part);
  const loadAtStart = loadavg();
  const one = runs('throughput') ? await throughput(1) : undefined;
  const two = runs('throughput') ? await throughput(2) : undefined;
  const idle = runs('idle') ? await idleStreams() : undefined;
  const kill = runs('kill') ? await killToInterrupted() : undefined;
  const result = {
    benchmark: 'scale',
    at: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      node: process.version,
      loadAvgAtStart: loadAtStart.map(r1),
      loadAvgAtEnd: loadavg().map(r1),
    },
    method: {
      rounds: { sequential: SEQUENTIAL_ROUNDS, parallel: ROUNDS, killToInterrupted: KILL_ROUNDS },
      statistic: 'median of rounds',
      warmUp: `parallel rounds of ${PARALLEL} runs before anything is measured, until the services' CPU per run of two rounds in a row is within 10% (at least 3 rounds, at most 8; warmUpServicesCpuMsPerRun lists them): a fresh service costs several times its steady CPU per run for its first thousands of runs, and two replicas each see half of them`,
      limits: `RUN_OWNER_ACTIVE_LIMIT = RUN_DEPLOYMENT_ACTIVE_LIMIT = ${PARALLEL} in the throughput phases (all runs active at once; a 429 would be counted and retried after Retry-After)`,
      chain: `${CHAIN} sequential wait {ms:0} steps, HTTP start → SSE complete`,
      parallel: `${PARALLEL} one-step runs started at once, spread over the gateways, each followed to complete`,
      replicas: 'every service as N processes on this machine (NODE_ENV=production)',
      cpu: 'utime + stime from /proc over the parallel rounds, per run: each service (all its replicas), postgres / nats-server / redis-server (all their processes), and this process (the client: the same work at any replica count, so the control)',
      idleRss: `gateway RSS (ps) before and after opening the streams: the lowest of ${SETTLE_SAMPLES} readings 1 s apart, no forced GC`,
    },
    ...(parts.length ? { parts } : {}),
    ...(one && two
      ? {
          replicas: { one, two },
          ratios: {
            sequentialTwoOverOne: Math.round((two.sequentialMsPerStep / one.sequentialMsPerStep) * 100) / 100,
            parallelTwoOverOne: Math.round((two.parallelWallMs / one.parallelWallMs) * 100) / 100,
            parallelCpuPerRunTwoOverOne: {
              services: ratio(servicesCpu(two.parallelCpuMsPerRun), servicesCpu(one.parallelCpuMsPerRun)),
              benchClientControl: ratio(
                two.parallelCpuMsPerRun['benchClient'],
                one.parallelCpuMsPerRun['benchClient'],
              ),
            },
            goal: 'two replicas not slower than one by more than 10% (≤ 1.10)',
          },
        }
      : {}),
    ...(idle ? { idleStreams: idle } : {}),
    ...(kill ? { executorKill: kill } : {}),
  };
  mkdirSync(outDir, { recursive: true });
  // A run of some parts does not overwrite the full results.
  const file = parts.length ? `scale-${[...new Set(parts)].join('-')}.json` : 'scale.json';
  writeFileSync(join(outDir, file), JSON.stringify(result, null, 2) + '\n');
  return result;
}
