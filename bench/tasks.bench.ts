import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { get as httpGet, type ClientRequest } from 'node:http';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { connect } from 'nats';
import { Client } from 'pg';
import { createScratchDatabase } from '@switchyard/server-db';
import { taskQueueNames } from '@switchyard/server-queue';
import { KeepAliveApi, sseBlocks, Stack } from '@switchyard/testing';
import {
  machineBusyTicks,
  processSyscalls,
  processTicks,
  sumOf,
  ticksByCommand,
  warmUntilSettled,
  type Syscalls,
} from './cpu';

/*
 * npm run bench -- tasks
 * Background tasks as a client sees them (REST through the gateway; gateway, planner, executor,
 * tool-registry and scheduler as processes, a scratch database, a Redis logical DB of their own) vs
 * plain BullMQ (Queue.add → Worker, concurrency 16, a no-op job) on the same Redis DB, same run.
 *   throughput:  N one-step workflows (`wait` ms=0) from 3 owners × 4 concurrent submitters, each owner
 *                keeping at most 24 outstanding (the normal-priority share of an owner's queue, so the
 *                limits are respected) vs N raw jobs from 3 × 4 producers under the same caps; three
 *                rounds of each, alternating, medians, after warm-up passes (until the CPU per task
 *                settles). The time
 *                between a body's end and the next body's start while work waited is reported apart:
 *                that is the admission + dispatch part; CPU per process says where the time goes.
 *   pickup:      idle, one at a time: submit → body started (its run stored; from the row and from the client's
 *                submit) vs BullMQ add → worker callback; split by the BullMQ event stream of the queue.
 *   priorities:  10 ms bodies, 3 owners × 3 priorities submitting open loop at 1.6× the capacity the
 *                throughput part measured (so work always waits), 429s backed off; queue wait per
 *                priority (until dispatched: the task's startedAt), and how busy the 16 slots were.
 * Ends are heard on each owner's feed (GET /api/events), as a live client hears them; the final
 * snapshots come from listing each owner's newest completed tasks every 250 ms, about twice as
 * many as ended meanwhile (finished tasks are pruned beyond the newest 100 per owner). Both are load the measured stack carries too. (Until 2026-12-06
 * the submitters waited for that list to free their slots: 72 outstanding tasks over ~270 ms of
 * run plus half a poll capped the bench at ~270 tasks/s whatever the stack could do.)
 */

const NATS_URL = 'nats://127.0.0.1:4222';
// A logical database of its own: flushed before the run, shared by the stack and the raw peer.
const REDIS_URL = 'redis://127.0.0.1:6379/11';
const SLOTS = 16;
const N = 600;
/** Measured throughput rounds per side, alternating with the raw peer's; each side reports its median. */
const THROUGHPUT_ROUNDS = 3;
const OWNERS = 3;
const OUTSTANDING_PER_OWNER = 24;
/** Concurrent submitters per owner: one alone is bound by the submit's answer time. */
const LANES_PER_OWNER = 4;
const PICKUPS = 100;
/** Tasks of the census pass (messages, Redis commands and Postgres work per task). */
const CENSUS = 300;
const PICKUP_WARMUP = 5;
const LOAD_MS = 20_000;
const LOAD_WARMUP_MS = 2_000;
// Relative to the throughput part's rate: 10 ms bodies showed more capacity than that (1.3× left the
// queue empty at times), so the margin makes work wait throughout.
const OVERLOAD = 1.6;
/** Submits one priority stream of one owner may have unanswered at once. */
const STREAM_POSTS = 4;
const PRIORITIES = ['interactive', 'normal', 'batch'] as const;
type Priority = (typeof PRIORITIES)[number];
const POLL_MS = 250;
/** A task not seen completed for this long is looked up on its own (failed, or pruned unseen). */
const LATE_MS = 15_000;

interface TaskJson {
  id: string;
  state: string;
  priority: Priority;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  runId: string | null;
  queueWaitMs: number;
  runDurationMs: number | null;
}

interface Owner {
  token: string;
  /** Published one-step workflows: `wait` 0 ms and 10 ms. */
  instant: string;
  tenMs: string;
  watcher: TaskWatcher;
}

const ENDED = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const at = (iso: string | null) => (iso ? Date.parse(iso) : NaN);
const r3 = (x: number) => Math.round(x * 1000) / 1000;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
}

function stats(xs: number[]): { p50Ms: number; p99Ms: number; samples: number } {
  return { p50Ms: r3(pct(xs, 0.5)), p99Ms: r3(pct(xs, 0.99)), samples: xs.length };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Learns when an owner's tasks end as a live client would: from the owner feed (`GET /api/events`,
 * `event: task` frames), the moment the scheduler records an end. The final snapshots (the
 * timestamps the figures are made of) come from listing the owner's completed tasks every 250 ms
 * (all that are kept); an end the feed did not carry (it is a hint and may resync) is learnt there.
 */
class TaskWatcher {
  private readonly waiting = new Map<string, { resolve: (t: TaskJson | null) => void; since: number }>();
  private readonly seen = new Map<string, TaskJson>();
  /** Who waits for a task's end to be heard, and the ends heard before anyone waited. */
  private readonly endWaiters = new Map<string, () => void>();
  private readonly endsHeard = new Set<string>();
  private running = true;
  private readonly loop: Promise<void>;
  private readonly feed: ClientRequest;
  errors = 0;
  /** Ends learnt from the list before the feed carried them. */
  endsFromList = 0;
  /** Ends the feed carried since the last list: the next list asks for about that many. */
  private endsSincePoll = 0;

