import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  api,
  createTestDatabase,
  Stack,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');

/** All five services as separate processes (the built dist/), talked to only over HTTP. */
describe('platform end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let env: Record<string, string>;
  const adminToken = `e2e_${randomBytes(24).toString('base64url')}`;

  // Bearer here (the other suites use X-Switchyard-Token), so both header forms run end to end.
  const get = (path: string, token?: string) =>
    api(stack.gatewayUrl, 'GET', path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  beforeAll(async () => {
    db = await createTestDatabase();
    env = {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('e2e'),
      SWITCHYARD_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'warn',
      SHUTDOWN_GRACE_MS: '3000',
      // Longer than any test here may take: a quick 503 is one that did not wait out a request.
      RPC_TIMEOUT_MS: '600000',
    };
    stack = await Stack.start(env);
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('reports every service and dependency up', async () => {
    const h = await get('/api/health');
    expect(h.status).toBe(200);
    expect(h.json['status']).toBe('up');
    expect(h.json['down']).toEqual([]);
    const services = h.json['services'] as Record<string, { status: string; instanceId: string }>;
    expect(Object.keys(services).sort()).toEqual([
      'executor',
      'gateway',
      'planner',
      'scheduler',
      'tool-registry',
    ]);
    for (const s of Object.values(services)) expect(s.status).toBe('up');
    expect(new Set(Object.values(services).map((s) => s.instanceId)).size).toBe(5);
    expect(h.json['features']).toMatchObject({
      commandSandbox: { status: 'available', detail: expect.stringContaining('bubblewrap') },
    });
  });

  it('creates tokens with the CLI that the gateway accepts, with the role given', async () => {
    const { stdout } = await run(
      process.execPath,
      [join(ROOT, 'dist/tools/cli/switchyard.js'), 'token', 'create', '--owner', 'dora', '--role', 'user'],
      {
        cwd: ROOT,
        env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: db.url },
      },
    );
    const token = stdout.trim();
    expect(token).toMatch(/^sy_/);
    const me = await get('/api/me', token);
    expect(me.status).toBe(200);
    expect(me.json['owner']).toMatchObject({ name: 'dora', role: 'user' });
    const catalog = await get('/api/agent/tools', token);
    expect(catalog.status).toBe(200);
    expect((catalog.json as unknown as Array<{ name: string }>).map((t) => t.name)).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'execute_command', 'wait']),
    );
    const forbidden = await get('/api/services/planner', token);
    expect(forbidden.status).toBe(403);
    expect(forbidden.type).toContain('application/problem+json');
    expect((await get('/api/me')).status).toBe(401);
  });

  it("moves files from before owner areas into an owner's area with the CLI", async () => {
    const ws = mkdtempSync(join(tmpdir(), 'sy-adopt-'));
    try {
      writeFileSync(join(ws, 'old-notes.txt'), 'kept');
      mkdirSync(join(ws, 'reports'));
      const cli = (...args: string[]) =>
        run(process.execPath, [join(ROOT, 'dist/tools/cli/switchyard.js'), ...args], {
          cwd: ROOT,
          env: { PATH: process.env['PATH'] ?? '', DATABASE_URL: db.url, WORKSPACE_DIR: ws },
        });
      await cli('token', 'create', '--owner', 'erin');
      const { stdout } = await cli('workspace', 'adopt', '--owner', 'erin');
      expect(stdout).toContain('moved 2 entries');
      const [area] = readdirSync(join(ws, 'owners'));
      expect(readdirSync(ws)).toEqual(['owners']);
      expect(readFileSync(join(ws, 'owners', String(area), 'old-notes.txt'), 'utf8')).toBe('kept');
      await expect(cli('workspace', 'adopt', '--owner', 'nobody-here')).rejects.toMatchObject({ code: 64 });
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('rejects a malformed body with a 400 naming the field', async () => {
    const res = await fetch(`${stack.gatewayUrl}/api/tokens`, {
      method: 'POST',
      headers: { 'x-switchyard-token': adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ owner: 42 }),
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { code: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('validation_failed');
    expect(problem.errors.map((e) => e.path)).toEqual(['body.owner']);
  });

  it('sees a stopped service as down and answers requests for it with 503 without waiting for a reply', async () => {
    const code = await stack.stopService('planner');
    expect(code).toBe(0); // graceful SIGTERM exit
    const health = await waitFor(
      async () => {
        const h = await get('/api/health');
        return h.status === 503 ? h : undefined;
      },
      60_000,
      100,
    );
    expect(health.json['down']).toEqual(['planner']);
    expect((health.json['services'] as Record<string, { status: string }>)['executor']?.status).toBe('up');

    // RPC_TIMEOUT_MS is longer than the test may take: an answer at all means nobody waited for one.
    const r = await get('/api/services/planner', adminToken);
    expect(r.status).toBe(503);
    expect(r.type).toContain('application/problem+json');
    expect(r.json).toMatchObject({ code: 'unavailable', status: 503 });
    expect(r.json['detail']).toContain('planner');

    await stack.startService('planner');
    const back = await waitFor(
      async () => {
        const h = await get('/api/health');
        return h.status === 200 ? h : undefined;
      },
      60_000,
      100,
    );
    expect(back.json['down']).toEqual([]);
  });

  it('stops every service gracefully on SIGTERM', async () => {
    const codes = await Promise.all(
      ['scheduler', 'tool-registry', 'executor'].map((s) => stack.stopService(s as 'scheduler')),
    );
    expect(codes).toEqual([0, 0, 0]);
  });
});
