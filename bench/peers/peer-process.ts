import { fork, type ChildProcess } from 'node:child_process';
import { z } from 'zod';

/*
 * A peer engine runs in a child process of the benchmark (its library never loads into the bench
 * itself), against a database of its own, and times its own passes: what it reports is the engine
 * in process, with no IPC in the measured span. The parent asks for one pass at a time, so the
 * peers' rounds interleave with Switchyard's in the same window.
 */

/** One measured pass: `runs` workflows of `steps` no-op steps, back to back or all at once. */
export const PeerPass = z.object({
  id: z.number().int(),
  shape: z.enum(['chain', 'fan']),
  steps: z.number().int().positive(),
  runs: z.number().int().positive(),
  together: z.boolean(),
});
export type PeerPass = z.infer<typeof PeerPass>;
export type PassSize = Omit<PeerPass, 'id'>;

const PeerRequest = z.union([PeerPass, z.object({ stop: z.literal(true) })]);

const PeerReply = z.union([
  z.object({ ready: z.literal(true) }),
  z.object({ id: z.number().int(), ms: z.number() }),
  z.object({ id: z.number().int(), error: z.string() }),
]);
type PeerReply = z.infer<typeof PeerReply>;

/** What a peer's child implements: one workflow of each shape, durable as its settings make it. */
export interface PeerEngine {
  /** `steps` no-op steps, each after the previous one. */
  chain(steps: number): Promise<void>;
  /** `steps` no-op steps at once. */
  fan(steps: number): Promise<void>;
  close(): Promise<void>;
}

/** Child side: opens the engine on the database given as the first argument and serves passes. */
export function servePeer(open: (databaseUrl: string) => Promise<PeerEngine>): void {
  const databaseUrl = process.argv[2];
  const send = (reply: PeerReply) => process.send?.(reply);
  if (!databaseUrl || !process.send) {
    process.stderr.write('a peer runs as a forked child of the benchmark, given its database URL\n');
    process.exit(64);
  }
  void open(databaseUrl).then(
    (engine) => {
      process.on('message', (raw: unknown) => {
        const req = PeerRequest.parse(raw);
        if ('stop' in req) {
          void engine.close().finally(() => process.exit(0));
          return;
        }
        const one = () => (req.shape === 'chain' ? engine.chain(req.steps) : engine.fan(req.steps));
        const t0 = performance.now();
        const work = req.together
          ? Promise.all(Array.from({ length: req.runs }, one)).then(() => undefined)
          : Array.from({ length: req.runs }).reduce<Promise<void>>(
              (prev) => prev.then(one),
              Promise.resolve(),
            );
        work.then(
          () => send({ id: req.id, ms: performance.now() - t0 }),
          (err: unknown) =>
            send({ id: req.id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
        );
      });
      send({ ready: true });
    },
    (err: unknown) => {
      process.stderr.write(`peer failed to open: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}

/** Parent side: the peer's child process, asked for one timed pass at a time. */
export class PeerProcess {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (ms: number) => void; reject: (e: Error) => void }>();
  private exited: Error | undefined;

  private constructor(private readonly child: ChildProcess) {
    child.on('message', (raw: unknown) => {
      const reply = PeerReply.parse(raw);
      if ('ready' in reply) return;
      const waiter = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if ('error' in reply) waiter?.reject(new Error(reply.error));
      else waiter?.resolve(reply.ms);
    });
    child.on('exit', (code, signal) => {
      this.exited = new Error(`peer process exited (${signal ?? code})`);
      for (const w of this.pending.values()) w.reject(this.exited);
      this.pending.clear();
    });
  }

  /** Forks `script` (a compiled peer module) on `databaseUrl` and waits until its engine is open. */
  static async start(script: string, databaseUrl: string): Promise<PeerProcess> {
    const child = fork(script, [databaseUrl], {
      env: { PATH: process.env['PATH'] ?? '' },
      // Libraries' deprecation notices (pg's, via DBOS) would interleave with the bench's output.
      execArgv: ['--no-deprecation'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    await new Promise<void>((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`peer ${script} exited (${code}) before it was ready`));
      const onReady = (raw: unknown) => {
        if (!('ready' in PeerReply.parse(raw))) return;
        child.off('exit', onExit);
        child.off('message', onReady);
        resolve();
      };
      child.once('exit', onExit);
      child.on('message', onReady);
    });
    return new PeerProcess(child);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error('the peer process has no pid');
    return this.child.pid;
  }

  /** Milliseconds the pass took, as the peer timed it in its own process. */
  pass(pass: PassSize): Promise<number> {
    if (this.exited) return Promise.reject(this.exited);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...pass, id });
    });
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.send({ stop: true });
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  }
}