  constructor(
    private readonly http: KeepAliveApi,
    private readonly token: string,
    baseUrl: string,
  ) {
    this.loop = this.run();
    this.feed = this.listen(baseUrl);
  }

  /** Resolves when the task's end is heard (feed or list). */
  endHeard(id: string): Promise<void> {
    if (this.endsHeard.delete(id) || this.seen.has(id)) return Promise.resolve();
    return new Promise((resolve) => this.endWaiters.set(id, resolve));
  }

  /** The task's final snapshot; null when it was pruned before any poll saw it. */
  ended(id: string): Promise<TaskJson | null> {
    const known = this.seen.get(id);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => this.waiting.set(id, { resolve, since: Date.now() }));
  }

  async stop(): Promise<void> {
    this.running = false;
    this.feed.destroy();
    await this.loop;
  }

  private heard(id: string, fromList: boolean): void {
    const waiter = this.endWaiters.get(id);
    if (waiter) {
      this.endWaiters.delete(id);
      if (fromList) this.endsFromList++;
      waiter();
    } else if (!fromList) this.endsHeard.add(id);
  }

  /** The owner feed over node:http (a plain socket of its own: the client shares the cores). */
  private listen(baseUrl: string): ClientRequest {
    const req = httpGet(
      `${baseUrl}/api/events`,
      { headers: { authorization: `Bearer ${this.token}`, accept: 'text/event-stream' }, agent: false },
      (res) => {
        void (async () => {
          for await (const frame of sseBlocks(res)) {
            if (frame.event !== 'task' || !frame.data) continue;
            const e = JSON.parse(frame.data) as { taskId: string; status: string };
            if (!ENDED.has(e.status)) continue;
            this.endsSincePoll++;
            this.heard(e.taskId, false);
          }
        })().catch(() => undefined);
      },
    );
    req.on('error', () => {
      if (this.running) this.errors++;
    });
    return req;
  }

  private settle(t: TaskJson | null, id: string): void {
    if (t) this.seen.set(id, t);
    this.heard(id, true);
    this.waiting.get(id)?.resolve(t);
    this.waiting.delete(id);
  }

  private async run(): Promise<void> {
    while (this.running) {
      await sleep(POLL_MS);
      if (!this.waiting.size) continue;
      try {
        // The newest completed tasks, about as many as ended since the last list (twice, at least
        // 20): listing all 100 kept ones 4 times a second was load of the bench's own making.
        const limit = Math.min(200, Math.max(20, this.endsSincePoll * 2));
        this.endsSincePoll = 0;
        const res = await this.http.call('GET', `/api/agent/tasks?limit=${limit}&state=completed`, {
          token: this.token,
        });
        if (res.status !== 200) throw new Error(`list answered ${res.status}`);
        for (const t of res.json['items'] as TaskJson[]) this.settle(t, t.id);
        const now = Date.now();
        for (const [id, w] of [...this.waiting]) {
          if (now - w.since < LATE_MS) continue;
          w.since = now;
          const one = await this.http.call('GET', `/api/agent/tasks/${id}`, { token: this.token });
          if (one.status === 404) this.settle(null, id);
          else if (ENDED.has(String(one.json['state']))) this.settle(one.json as unknown as TaskJson, id);
        }
      } catch {
        this.errors++;
      }
    }
  }
}

/**
 * Submits `count` items from `lanes` concurrent submitters, keeping at most `cap` submitted or in
 * flight and not yet ended (a slot is reserved before its submit, so lanes cannot overshoot).
 */
