import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import {
  createTestDatabase,
  freePortBlock,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';

const ROOT = join(__dirname, '..', '..');

/** `npm start` as a newcomer runs it (the script behind it), and `main.ts` refusing bad config. */
describe('npm start', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    // An empty database: `npm start` must migrate it itself.
    db = await createTestDatabase({ migrate: false });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it('migrates, starts all five services, reports them healthy, and stops them all on Ctrl-C', async () => {
    // The gateway's port and the next four (the other services' probes): npm start uses all five.
    const port = await freePortBlock(5);
    const child = spawn(process.execPath, [join(ROOT, 'tools/start.js')], {
      cwd: ROOT,
      env: {
        PATH: process.env['PATH'] ?? '',
        HOME: process.env['HOME'] ?? '/tmp',
        PORT: String(port),
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('start'),
        // Given, so npm start does not write a generated key into the checkout's .env.
        TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => out.includes('all five services are up'), 120_000, 200).catch((err: Error) => {
        throw new Error(`${err.message}\n${out.slice(-3000)}`);
      });
      expect(out).toContain(`http://127.0.0.1:${port}`);
      expect(out).toMatch(/applied migration \d+_identity/);
      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as { services: Record<string, { status: string }> };
      expect(Object.values(body.services).map((s) => s.status)).toEqual(['up', 'up', 'up', 'up', 'up']);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('all services stopped');
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('refuses to start a service with invalid configuration, naming the variable in one line', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'dist/apps/planner/src/main.js')], {
      cwd: ROOT,
      env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: 'mysql://root@localhost/x', LOG_LEVEL: 'loud' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(78);
    const lines = err.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^planner: invalid configuration: /);
    expect(lines[0]).toContain('DATABASE_URL: must be a postgres:// or postgresql:// URL');
    expect(lines[0]).toContain('LOG_LEVEL:');
  });
});
