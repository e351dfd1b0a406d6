import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:net';
import { join, sep } from 'node:path';
import { SERVICE_NAMES, type ServiceName } from '@switchyard/contracts';
import { waitFor } from './wait';

// libs/testing/src from sources (jest), dist/libs/testing/src when compiled (benchmarks).
const ROOT = __dirname.includes(`${sep}dist${sep}`)
  ? (__dirname.split(`${sep}dist${sep}`)[0] as string)
  : join(__dirname, '..', '..', '..');

/**
 * Node's flags for each service's process, the same as `npm start`, the image and the manifests give
 * it (tools/service-node-flags.json; why in docs/deployment.md, "Node flags").
 */
export const SERVICE_NODE_FLAGS: Readonly<Record<ServiceName, readonly string[]>> = JSON.parse(
  readFileSync(join(ROOT, 'tools', 'service-node-flags.json'), 'utf8'),
) as Record<ServiceName, string[]>;

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * Whether the process `pid` is the one listening on 127.0.0.1:`port`. `freePort` only finds a port
 * that was free a moment ago: a server of another suite started meanwhile may take it, and answer the
 * readiness probe while the service meant for it exits on EADDRINUSE (a whole e2e suite then talked
 * to another suite's planner and got 404s). Read from /proc; true where there is none to read.
 */
export function listensOn(pid: number, port: number): boolean {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return true;
  }
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set(
    table
      .split('\n')
      .map((line) => line.trim().split(/\s+/))
      .filter((f) => f[1] === local && f[3] === '0A')
      .map((f) => `socket:[${f[9]}]`),
  );
  if (!inodes.size) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`));
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

function bindsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * The first of `n` consecutive free ports, below Linux's ephemeral range (32768 up), so no outgoing
 * connection of a parallel test can take one of them between this check and the bind (`npm start`
 * gives the gateway PORT and the other services the next four: a busy CI run once lost one of those).
 */
export async function freePortBlock(n: number): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const first = 20_000 + Math.floor(Math.random() * (32_000 - 20_000 - n));
    let all = true;
    for (let i = 0; i < n && all; i++) all = await bindsFree(first + i);
    if (all) return first;
  }
  throw new Error(`no ${n} consecutive free ports between 20000 and 32000`);
}

/** A replica's key in a stack: `executor` for the first, `executor#2` for the second, and so on. */
export type ReplicaId = ServiceName | `${ServiceName}#${number}`;

export interface ServiceProcess {
  readonly name: ServiceName;
  /** `executor` for the first replica of a service, `executor#2` for the second, … */
  readonly id: ReplicaId;
  readonly port: number;
  readonly url: string;
  /** Where its `/metrics` is served: `url`, or for the gateway a port of its own. */
  readonly metricsUrl: string;
  readonly child: ChildProcess;
  output(): string;
}

/** How many replicas of each service a stack starts: one number for all, or per service (1 if unsaid). */
export type Replicas = number | Partial<Record<ServiceName, number>>;

/**
 * Replicas of every service when a suite does not say: E2E_REPLICAS=2 runs any e2e suite on two of
 * everything (`E2E_REPLICAS=2 npx jest test/e2e/runs.e2e-spec.ts`).
 */
function defaultReplicas(): number {
  const n = Number(process.env['E2E_REPLICAS'] ?? '1');
  if (!Number.isInteger(n) || n < 1) throw new Error(`E2E_REPLICAS must be a whole number ≥ 1, got ${n}`);
  return n;
}

/** How long a service may take to answer /readyz before its start counts as failed. */
const READY_TIMEOUT_MS = 300_000;

/**
 * Every service process a stack of this test file started and did not stop yet. A stack whose start
 * outlived a jest hook's timeout is held by nobody (the suite's `stack` is still undefined), so the
 * e2e setup (tools/jest/stop-leftovers.js) stops these after each file, and an exiting worker kills them.
 */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** Stops every service process still running from a stack of this test file; answers how many. */
export async function stopLeftoverServices(): Promise<number> {
  const left = [...live];
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  live.clear();
  return left.length;
}

function replicaId(name: ServiceName, replica: number): ReplicaId {
  return replica === 1 ? name : `${name}#${replica}`;
}

/**
 * The five services as separate OS processes, built from dist/ (npm test builds first); any of them as
 * several replicas, each its own process on its own port, sharing the database, NATS prefix and Redis.
 */
export class Stack {
  /** Every replica by its id (`gateway`, `gateway#2`, …), in start order. */
  readonly services = new Map<ReplicaId, ServiceProcess>();
  private readonly claimed = new Set<ReplicaId>();

  readonly env: Record<string, string>;
  /** Uploads and market files of this stack only (FILES_DIR, MARKET_DIR unless the test sets them). */
  private readonly scratch = mkdtempSync(join(tmpdir(), 'sy-stack-'));

  private constructor(env: Record<string, string>) {
    this.env = { FILES_DIR: join(this.scratch, 'files'), MARKET_DIR: join(this.scratch, 'market'), ...env };
  }

  static async start(
    env: Record<string, string>,
    only: readonly ServiceName[] = SERVICE_NAMES,
    replicas: Replicas = defaultReplicas(),
  ): Promise<Stack> {
    const stack = new Stack(env);
    const count = (s: ServiceName) => (typeof replicas === 'number' ? replicas : (replicas[s] ?? 1));
    const started = await Promise.allSettled(
      only.flatMap((s) => Array.from({ length: count(s) }, () => stack.startService(s))),
    );
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Nobody will hold this stack to stop it: the services that did start would run on (and load
      // the machine for every later suite) if they were not stopped here.
      await stack.stop();
      throw failed.reason;
    }
    return stack;
  }

  /** The replicas of `name` that run, first replica first. */
  replicas(name: ServiceName): ServiceProcess[] {
    return [...this.services.values()].filter((p) => p.name === name);
  }

  get gatewayUrl(): string {
    const gw = this.replicas('gateway')[0];
    if (!gw) throw new Error('gateway is not part of this stack');
    return gw.url;
  }

  /** Every gateway replica's address. */
  get gatewayUrls(): string[] {
    return this.replicas('gateway').map((p) => p.url);
  }

  /**
   * Starts one more replica of `name` (the lowest free replica number): `executor`, then `executor#2`.
   * `env` adds to (or overrides) the stack's environment for this replica only.
   */
  async startService(name: ServiceName, env: Record<string, string> = {}): Promise<ServiceProcess> {
    // A port taken between `freePort` and the service's bind (see `listensOn`): start on new ones.
    for (let attempt = 1; ; attempt++) {
      const started = await this.startOnce(name, env);
      if (started !== 'port taken') return started;
      if (attempt === 3) throw new Error(`${name}: its port was taken by another process three times`);
    }
  }

  private async startOnce(
    name: ServiceName,
    env: Record<string, string>,
  ): Promise<ServiceProcess | 'port taken'> {
    const main = join(ROOT, 'dist', 'apps', name, 'src', 'main.js');
    if (!existsSync(main))
      throw new Error(`${main} is missing: run npm run build (npm test does it for you)`);
    let replica = 1;
    while (this.services.has(replicaId(name, replica)) || this.claimed.has(replicaId(name, replica)))
      replica++;
    const id = replicaId(name, replica);
    // Claimed before the first await, so replicas started together get distinct ids.
    this.claimed.add(id);
    const [port, metricsPort] = await Promise.all([
      freePort(),
      name === 'gateway' ? freePort() : undefined,
    ]).finally(() => this.claimed.delete(id));
    let out = '';
    // SWITCHYARD_CPU_PROF=<dir>: each service writes a V8 CPU profile there when it exits (see
    // docs/development.md, "Profiling a benchmark"; `node tools/cpu-profile.js <dir>` sums it up).
    const profDir = process.env['SWITCHYARD_CPU_PROF'];
    const nodeArgs = profDir ? ['--cpu-prof', `--cpu-prof-dir=${join(profDir, id.replace('#', '-'))}`] : [];
    const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS[name], ...nodeArgs, main], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        // Services check every RPC reply against its contract (see BusOptions.validateReplies).
        NODE_ENV: 'test',
        // Bounds that only guard a hang (a suite may set its own): on a busy machine a health check
        // slower than the 1 s default is no sign of a dead service, nor a 10 s answer of a lost request.
        HEALTH_TIMEOUT_MS: '30000',
        RPC_TIMEOUT_MS: '60000',
        ...this.env,
        ...env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort ?? port),
        HOST: '127.0.0.1',
      },
      // The IPC channel is only a lifeline: a service closes when it disconnects (this process died,
      // even by SIGKILL; see runService).
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.channel?.unref();
    live.add(child);
    child.once('exit', () => live.delete(child));
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const proc: ServiceProcess = {
      name,
      id,
      port,
      url: `http://127.0.0.1:${port}`,
      metricsUrl: `http://127.0.0.1:${metricsPort ?? port}`,
      child,
      output: () => out,
    };
    this.services.set(id, proc);
    const outcome = await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) {
          if (out.includes('EADDRINUSE')) return 'port taken' as const;
          throw new Error(`${id} exited with ${child.exitCode ?? child.signalCode}: ${out.slice(-2000)}`);
        }
        const res = await fetch(`${proc.url}/readyz`).catch(() => undefined);
        return (
          res?.status === 200 && child.pid !== undefined && listensOn(child.pid, port) && ('ready' as const)
        );
      },
      // Only a guard against a service that never comes up: on a loaded machine start-up (and the
      // migrations of a fresh database) can take far longer than on a quiet one.
      READY_TIMEOUT_MS,
      100,
    ).catch((err: Error) => {
      throw new Error(`${id} did not become ready: ${err.message}\n${out.slice(-2000)}`);
    });
    if (outcome === 'port taken') {
      this.services.delete(id);
      return outcome;
    }
    return proc;
  }

  /**
   * Stops one replica (`executor` is the first, `executor#2` the second) with `signal` and waits for
   * its exit; resolves with the exit code (null when a signal ended it).
   */
  async stopService(id: ReplicaId, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const proc = this.services.get(id);
    if (!proc) return null;
    this.services.delete(id);
    if (proc.child.exitCode !== null || proc.child.signalCode !== null) return proc.child.exitCode;
    const exited = new Promise<number | null>((resolve) => proc.child.once('exit', (code) => resolve(code)));
    proc.child.kill(signal);
    return exited;
  }

  /**
   * Stops every replica of `name` with `signal` and starts as many again: what a test of "the
   * executor died" means whatever the replica count (the run may be on any of them).
   */
  async restartAll(name: ServiceName, signal: NodeJS.Signals = 'SIGTERM'): Promise<Array<number | null>> {
    const ids = this.replicas(name).map((p) => p.id);
    const codes = await Promise.all(ids.map((id) => this.stopService(id, signal)));
    await Promise.all(ids.map(() => this.startService(name)));
    return codes;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.services.keys()].map((s) => this.stopService(s)));
    rmSync(this.scratch, { recursive: true, force: true });
  }
}