async function drive(
  count: number,
  cap: number,
  lanes: number,
  submitOne: (i: number) => Promise<{ end: Promise<void> }>,
): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  let next = 0;
  const lane = async () => {
    for (;;) {
      while (inFlight.size >= cap) await Promise.race(inFlight);
      if (next >= count) return;
      const i = next++;
      let release: () => void = () => undefined;
      const tracked: Promise<void> = new Promise<void>((r) => (release = r)).finally(() =>
        inFlight.delete(tracked),
      );
      inFlight.add(tracked);
      const { end } = await submitOne(i);
      void end.then(() => release());
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  await Promise.all(inFlight);
}

/** CPU time (ticks of 1/100 s) of the stack's processes, the shared servers, this process, the machine. */
interface CpuMark {
  wallMs: number;
  services: Map<string, number>;
  servers: Map<number, { comm: string; ticks: number }>;
  bench: NodeJS.CpuUsage;
  machineBusy: number;
  /** Read/write system calls per service and per server process (socket traffic, mostly). */
  syscalls: Map<string, Map<number, Syscalls>>;
}

/** Postgres (every backend), Redis and NATS: shared with whatever else runs on the machine. */
const SERVERS = new Set(['postgres', 'redis-server', 'nats-server']);
const serverTicks = () => ticksByCommand(SERVERS);

function cpuMark(stack: Stack): CpuMark {
  return {
    wallMs: performance.now(),
    services: new Map([...stack.services].map(([name, p]) => [name, processTicks(p.child.pid as number)])),
    servers: serverTicks(),
    bench: process.cpuUsage(),
    machineBusy: machineBusyTicks(),
    syscalls: syscallsByGroup(stack),
  };
}

function syscallsByGroup(stack: Stack): Map<string, Map<number, Syscalls>> {
  const out = new Map<string, Map<number, Syscalls>>();
  const add = (group: string, pid: number) => {
    const g = out.get(group) ?? new Map<number, Syscalls>();
    g.set(pid, processSyscalls(pid));
    out.set(group, g);
  };
  for (const [name, p] of stack.services) add(name, p.child.pid as number);
  for (const [pid, s] of serverTicks()) add(s.comm, pid);
  return out;
}

/** System calls per unit of work since the mark, per group (processes present at both ends). */
function syscallsPer(stack: Stack, m: CpuMark, units: number): Record<string, Syscalls> {
  const now = syscallsByGroup(stack);
  const out: Record<string, Syscalls> = {};
  for (const [group, pids] of now) {
    let reads = 0;
    let writes = 0;
    for (const [pid, c] of pids) {
      const before = m.syscalls.get(group)?.get(pid);
      if (!before) continue;
      reads += c.reads - before.reads;
      writes += c.writes - before.writes;
    }
    out[group] = { reads: r3(reads / units), writes: r3(writes / units) };
  }
  return out;
}

/** Cores used since the mark, per process (group); `other` is whatever else the machine ran. */
function coresSince(stack: Stack, m: CpuMark): Record<string, number> {
  const seconds = (performance.now() - m.wallMs) / 1000;
  const ticks: Record<string, number> = {};
  for (const [name, p] of stack.services)
    ticks[name] = processTicks(p.child.pid as number) - (m.services.get(name) ?? 0);
  for (const [pid, now] of serverTicks())
    ticks[now.comm] = (ticks[now.comm] ?? 0) + now.ticks - (m.servers.get(pid)?.ticks ?? 0);
  const b = process.cpuUsage(m.bench);
  ticks['benchProcess'] = (b.user + b.system) / 1e4;
  const machine = machineBusyTicks() - m.machineBusy;
  ticks['other'] = machine - Object.values(ticks).reduce((a, c) => a + c, 0);
  ticks['machine'] = machine;
  return Object.fromEntries(Object.entries(ticks).map(([k, t]) => [k, r3(t / 100 / seconds)]));
}

/**
 * Slot hand-offs while work was waiting: at most SLOTS bodies run, so the k-th start needs the
 * (k − SLOTS)-th end; the gap between them is what admission + dispatch cost a busy slot.
 */
function handoffs(tasks: TaskJson[]): Array<{ task: TaskJson; freedAt: number; gapMs: number }> {
  const starts = [...tasks].sort((a, b) => at(a.startedAt) - at(b.startedAt));
  const ends = tasks.map((t) => at(t.finishedAt)).sort((a, b) => a - b);
  const out: Array<{ task: TaskJson; freedAt: number; gapMs: number }> = [];
  for (let k = SLOTS; k < starts.length; k++) {
    const task = starts[k] as TaskJson;
    const freedAt = ends[k - SLOTS] as number;
    if (at(task.createdAt) <= freedAt) out.push({ task, freedAt, gapMs: at(task.startedAt) - freedAt });
  }
  return out;
}

/**
 * The tasks with `startedAt` as their bodies started: when each body's run was stored (an executor
 * writes the run as the body starts; same clock, Postgres's). A task's own `startedAt` says when the
 * scheduler moved it to running, as it handed the task to BullMQ (since 2026-12-06; before, an
 * executor's claim set it as the body started): so the hand-off, pickup and body figures read the
 * run. Queue wait and run duration follow. A task whose run was not written keeps its own times.
 */
async function bodiesStarted(databaseUrl: string, tasks: readonly TaskJson[]): Promise<TaskJson[]> {
  const pg = new Client({ connectionString: databaseUrl });
  await pg.connect();
  try {
    const { rows } = await pg.query<{ id: string; created_at: Date }>(
      'SELECT id, created_at FROM run WHERE id = ANY($1::uuid[])',
      [tasks.flatMap((t) => t.runId ?? [])],
    );
    const started = new Map(rows.map((r) => [r.id, r.created_at.getTime()]));
    return tasks.map((t) => {
      const s = t.runId ? started.get(t.runId) : undefined;
      if (s === undefined) return t;
      return {
        ...t,
        startedAt: new Date(s).toISOString(),
        queueWaitMs: s - at(t.createdAt),
        runDurationMs: t.finishedAt ? at(t.finishedAt) - s : null,
      };
    });
  } finally {
    await pg.end();
  }
}

/** When BullMQ added and activated each job of a queue, from its event stream (Redis clock, ms). */
async function jobEvents(
  redis: Redis,
  key: string,
): Promise<Map<string, { added?: number; active?: number }>> {
  const byJob = new Map<string, { added?: number; active?: number }>();
  for (const [id, fields] of await redis.xrange(key, '-', '+')) {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
    const event = f['event'];
    const jobId = f['jobId'];
    if (!jobId || (event !== 'added' && event !== 'active')) continue;
    const e = byJob.get(jobId) ?? {};
    e[event] ??= Number(id.split('-')[0]);
    byJob.set(jobId, e);
  }
  return byJob;
}

const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Calls per Redis command since the server started (INFO commandstats). */
async function commandStats(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const line of (await redis.info('commandstats')).split('\n')) {
    const m = /^cmdstat_([\w|]+):calls=(\d+)/.exec(line);
    if (m) calls.set(m[1] as string, Number(m[2]));
  }
  return calls;
}

