import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgPool } from '@switchyard/server-db';
import { freePort, type ServiceProcess, type Stack } from './stack';
import { waitFor } from './wait';

/** `npm run chaos` sets CHAOS=full: more load and more rounds; `npm test` runs the short form. */
export const CHAOS_FULL = process.env['CHAOS'] === 'full';

/** The short or the full figure. */
export function chaosScale(short: number, full: number): number {
  return CHAOS_FULL ? full : short;
}

/**
 * A server process of the test's own (nats-server, redis-server) on a port of its own, so a fault
 * test can kill and restart it without touching the machine's daemons that other work uses.
 */
export class OwnServer {
  private child: ChildProcess | undefined;
  private out = '';

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly argv: (port: number) => [string, string[]],
    readonly url: string,
  ) {}

  static async nats(): Promise<OwnServer> {
    const port = await freePort();
    const server = new OwnServer(
      'nats-server',
      port,
      (p) => ['/usr/sbin/nats-server', ['-a', '127.0.0.1', '-p', String(p)]],
      `nats://127.0.0.1:${port}`,
    );
    await server.start();
    return server;
  }

  static async redis(): Promise<OwnServer> {
    const port = await freePort();
    const server = new OwnServer(
      'redis-server',
      port,
      (p) => [
        'redis-server',
        ['--bind', '127.0.0.1', '--port', String(p), '--save', '', '--appendonly', 'no'],
      ],
      `redis://127.0.0.1:${port}`,
    );
    await server.start();
    return server;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  output(): string {
    return this.out;
  }

  /** Starts it (again) on its port and waits until it takes connections. */
  async start(): Promise<void> {
    const [cmd, args] = this.argv(this.port);
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (d: Buffer) => (this.out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (this.out += d.toString()));
    this.child = child;
    await waitFor(async () => {
      if (child.exitCode !== null) throw new Error(`${this.name} exited: ${this.out.slice(-1000)}`);
      return (await connects(this.port)) ? true : undefined;
    }, 30_000);
  }

  /** Kills it with `signal` and waits for the exit: every connection to it drops. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    await exited;
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

function connects(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * A PostgreSQL instance of the test's own (initdb into a temporary directory, pg_ctl on a port of
 * its own), so a fault test can restart it. Undefined when the server binaries are not installed.
 */
export class OwnPostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
  ) {}

  get url(): string {
    return `postgresql://postgres@127.0.0.1:${this.port}/postgres`;
  }

  static async start(): Promise<OwnPostgres | undefined> {
    const root = '/usr/lib/postgresql';
    const version = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
    const bin = version ? join(root, version, 'bin') : '';
    if (!bin || !existsSync(join(bin, 'initdb'))) return undefined;
    const dir = mkdtempSync(join(tmpdir(), 'sy-pg-'));
    if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
    const port = await freePort();
    const pg = new OwnPostgres(port, dir, bin);
    // initdb refuses to run as root: run it as the postgres user when we are root.
    await pg.run('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync']);
    await pg.pgCtl('start');
    return pg;
  }

  private run(tool: string, args: string[]): Promise<void> {
    const asRoot = process.getuid?.() === 0;
    const [cmd, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(this.bin, tool), ...args]]
      : [join(this.bin, tool), args];
    return new Promise((resolve, reject) => {
      let out = '';
      const child = spawn(cmd, argv as string[], { stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
      child.once('exit', (code) =>
        code === 0 ? resolve() : reject(new Error(`${tool} ${args.join(' ')} exited ${code}: ${out}`)),
      );
    });
  }

  private pgCtl(action: 'start' | 'stop'): Promise<void> {
    const args = ['-D', join(this.dir, 'data'), '-w', '-t', '120'];
    if (action === 'start')
      args.push(
        '-o',
        `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
        '-l',
        join(this.dir, 'log'),
      );
    else args.push('-m', 'immediate');
    return this.run('pg_ctl', [action, ...args]);
  }

  /** Stops it at once (every connection drops) and starts it again. */
  async restart(): Promise<void> {
    await this.pgCtl('stop');
    await this.pgCtl('start');
  }

  async down(): Promise<void> {
    await this.pgCtl('stop');
  }

  async up(): Promise<void> {
    await this.pgCtl('start');
  }

  async destroy(): Promise<void> {
    await this.pgCtl('stop').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The replica of a stack whose process has this instance id (`<host>-<pid>-<random>`). */
export function replicaByInstance(stack: Stack, instanceId: string): ServiceProcess | undefined {
  const pid = Number(instanceId.split('-').at(-2));
  return [...stack.services.values()].find((p) => p.child.pid === pid);
}

export interface InvariantInput {
  /** Runs whose start was answered 2xx. */
  startedRuns?: readonly string[];
  /** Tasks whose submit was answered 2xx. */
  acceptedTasks?: readonly string[];
}

/**
 * What must hold in Postgres after any fault, whatever died when: every run ended or held by a live
 * lease; every run and task a client was told about exists; at most one committed result per step
 * attempt; at most one task per schedule occurrence and per webhook event; every failure has a code.
 * Answers the violations, one sentence each (an empty list when all hold).
 */
export async function checkInvariants(databaseUrl: string, input: InvariantInput = {}): Promise<string[]> {
  const pg = createPgPool({ url: databaseUrl, poolSize: 1, applicationName: 'invariants' });
  const found: string[] = [];
  const each = async (sql: string, params: unknown[], say: (row: Record<string, unknown>) => string) => {
    for (const row of (await pg.query(sql, params)).rows as Array<Record<string, unknown>>)
      found.push(say(row));
  };
  try {
    await each(
      `SELECT id, status FROM run
        WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')
          AND (lease_until IS NULL OR lease_until < now())`,
      [],
      (r) => `run ${String(r['id'])} is ${String(r['status'])} with no live lease`,
    );
    if (input.startedRuns?.length)
      await each(
        `SELECT s.id FROM unnest($1::uuid[]) AS s(id) WHERE NOT EXISTS (SELECT 1 FROM run r WHERE r.id = s.id)`,
        [input.startedRuns],
        (r) => `run ${String(r['id'])} was answered 2xx but has no row`,
      );
    if (input.acceptedTasks?.length)
      await each(
        `SELECT s.id FROM unnest($1::uuid[]) AS s(id) WHERE NOT EXISTS (SELECT 1 FROM bg_task t WHERE t.id = s.id)`,
        [input.acceptedTasks],
        (r) => `task ${String(r['id'])} was answered 2xx but has no row`,
      );
    await each(
      `SELECT run_id, data->>'stepId' AS step, data->>'attempt' AS attempt, count(*)::int AS n
         FROM run_event WHERE type = 'step_complete' AND (data->>'attempt')::int > 0
        GROUP BY 1, 2, 3 HAVING count(*) > 1`,
      [],
      (r) =>
        `run ${String(r['run_id'])} committed step ${String(r['step'])} attempt ${String(r['attempt'])} ${String(r['n'])} times`,
    );
    await each(
      `SELECT task_id, count(*)::int AS n FROM schedule_fire WHERE task_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1
       UNION ALL
       SELECT task_id, count(*)::int FROM webhook_delivery WHERE task_id IS NOT NULL GROUP BY 1 HAVING count(*) > 1`,
      [],
      (r) => `task ${String(r['task_id'])} belongs to ${String(r['n'])} occurrences or events`,
    );
    await each(
      `SELECT trigger_id, event_digest, count(DISTINCT task_id)::int AS n FROM webhook_delivery
        WHERE event_digest IS NOT NULL AND task_id IS NOT NULL GROUP BY 1, 2 HAVING count(DISTINCT task_id) > 1`,
      [],
      (r) => `webhook event ${String(r['event_digest'])} started ${String(r['n'])} tasks`,
    );
    await each(
      `SELECT r.id FROM run r WHERE r.status = 'failed' AND NOT EXISTS (
         SELECT 1 FROM run_event e WHERE e.run_id = r.id AND e.type = 'error' AND e.data ? 'code')`,
      [],
      (r) => `run ${String(r['id'])} failed without an error code`,
    );
    await each(
      `SELECT run_id, seq FROM run_event
        WHERE type = 'step_failed' AND NOT (data ? 'code') AND data->>'cancelled' IS DISTINCT FROM 'true'`,
      [],
      // (A step the run's cancel ended is no failure: it says cancelled instead of a code.)
      (r) => `run ${String(r['run_id'])} event ${String(r['seq'])}: a step failed without a code`,
    );
    await each(
      `SELECT id, state FROM bg_task WHERE state IN ('failed', 'interrupted') AND coalesce(error, '') = ''`,
      [],
      (r) => `task ${String(r['id'])} is ${String(r['state'])} without a reason`,
    );
  } finally {
    await pg.end();
  }
  return found;
}
