import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, sep } from 'node:path';
import { SERVICE_NAMES, type ServiceName } from '@switchyard/contracts';
import { waitFor } from './wait';

// libs/testing/src from sources (jest), dist/libs/testing/src when compiled (benchmarks).
const ROOT = __dirname.includes(`${sep}dist${sep}`)
  ? (__dirname.split(`${sep}dist${sep}`)[0] as string)
  : join(__dirname, '..', '..', '..');

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

export interface ServiceProcess {
  readonly name: ServiceName;
  readonly port: number;
  readonly url: string;
  /** Where its `/metrics` is served: `url`, or for the gateway a port of its own. */
  readonly metricsUrl: string;
  readonly child: ChildProcess;
  output(): string;
}

/** How long a service may take to answer /readyz before its start counts as failed. */
const READY_TIMEOUT_MS = 120_000;

/** The five services as separate OS processes, built from dist/ (npm test builds first). */
export class Stack {
  readonly services = new Map<ServiceName, ServiceProcess>();
  /** Further processes of services already in the stack (startReplica), stopped with it. */
  readonly replicas: ServiceProcess[] = [];

  private constructor(readonly env: Record<string, string>) {}

  static async start(
    env: Record<string, string>,
    only: readonly ServiceName[] = SERVICE_NAMES,
  ): Promise<Stack> {
    const stack = new Stack(env);
    const started = await Promise.allSettled(only.map((s) => stack.startService(s)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Nobody will hold this stack to stop it: the services that did start would run on (and load
      // the machine for every later suite) if they were not stopped here.
      await stack.stop();
      throw failed.reason;
    }
    return stack;
  }

  get gatewayUrl(): string {
    const gw = this.services.get('gateway');
    if (!gw) throw new Error('gateway is not part of this stack');
    return gw.url;
  }

  async startService(name: ServiceName): Promise<ServiceProcess> {
    return this.launch(name, (proc) => this.services.set(name, proc));
  }

  /** One more process of `name` with the same environment (another replica); stopped by stop(). */
  startReplica(name: ServiceName): Promise<ServiceProcess> {
    return this.launch(name, (proc) => this.replicas.push(proc));
  }

  /** Spawns the service, registers it (so stop() stops it even if it never gets ready), waits for /readyz. */
  private async launch(name: ServiceName, register: (proc: ServiceProcess) => void): Promise<ServiceProcess> {
    const main = join(ROOT, 'dist', 'apps', name, 'src', 'main.js');
    if (!existsSync(main))
      throw new Error(`${main} is missing: run npm run build (npm test does it for you)`);
    const port = await freePort();
    const metricsPort = name === 'gateway' ? await freePort() : port;
    let out = '';
    const child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        // Services check every RPC reply against its contract (see BusOptions.validateReplies).
        NODE_ENV: 'test',
        ...this.env,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
        HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
    const proc: ServiceProcess = {
      name,
      port,
      url: `http://127.0.0.1:${port}`,
      metricsUrl: `http://127.0.0.1:${metricsPort}`,
      child,
      output: () => out,
    };
    register(proc);
    await waitFor(
      async () => {
        if (child.exitCode !== null)
          throw new Error(`${name} exited with ${child.exitCode}: ${out.slice(-2000)}`);
        const res = await fetch(`${proc.url}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      // Only a guard against a service that never comes up: on a loaded machine start-up (and the
      // migrations of a fresh database) can take far longer than on a quiet one.
      READY_TIMEOUT_MS,
      100,
    ).catch((err: Error) => {
      throw new Error(`${name} did not become ready: ${err.message}\n${out.slice(-2000)}`);
    });
    return proc;
  }

  /** SIGTERM and wait for the exit; resolves with the exit code. */
  async stopService(name: ServiceName, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const proc = this.services.get(name);
    if (!proc) return null;
    this.services.delete(name);
    if (proc.child.exitCode !== null) return proc.child.exitCode;
    const exited = new Promise<number | null>((resolve) => proc.child.once('exit', (code) => resolve(code)));
    proc.child.kill(signal);
    return exited;
  }

  async stop(): Promise<void> {
    const replicas = this.replicas.splice(0).map(async (proc) => {
      if (proc.child.exitCode !== null) return;
      const exited = new Promise((resolve) => proc.child.once('exit', resolve));
      proc.child.kill('SIGTERM');
      await exited;
    });
    await Promise.all([...replicas, ...[...this.services.keys()].map((s) => this.stopService(s))]);
  }
}