/** A database's commits and rows from pg_stat_database. */
async function databaseStats(pg: Client, name: string): Promise<Record<string, number>> {
  await pg.query('SELECT pg_stat_clear_snapshot()');
  const { rows } = await pg.query<Record<string, string>>(
    `SELECT xact_commit AS commits, tup_inserted AS inserted, tup_updated AS updated,
            tup_deleted AS deleted, tup_fetched AS fetched
     FROM pg_stat_database WHERE datname = $1`,
    [name],
  );
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([k, v]) => [k, Number(v)]));
}

/** Per task, rounded; what rounds to 0 left out. */
function perTask(counts: Iterable<[string, number]>, tasks: number): Record<string, number> {
  return Object.fromEntries(
    [...counts]
      .map(([k, n]): [string, number] => [k, Math.round((n / tasks) * 100) / 100])
      .filter(([, n]) => n > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

/**
 * What `tasks` one-step tasks cost the shared servers, counted in a pass of their own (the counting
 * subscriber would load the timed pass): NATS messages by subject (ids folded to <id>; replies
 * travel on _INBOX subjects), Redis commands (INFO commandstats, server-wide, the commands Lua
 * scripts call included), and the scratch database's commits and rows (pg_stat_database; a backend
 * reports within about a second of a transaction and an idle one within 10 s, so both readings wait 11 s).
 */
async function census(
  prefix: string,
  redis: Redis,
  database: { url: string; name: string },
  tasks: number,
  pass: () => Promise<void>,
): Promise<Record<string, unknown>> {
  const nc = await connect({ servers: NATS_URL, noAsyncTraces: true });
  const pg = new Client({ connectionString: database.url });
  await pg.connect();
  try {
    const subjects = new Map<string, number>();
    let counting = false;
    let bytes = 0;
    const count = (subject: string, size: number) => {
      if (!counting) return;
      subjects.set(subject, (subjects.get(subject) ?? 0) + 1);
      bytes += size;
    };
    nc.subscribe(`${prefix}>`, {
      callback: (_e, m) => count(m.subject.slice(prefix.length).replace(UUIDS, '<id>'), m.data.length),
    });
    nc.subscribe('_INBOX.>', { callback: (_e, m) => count('_INBOX.> (replies)', m.data.length) });
    await nc.flush();
    await sleep(11_000);
    const pgBefore = await databaseStats(pg, database.name);
    const redisBefore = await commandStats(redis);
    counting = true;
    await pass();
    counting = false;
    const redisAfter = await commandStats(redis);
    await sleep(11_000);
    const pgAfter = await databaseStats(pg, database.name);
    const messages = [...subjects.values()].reduce((a, n) => a + n, 0);
    return {
      tasks,
      natsMessagesPerTask: Math.round((messages / tasks) * 100) / 100,
      natsBytesPerTask: Math.round(bytes / tasks),
      natsBySubject: perTask(subjects, tasks),
      redisCommandsPerTask: perTask(
        [...redisAfter].map(([k, n]): [string, number] => [k, n - (redisBefore.get(k) ?? 0)]),
        tasks,
      ),
      postgresPerTask: perTask(
        Object.entries(pgAfter).map(([k, n]): [string, number] => [k, n - (pgBefore[k] ?? 0)]),
        tasks,
      ),
    };
  } finally {
    await nc.close();
    await pg.end();
  }
}

export async function runTasksBench(outDir: string): Promise<Record<string, unknown>> {
  const loadAtStart = loadavg()[0];
  const flusher = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await flusher.flushdb();
  const db = await createScratchDatabase('postgresql://postgres@127.0.0.1:5432/postgres', { label: 'bench' });
  const prefix = `benchtasks${process.pid}.`;
  const names = taskQueueNames(prefix);
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const stack = await Stack.start(
    {
      DATABASE_URL: db.url,
      NATS_URL,
      NATS_SUBJECT_PREFIX: prefix,
      REDIS_URL,
      // As deployed: NODE_ENV=test (the test stack's default) also checks every RPC reply against
      // its contract, a parse per call that production does not pay.
      NODE_ENV: 'production',
      SWITCHYARD_ADMIN_TOKEN: admin,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      WORKSPACE_DIR: join(__dirname, '..', '..', 'tmp', 'bench-workspace'),
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
    },
    ['gateway', 'planner', 'executor', 'tool-registry', 'scheduler'],
  );
  const base = stack.gatewayUrl;
  // The client's calls over keep-alive http.request: fetch would spend the cores the stack needs.
  const http = new KeepAliveApi(base);

  // The raw peer: plain BullMQ on the same Redis DB, its own key prefix.
  const rawConnections = [0, 1].map(() => new Redis(REDIS_URL, { maxRetriesPerRequest: null }));
  const rawQueue = new Queue('bench-raw', { connection: rawConnections[0] as Redis, prefix: 'benchraw' });
  const received = new Map<string, (atMs: number) => void>();
  const completed = new Map<string, () => void>();
  const rawWorker = new Worker(
    'bench-raw',
    async (job) => {
      received.get(job.id as string)?.(performance.now());
    },
    { connection: rawConnections[1] as Redis, prefix: 'benchraw', concurrency: SLOTS },
  );
  rawWorker.on('completed', (job) => {
    completed.get(job.id as string)?.();
    completed.delete(job.id as string);
  });
  const rawOpts = { removeOnComplete: true, removeOnFail: true };
  let rawSeq = 0;
  const rawJobId = () => `j${++rawSeq}`;

  const owners: Owner[] = [];
  try {
    await rawWorker.waitUntilReady();
    const call = async (method: string, path: string, token: string, body?: unknown) => {
      const res = await http.call(method, path, { token, ...(body !== undefined ? { body } : {}) });
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
      return res.json;
    };
    const publish = async (token: string, ms: number) => {
      const wf = await call('POST', '/api/workflows', token, {
        name: `bench wait ${ms}`,
        inputSchema: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
        plan: { steps: [{ id: 'w', tool: 'wait', arguments: { ms } }] },
      });
      await call('POST', `/api/workflows/${String(wf['id'])}/publish`, token, { revision: 1 });
      return String(wf['id']);
    };
    for (let i = 0; i < OWNERS; i++) {
      const created = await call('POST', '/api/tokens', admin, { owner: `bench-owner-${i}`, role: 'user' });
      const token = String(created['token']);
      owners.push({
        token,
        instant: await publish(token, 0),
        tenMs: await publish(token, 10),
        watcher: new TaskWatcher(http, token, base),
      });
    }

    const refusals = { throughput: 0 };
    /** POST /api/agent/tasks until accepted; a 429 waits its Retry-After and is counted. */
    const submit = async (o: Owner, workflowId: string, priority: Priority, tag: string) => {
      for (;;) {
        const t0 = performance.now();
        const res = await http.call('POST', '/api/agent/tasks', {
          token: o.token,
          body: { workflowId, inputs: { tag }, priority },
        });
        if (res.status === 202) return { task: res.json as unknown as TaskJson, ms: performance.now() - t0 };
        if (res.status !== 429) throw new Error(`submit answered ${res.status}: ${res.text}`);
        refusals.throughput++;
        await sleep(1000 * Number(res.headers.get('retry-after') ?? 1));
      }
    };

    // ── throughput ──
    const runThroughput = async (perOwner: number) => {
      const ended: TaskJson[] = [];
      const submitMs: number[] = [];
      const acceptedAt: number[] = [];
      let lost = 0;
      const snapshots: Array<Promise<void>> = [];
      const t0 = Date.now();
      await Promise.all(
        owners.map((o, n) =>
          drive(perOwner, OUTSTANDING_PER_OWNER, LANES_PER_OWNER, async (i) => {
            const { task, ms } = await submit(o, o.instant, 'normal', `o${n}-${i}`);
            submitMs.push(ms);
            acceptedAt.push(Date.now());
            snapshots.push(
              o.watcher.ended(task.id).then((t) => {
                if (t) ended.push(t);
                else lost++;
              }),
            );
            // The submitter's slot is free once the end is heard; the snapshot may come later.
            return { end: o.watcher.endHeard(task.id) };
          }),
        ),
      );
      await Promise.all(snapshots);
      return { t0, ended, submitMs, acceptedAt, lost };
    };
    const rawThroughput = async (count: number): Promise<number> => {
      const t0 = performance.now();
      let last = t0;
      await Promise.all(
        Array.from({ length: OWNERS }, () =>
          drive(count / OWNERS, OUTSTANDING_PER_OWNER, LANES_PER_OWNER, async () => {
            const id = rawJobId();
            const done = new Promise<void>((resolve) => completed.set(id, resolve));
            await rawQueue.add('job', {}, { jobId: id, ...rawOpts });
            return { end: done.then(() => void (last = performance.now())) };
          }),
        ),
      );
      return (count / (last - t0)) * 1000;
    };

    const perSOf = (run: Awaited<ReturnType<typeof runThroughput>>) =>
      (N / (Math.max(...run.ended.map((t) => at(t.finishedAt))) - run.t0)) * 1000;
    /** CPU ms per task summed over the services and the shared servers (not the bench client). */
    const cpuMsPerTask = (cores: Record<string, number>, perS: number) =>
      (sumOf(cores, [...stack.services.keys(), ...SERVERS]) * 1000) / perS;
    // Warm up every path (JIT, pools, prepared statements, Postgres backends) until the CPU per task
    // settles (see warmUntilSettled): after the 30 tasks this bench warmed up with before, the
    // measured pass still cost a fifth to a third more CPU per task than the passes after it. The
    // raw peer gets a full pass of its own.
    const warmUp = await warmUntilSettled(async () => {
      const mark = cpuMark(stack);
      const run = await runThroughput(N / OWNERS);
      return cpuMsPerTask(coresSince(stack, mark), perSOf(run));
    });
    await rawThroughput(N);

    // Rounds alternate (raw, Switchyard, …); each side's figure is its median round, and the
    // Switchyard round taken is the one whose tasks the per-task figures below describe.
    const rawRounds: number[] = [];
    const syRounds: Array<{
      run: Awaited<ReturnType<typeof runThroughput>>;
      perS: number;
      cpuMs: number;
      cores: Record<string, number>;
      syscalls: Record<string, Syscalls>;
      events: Awaited<ReturnType<typeof jobEvents>>;
    }> = [];
    let rawCpuMsPerJob = 0;
    for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
      const rawCpu = cpuMark(stack);
      rawRounds.push(await rawThroughput(N));
      if (round === 1) {
        const rawCores = coresSince(stack, rawCpu);
        // The raw peer's whole cost: this process (producers and worker) and Redis.
        rawCpuMsPerJob =
          (sumOf(rawCores, ['benchProcess', 'redis-server']) * 1000) / (rawRounds[1] as number);
      }
      const mark = cpuMark(stack);
      const run = await runThroughput(N / OWNERS);
      const cores = coresSince(stack, mark);
      const syscalls = syscallsPer(stack, mark, N);
      // Read now: the stream keeps BullMQ's latest 10,000 events, about two rounds' worth.
      const events = await jobEvents(flusher, `${names.bullPrefix}:${names.queue}:events`);
      const perS = perSOf(run);
      syRounds.push({ run, perS, cpuMs: cpuMsPerTask(cores, perS), cores, syscalls, events });
    }
    const rawPerS = pct(rawRounds, 0.5);
    const middle = [...syRounds].sort((a, b) => a.perS - b.perS)[
      Math.floor(syRounds.length / 2)
    ] as (typeof syRounds)[number];
    const {
      run: sy,
      perS: syPerS,
      cpuMs: syCpuMs,
      cores: throughputCores,
      syscalls: throughputSyscalls,
      events: throughputEvents,
    } = middle;
    const ended = await bodiesStarted(db.url, sy.ended);
    const completedTasks = ended.filter((t) => t.state === 'completed');
    const lastEnd = Math.max(...ended.map((t) => at(t.finishedAt)));
    const burst = OWNERS * OUTSTANDING_PER_OWNER;
    const sortedAccepts = [...sy.acceptedAt].sort((a, b) => a - b);
    const burstPerS = (burst / ((sortedAccepts[burst - 1] as number) - sy.t0)) * 1000;
    const gaps = handoffs(ended);
    const split = (pick: (g: (typeof gaps)[number], e: { added?: number; active?: number }) => number) =>
      stats(
        gaps.map((g) => pick(g, throughputEvents.get(g.task.id) ?? {})).filter((x) => Number.isFinite(x)),
      );
    const runDurations = ended.map((t) => t.runDurationMs ?? NaN).filter(Number.isFinite);
    const firstStart = Math.min(...ended.map((t) => at(t.startedAt)));
    const utilisation = runDurations.reduce((a, b) => a + b, 0) / (SLOTS * (lastEnd - firstStart));

    // ── pickup when idle ──
    const pickupOwner = owners[0] as Owner;
    const pickups: Array<{ t0: number; accepted: number; task: TaskJson }> = [];
    for (let i = 0; i < PICKUP_WARMUP + PICKUPS; i++) {
      const t0 = Date.now();
      const { task } = await submit(pickupOwner, pickupOwner.instant, 'interactive', `p${i}`);
      const accepted = Date.now();
      let end: TaskJson | undefined;
      await sleep(20);
      while (!end) {
        const res = await http.call('GET', `/api/agent/tasks/${task.id}`, { token: pickupOwner.token });
        if (ENDED.has(String(res.json['state']))) end = res.json as unknown as TaskJson;
        else await sleep(10);
      }
      if (i >= PICKUP_WARMUP) pickups.push({ t0, accepted, task: end });
      await sleep(20);
    }
    const rawPickup: number[] = [];
    for (let i = 0; i < PICKUP_WARMUP + PICKUPS; i++) {
      const id = rawJobId();
      const got = new Promise<number>((resolve) => received.set(id, resolve));
      const done = new Promise<void>((resolve) => completed.set(id, resolve));
      const t0 = performance.now();
      await rawQueue.add('job', {}, { jobId: id, ...rawOpts });
      const gotAt = await got;
      if (i >= PICKUP_WARMUP) rawPickup.push(gotAt - t0);
      received.delete(id);
      await done;
      await sleep(20);
    }
    const pickedUp = await bodiesStarted(
      db.url,
      pickups.map((p) => p.task),
    );
    pickups.forEach((p, i) => (p.task = pickedUp[i] as TaskJson));
    const pickupEvents = await jobEvents(flusher, `${names.bullPrefix}:${names.queue}:events`);
    const pickupSplit = (
      pick: (p: (typeof pickups)[number], e: { added?: number; active?: number }) => number,
    ) =>
      r3(
        pct(
          pickups.map((p) => pick(p, pickupEvents.get(p.task.id) ?? {})).filter((x) => Number.isFinite(x)),
          0.5,
        ),
      );
    const queueWait = stats(pickups.map((p) => p.task.queueWaitMs));
    const fromSubmit = stats(pickups.map((p) => at(p.task.startedAt) - p.t0));
    const raw = stats(rawPickup);

    // ── queue wait per priority under load ──
    const capacityPerS = 1 / (1 / syPerS + 0.01 / SLOTS);
    const perStreamPerS = (OVERLOAD * capacityPerS) / (OWNERS * PRIORITIES.length);
    const waits: Record<Priority, number[]> = { interactive: [], normal: [], batch: [] };
    const loadRefused: Record<Priority, number> = { interactive: 0, normal: 0, batch: 0 };
    const accepted: Record<Priority, number> = { interactive: 0, normal: 0, batch: 0 };
    const pending: Array<Promise<void>> = [];
    let loadLost = 0;
    let loadFailed = 0;
    const loadStart = Date.now();
    const loadEnd = loadStart + LOAD_WARMUP_MS + LOAD_MS;
    const interval = 1000 / perStreamPerS;
    const stream = async (o: Owner, priority: Priority, n: number) => {
      // Streams start spread over one interval so the 9 of them do not submit in lock step.
      let due = Date.now() + (n * interval) / (OWNERS * PRIORITIES.length);
      let pausedUntil = 0;
      const posts = new Set<Promise<void>>();
      const post = async (i: number) => {
        const submittedAt = Date.now();
        const res = await http.call('POST', '/api/agent/tasks', {
          token: o.token,
          body: { workflowId: o.tenMs, inputs: { tag: `${priority}${i}` }, priority },
        });
        if (res.status === 429) {
          loadRefused[priority]++;
          pausedUntil = Date.now() + 1000 * Number(res.headers.get('retry-after') ?? 1);
          return;
        }
        if (res.status !== 202) throw new Error(`submit answered ${res.status}: ${res.text}`);
        if (submittedAt < loadStart + LOAD_WARMUP_MS) return;
        accepted[priority]++;
        pending.push(
          o.watcher.ended(String(res.json['id'])).then((t) => {
            if (!t) loadLost++;
            else if (t.state !== 'completed') loadFailed++;
            else waits[priority].push(t.queueWaitMs);
          }),
        );
      };
      // Open loop: a submit is due every interval whether or not the last one was answered (at most
      // STREAM_POSTS at once); a 429 pauses the stream for its Retry-After.
      for (let i = 0; ; i++) {
        due = Math.max(due, pausedUntil);
        if (due - Date.now() > 0) await sleep(due - Date.now());
        if (Date.now() >= loadEnd) break;
        if (Date.now() < pausedUntil) continue;
        while (posts.size >= STREAM_POSTS) await Promise.race(posts);
        const p: Promise<void> = post(i).finally(() => posts.delete(p));
        posts.add(p);
        // Behind schedule (slow answers): carry on from now rather than bursting to catch up.
        due = Math.max(due + interval, Date.now() - interval);
      }
      await Promise.all(posts);
    };
    const running: number[] = [];
    const queued: number[] = [];
    let loadCpu: CpuMark | undefined;
    const sampler = (async () => {
      while (Date.now() < loadEnd) {
        await sleep(500);
        if (Date.now() < loadStart + LOAD_WARMUP_MS) continue;
        loadCpu ??= cpuMark(stack);
        const c = await http.call('GET', '/api/agent/tasks/capacity', { token: pickupOwner.token });
        running.push(Number(c.json['running']));
        queued.push(Number(c.json['queued']));
      }
    })();
    await Promise.all([
      ...owners.flatMap((o, i) => PRIORITIES.map((p, j) => stream(o, p, i * PRIORITIES.length + j))),
      sampler,
    ]);
    const loadCores = loadCpu ? coresSince(stack, loadCpu) : {};
    await Promise.all(pending);
    const byPriority = Object.fromEntries(
      PRIORITIES.map((p) => [p, { ...stats(waits[p]), accepted: accepted[p], refused429: loadRefused[p] }]),
    ) as Record<Priority, ReturnType<typeof stats> & { accepted: number; refused429: number }>;
    const interactiveP99 = byPriority.interactive.p99Ms;
    const batchP99 = byPriority.batch.p99Ms;

    // ── census: messages, Redis commands and Postgres work per task, in a pass of their own ──
    const counted = await census(prefix, flusher, db, CENSUS, async () => {
      const pass = await runThroughput(CENSUS / OWNERS);
      if (pass.ended.length + pass.lost !== CENSUS) throw new Error('the census pass lost track of tasks');
    });

    const throughputRatio = syPerS / rawPerS;
    const result = {
      benchmark: 'tasks',
      at: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model,
        node: process.version,
        loadAvg1mAtStart: r3(loadAtStart ?? NaN),
        loadAvg1mAtEnd: r3(loadavg()[0] ?? NaN),
      },
      method: {
        path: 'REST POST /api/agent/tasks through the gateway; gateway, planner, executor, tool-registry, scheduler as processes',
        client:
          'this process, HTTP/1.1 keep-alive over node:http (KeepAliveApi), not fetch: the client shares the two cores with the stack',
        redis: `${REDIS_URL} (flushed first), shared by the stack and the raw peer`,
        raw: 'plain BullMQ Queue.add → Worker (concurrency 16), no-op processor, removeOnComplete',
        ends: "heard on each owner's feed (GET /api/events, event: task), which frees the submitter's slot; final snapshots from listing each owner's newest completed tasks every 250 ms, twice as many as ended meanwhile, at least 20 (finished tasks are pruned beyond 100 per owner)",
        timestamps:
          "task createdAt/finishedAt (server, ms); a body's start is its run's creation (the task's startedAt is its dispatch: used only for the queue wait per priority); BullMQ added/active from the queue event stream ids",
      },
      throughput: {
        tasks: N,
        owners: OWNERS,
        outstandingPerOwner: OUTSTANDING_PER_OWNER,
        submittersPerOwner: LANES_PER_OWNER,
        priority: 'normal',
        body: 'one step, wait {ms:0}',
        rounds: `${THROUGHPUT_ROUNDS} each, alternating with the raw peer's; the median round is reported (its tasks give the per-task figures)`,
        warmUp: {
          cpuMsPerTaskSummed: warmUp.passes,
          settled: warmUp.settled,
          note: 'passes of the same shape before anything is measured, until two in a row cost within 10% CPU per task (at least 3, at most 8); the raw peer: one pass',
        },
        tasksPerS: r3(syPerS),
        roundsTasksPerS: syRounds.map((r) => r3(r.perS)),
        roundsCpuMsPerTaskSummed: syRounds.map((r) => r3(r.cpuMs)),
        rawBullmqJobsPerS: r3(rawPerS),
        rawRoundsJobsPerS: rawRounds.map(r3),
        ratioToRaw: r3(throughputRatio),
        completed: completedTasks.length,
        notCompleted: ended.length - completedTasks.length,
        prunedUnseen: sy.lost,
        refused429: refusals.throughput,
        admission: {
          submitAnswer: stats(sy.submitMs),
          acceptedPerSWhileFilling: r3(burstPerS),
          note: `the first ${burst} submits, before any queue limit could bind`,
        },
        dispatch: {
          handoff: stats(gaps.map((g) => g.gapMs)),
          handoffSplitP50: {
            endToBullmqAdded: split((g, e) => (e.added ?? NaN) - g.freedAt),
            addedToActive: split((_g, e) => (e.active ?? NaN) - (e.added ?? NaN)),
            activeToStarted: split((g, e) => at(g.task.startedAt) - (e.active ?? NaN)),
          },
          startsWithWorkWaiting: r3(gaps.length / (N - SLOTS)),
          note: 'a body end → the next body start while work waited (k-th start vs (k−16)-th end)',
        },
        cpuCores: throughputCores,
        cpuMsPerTask: Object.fromEntries(
          Object.entries(throughputCores).map(([k, c]) => [k, r3((c * 1000) / syPerS)]),
        ),
        cpuMsPerTaskSummed: r3(syCpuMs),
        syscallsPerTask: throughputSyscalls,
        syscallsNote:
          'read and write system calls per task (/proc/<pid>/io): nearly all are socket reads and writes, and on loopback TCP a write also pays for the receiving side',
        cpuMsPerTaskSummedNote:
          'the five services plus Postgres, Redis and NATS (shared servers: whatever else used them in the window counts too); not the bench client',
        rawCpuMsPerJob: r3(rawCpuMsPerJob),
        bodies: {
          runDuration: stats(runDurations),
          runDurationMeanMs: r3(mean(runDurations)),
          slotUtilisation: r3(utilisation),
          ceilingTasksPerSFromBodiesAlone: r3((SLOTS * 1000) / mean(runDurations)),
        },
        goal: '≥ 600 one-step tasks/s end to end, CPU per task ≤ 3 ms summed over processes (issue 18)',
        goalMet: syPerS >= 600 && syCpuMs <= 3,
      },
      pickup: {
        samples: PICKUPS,
        queueWait: queueWait,
        submitToStarted: fromSubmit,
        submitAnswer: stats(pickups.map((p) => p.accepted - p.t0)),
        splitP50Ms: {
          submitToCreated: pickupSplit((p) => at(p.task.createdAt) - p.t0),
          createdToBullmqAdded: pickupSplit((p, e) => (e.added ?? NaN) - at(p.task.createdAt)),
          addedToActive: pickupSplit((_p, e) => (e.active ?? NaN) - (e.added ?? NaN)),
          activeToStarted: pickupSplit((p, e) => at(p.task.startedAt) - (e.active ?? NaN)),
        },
        rawBullmqAddToWorker: raw,
        addedP50Ms: r3(queueWait.p50Ms - raw.p50Ms),
        addedP50FromClientSubmitMs: r3(fromSubmit.p50Ms - raw.p50Ms),
        goal: 'queueWaitMs p50 ≤ raw BullMQ add → worker p50 + 1 ms, idle',
        goalMet: queueWait.p50Ms <= raw.p50Ms + 1,
      },
      priorities: {
        body: 'one step, wait {ms:10}',
        owners: OWNERS,
        mix: `open loop, equal rates per owner × priority, ≤ ${STREAM_POSTS} unanswered submits per stream`,
        offeredPerS: r3(OVERLOAD * capacityPerS),
        estimatedCapacityPerS: r3(capacityPerS),
        loadSeconds: LOAD_MS / 1000,
        warmupSecondsExcluded: LOAD_WARMUP_MS / 1000,
        queueWait: byPriority,
        notCompleted: loadFailed,
        prunedUnseen: loadLost,
        runningSlots: {
          samples: running.length,
          mean: r3(mean(running)),
          fullFraction: r3(running.filter((r) => r >= SLOTS).length / running.length),
          queuedMean: r3(mean(queued)),
          samplesWithWorkWaiting: r3(queued.filter((q) => q > 0).length / queued.length),
          note: 'GET /api/agent/tasks/capacity every 500 ms',
        },
        cpuCores: loadCores,
        interactiveP99OverBatchP99: r3(interactiveP99 / batchP99),
        goal: 'interactive p99 queue wait ≤ batch p99 / 4 with all 16 slots busy',
        goalMet: interactiveP99 <= batchP99 / 4,
      },
      census: {
        ...counted,
        note: 'the throughput pass’s shape (3 owners, 24 outstanding each, one-step tasks); Redis counts are server-wide',
      },
      watcherErrors: owners.reduce((a, o) => a + o.watcher.errors, 0),
      endsHeardFromListNotFeed: owners.reduce((a, o) => a + o.watcher.endsFromList, 0),
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'tasks.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await Promise.all(owners.map((o) => o.watcher.stop()));
    await rawWorker.close();
    await rawQueue.close();
    rawConnections.forEach((c) => c.disconnect());
    http.close();
    await stack.stop();
    await db.drop();
    await flusher.flushdb().catch(() => undefined);
    flusher.disconnect();
  }
}
