import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  api,
  createTestDatabase,
  openStream,
  Stack,
  uniquePrefix,
  waitFor,
  type ApiResponse,
  stepFrames,
  type SseFrame,
  type SseStream,
  type TestDatabase,
} from '@switchyard/testing';

/**
 * Permission rules and hooks end to end: every tool call of a run passes the executor's gate, with
 * the owner's and the global rules, over HTTP and SSE as a client sees it.
 */
describe('permission rules and hooks end to end', () => {
  let db: TestDatabase;
  let stack: Stack;
  let workspace: string;
  /** Where alice's files really are: her own area of the workspace. */
  let aliceArea: string;
  let hookServer: Server;
  let hookBase: string;
  const hookCalls: Array<{ path: string; body: Record<string, unknown> }> = [];
  /** How the API answered the /deny hook's look-up of the run it was shown a call of. */
  const deniedRunLookups: number[] = [];
  /** The `/slow` hook's requests in flight now, and the most at once. */
  const slowHook = { now: 0, most: 0 };
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  let alice: string;
  let bob: string;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const rules = (token: string, lists: Record<string, string[]>, scope = 'owner') =>
    call('PUT', `/api/settings/permissions?scope=${scope}`, token, {
      allow: [],
      ask: [],
      deny: [],
      ...lists,
    });
  const run = async (steps: unknown[], config: Record<string, unknown> = {}, token = alice) => {
    const res = await call('POST', '/api/agent/run', token, {
      config: { planApproval: false, ...config },
      workflow: { steps },
    });
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${String(res.json['runId'])}`, {
      'x-switchyard-token': token,
    });
    streams.push(s);
    return { runId: res.json['runId'] as string, s };
  };
  const started = (frames: readonly SseFrame[], stepId: string) =>
    stepFrames(frames, 'step_start', stepId)[0]?.data.data;
  /** The step's failure (not a cancellation). */
  const failure = (frames: readonly SseFrame[], stepId: string) => {
    const failed = stepFrames(frames, 'step_failed', stepId)[0]?.data.data;
    return failed && !failed.cancelled ? failed : undefined;
  };
  const write = (id: string, name: string) => ({
    id,
    tool: 'write_file',
    arguments: { filePath: join(workspace, name), content: id },
  });
  const wait = (id: string) => ({ id, tool: 'wait', arguments: { ms: 0, value: id } });

  beforeAll(async () => {
    hookServer = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        hookCalls.push({ path: req.url ?? '', body: JSON.parse(body) as Record<string, unknown> });
        if (req.url === '/slow') {
          slowHook.now++;
          slowHook.most = Math.max(slowHook.most, slowHook.now);
          setTimeout(() => {
            slowHook.now--;
            res.writeHead(204).end();
          }, 30);
        } else if (req.url === '/deny') {
          // A hook may look the run up: it exists by the time its call is shown.
          const runId = String(hookCalls[hookCalls.length - 1]?.body['runId']);
          void call('GET', `/api/agent/runs/${runId}`, alice).then((found) => {
            deniedRunLookups.push(found.status);
            res.writeHead(200).end(JSON.stringify({ decision: 'deny', reason: 'the http hook says no' }));
          });
        } else if (req.url === '/broken') res.writeHead(500).end();
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hookServer.listen(0, '127.0.0.1', r));
    const hookHost = `127.0.0.1:${(hookServer.address() as AddressInfo).port}`;
    hookBase = `http://${hookHost}`;
    db = await createTestDatabase();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-perm-')));
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('perm'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        WORKSPACE_DIR: workspace,
        WEB_FETCH_PRIVATE_HOSTS: hookHost,
      },
      ['gateway', 'executor', 'tool-registry'],
    );
    const token = async (owner: string) =>
      (await call('POST', '/api/tokens', admin, { owner, role: 'user' })).json['token'] as string;
    alice = await token('alice');
    bob = await token('bob');
    const me = await call('GET', '/api/me', alice);
    aliceArea = join(workspace, 'owners', (me.json['owner'] as { id: string }).id);
  });

  afterEach(async () => {
    streams.splice(0).forEach((s) => s.close());
    await rules(alice, {});
    await rules(bob, {});
    await rules(admin, {}, 'global');
    for (const token of [alice, admin]) {
      const hooks = (await call('GET', '/api/settings/hooks', token)).json['items'] as Array<{ id: string }>;
      for (const h of hooks) await call('DELETE', `/api/settings/hooks/${h.id}`, token);
    }
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
    hookServer.closeAllConnections();
    await new Promise((r) => hookServer.close(r));
    rmSync(workspace, { recursive: true, force: true });
  });

  it('reports every bad line with its list, line number and why, and saves nothing', async () => {
    expect((await rules(alice, { allow: ['Tool(wait)'] })).status).toBe(200);
    const bad = await rules(alice, {
      allow: ['Tool(read_file)', 'Bogus(x)', '# a comment', ''],
      deny: ['Command()', 'Effect(sideways)'],
    });
    expect(bad.status).toBe(400);
    const errors = (bad.json['details'] as { errors: Array<{ list: string; line: number }> }).errors;
    expect(errors.map((e) => [e.list, e.line]).sort()).toEqual([
      ['allow', 2],
      ['deny', 1],
      ['deny', 2],
    ]);
    const now = await call('GET', '/api/settings/permissions', alice);
    expect(now.json).toMatchObject({ allow: ['Tool(wait)'], ask: [], deny: [] });
  });

  it('fails a step denied by a rule, with the rule and its reason in the stream', async () => {
    await rules(alice, { deny: ['Tool(write_file)'], allow: ['Tool(write_file)'] });
    const { s } = await run([write('w', 'denied.txt')], { permissionMode: 'full-access' });
    await s.next('error');
    const failed = failure(s.frames, 'w');
    expect(failed?.code).toBe('forbidden');
    expect(String(failed?.error)).toContain('Tool(write_file)');
    expect(failed?.permission).toMatchObject({ decision: 'deny', rule: expect.stringContaining('deny') });
    expect(started(s.frames, 'w')).toBeUndefined();
    expect(existsSync(join(aliceArea, 'denied.txt'))).toBe(false);
  });

  it('pauses at an ask rule, and approval continues', async () => {
    await rules(alice, { ask: ['Tool(wait)'] });
    const { runId, s } = await run([wait('a')], { permissionMode: 'full-access' });
    const asked = await s.next('step_approval_requested');
    expect(asked.data.data.permission).toMatchObject({
      decision: 'ask',
      rule: expect.stringContaining('Tool(wait)'),
    });
    expect((await call('POST', `/api/agent/${runId}/approve`, alice)).status).toBe(200);
    await s.next('complete');
  });

  it('lets a write tool run in ask mode without a gate when an allow rule covers it', async () => {
    await rules(alice, { allow: ['Tool(write_file)'] });
    const { s } = await run([write('w', 'allowed.txt')], { permissionMode: 'ask' });
    await s.next('complete');
    expect(s.frames.some((f) => f.event === 'step_approval_requested')).toBe(false);
    expect(started(s.frames, 'w')?.permission).toMatchObject({ decision: 'allow' });
    expect(existsSync(join(aliceArea, 'allowed.txt'))).toBe(true);
  });

  it('refuses an ask in an unattended run, naming the rule that asked', async () => {
    await rules(alice, { ask: ['Tool(wait)'] });
    const { s } = await run([wait('a')], { permissionMode: 'full-access', unattended: true });
    await s.next('error');
    const failed = failure(s.frames, 'a');
    expect(failed?.code).toBe('forbidden');
    expect(String(failed?.error)).toContain('nobody can answer');
    expect(String(failed?.error)).toContain('Tool(wait)');
  });

  it("never applies another owner's rules", async () => {
    await rules(bob, { deny: ['Tool(wait)', 'Effect(read)'] });
    const { s } = await run([wait('a')]);
    await s.next('complete');
  });

  it('applies global rules on top, which owners cannot loosen or change', async () => {
    expect((await rules(alice, { deny: ['Tool(x)'] }, 'global')).status).toBe(403);
    expect((await rules(admin, { deny: ['Tool(delete_file)'] }, 'global')).status).toBe(200);
    await rules(alice, { allow: ['Tool(delete_file)', 'Effect(write)'] });
    const mine = await call('GET', '/api/settings/permissions', alice);
    expect(mine.json['global']).toMatchObject({ deny: ['Tool(delete_file)'] });
    const verdict = await call('POST', '/api/agent/permissions/evaluate', alice, {
      tool: 'delete_file',
      arguments: { filePath: join(workspace, 'x') },
      permissionMode: 'full-access',
    });
    expect(verdict.json).toMatchObject({ decision: 'deny', rule: expect.stringContaining('global') });
  });

  it('explains decisions through the evaluate endpoint', async () => {
    await rules(alice, { allow: ['Command(git status)'], deny: ['Command(rm:*)'] });
    const ask = (command: string) =>
      call('POST', '/api/agent/permissions/evaluate', alice, {
        tool: 'execute_command',
        arguments: { command },
      });
    expect((await ask('git status')).json).toMatchObject({
      decision: 'allow',
      rule: expect.stringContaining('git status'),
    });
    expect((await ask('git status && rm -rf /')).json).toMatchObject({ decision: 'deny' });
    expect((await ask('git status; curl x | sh')).json['decision']).toBe('ask');
    expect((await ask('git log')).json).toMatchObject({
      decision: 'ask',
      reason: expect.stringContaining('ask'),
    });
    const forMe = (command: string) =>
      call('POST', '/api/agent/permissions/evaluate', alice, {
        tool: 'execute_command',
        arguments: { command },
        permissionMode: 'approve-for-me',
      });
    expect((await forMe('ls -la')).json['decision']).toBe('allow');
    expect((await forMe('git push origin main')).json).toMatchObject({
      decision: 'ask',
      reason: expect.stringContaining('floor'),
    });
    expect((await forMe('echo "unbalanced')).json['decision']).toBe('ask');
    const unknown = await call('POST', '/api/agent/permissions/evaluate', alice, {
      tool: 'nope',
      arguments: {},
    });
    expect(unknown.status).toBe(404);
  });

  it('explains several calls at once, in order, each as the single evaluate would, for the caller only', async () => {
    await rules(alice, { allow: ['Command(git status)'], deny: ['Command(rm:*)'] });
    const calls = [
      { tool: 'execute_command', arguments: { command: 'git status' } },
      { tool: 'execute_command', arguments: { command: 'rm -rf x' } },
      { tool: 'nope', arguments: {} },
      { tool: 'execute_command', arguments: { command: 'git log' } },
    ];
    const many = (token: string, body: unknown) =>
      call('POST', '/api/agent/permissions/evaluate/batch', token, body);
    const batch = await many(alice, { calls, permissionMode: 'ask' });
    expect(batch.status).toBe(200);
    const items = batch.json['items'] as Array<Record<string, unknown>>;
    expect(items).toHaveLength(4);
    expect(items[2]).toEqual({ error: { code: 'not_found', message: 'no tool named nope in your catalog' } });
    for (const i of [0, 1, 3]) {
      const one = await call('POST', '/api/agent/permissions/evaluate', alice, {
        ...calls[i],
        permissionMode: 'ask',
      });
      expect(items[i]).toEqual(one.json);
    }
    expect(items.map((d) => d['decision'])).toEqual(['allow', 'deny', undefined, 'ask']);
    // Bob's answer comes from bob's rules: alice's allow and deny are nowhere in it.
    const bobs = (await many(bob, { calls })).json['items'] as Array<Record<string, unknown>>;
    expect(bobs.map((d) => d['decision'])).toEqual(['ask', 'ask', undefined, 'ask']);
    expect(JSON.stringify(bobs)).not.toContain('(owner)');
    // Refused as a whole, with the path: no calls, more calls than a plan has steps, a bad call.
    const wrong = [
      [{ calls: [] }, 'body.calls'],
      [{ calls: Array.from({ length: 65 }, () => calls[0]) }, 'body.calls'],
      [{ calls: [{ tool: '', arguments: {} }] }, 'body.calls.0.tool'],
      [{ calls: [{ tool: 'wait', arguments: [] }] }, 'body.calls.0.arguments'],
      [{ calls: [{ tool: 'wait', extra: 1 }] }, 'body.calls.0'],
      [{ calls, permissionMode: 'root' }, 'body.permissionMode'],
    ] as const;
    for (const [body, path] of wrong) {
      const res = await many(alice, body);
      expect([JSON.stringify(body).slice(0, 60), res.status]).toEqual([
        JSON.stringify(body).slice(0, 60),
        400,
      ]);
      expect((res.json['errors'] as Array<{ path: string }>).map((e) => e.path)).toContain(path);
    }
    expect((await call('POST', '/api/agent/permissions/evaluate/batch', '', { calls })).status).toBe(401);
  });

  it('asks for floor commands even in full-access, and refuses them in an unattended run', async () => {
    const floor = { id: 'f', tool: 'execute_command', arguments: { command: 'rm -f nothing-here.txt' } };
    const { runId, s } = await run([floor], { permissionMode: 'full-access' });
    const asked = await s.next('step_approval_requested');
    expect(asked.data?.data['permission']).toMatchObject({ decision: 'ask', floor: 'rm' });
    expect((await call('POST', `/api/agent/${runId}/cancel`, alice)).status).toBe(200);
    await s.next('cancelled');

    const unattended = await run([floor], { permissionMode: 'full-access', unattended: true });
    await unattended.s.next('error');
    const failed = failure(unattended.s.frames, 'f');
    expect(failed?.code).toBe('forbidden');
    expect(failed?.permission).toMatchObject({ decision: 'deny', floor: 'rm' });
    expect(String(failed?.error)).toContain('nobody can answer');
  });

  it('does not allow what it cannot see into while command rules are in force', async () => {
    await rules(alice, { deny: ['Command(rm:*)'] });
    const evaluate = (command: string, unattended = false) =>
      call('POST', '/api/agent/permissions/evaluate', alice, {
        tool: 'execute_command',
        arguments: { command },
        permissionMode: 'full-access',
        unattended,
      });
    const python = `python3 -c "__import__('os').system('rm -rf x')"`;
    expect((await evaluate(python)).json).toMatchObject({
      decision: 'ask',
      reason: expect.stringContaining('cannot read (python3 -c)'),
    });
    expect((await evaluate(python, true)).json['decision']).toBe('deny');
    expect((await evaluate("git -c core.pager='rm -rf x' log")).json).toMatchObject({
      decision: 'deny',
      rule: 'deny: Command(rm:*) (owner)',
    });
    expect((await evaluate('python3 script.py')).json['decision']).toBe('allow');
  });

  describe('hooks', () => {
    it('only admins may add command hooks; http hook URLs get the address checks', async () => {
      const cmd = { name: 'gate', event: 'pre_tool_use', type: 'command', command: 'exit 0' };
      expect((await call('POST', '/api/settings/hooks', alice, cmd)).status).toBe(403);
      expect((await call('POST', '/api/settings/hooks', admin, cmd)).status).toBe(201);
      const metadata = {
        name: 'meta',
        event: 'pre_tool_use',
        type: 'http',
        url: 'http://169.254.169.254/latest',
      };
      expect((await call('POST', '/api/settings/hooks', alice, metadata)).status).toBe(403);
      const bad = await call('POST', '/api/settings/hooks', alice, {
        ...metadata,
        url: `${hookBase}/ok`,
        matcher: 'Nope(',
      });
      expect(bad.status).toBe(400);
      expect(
        (
          await call('POST', '/api/settings/hooks', alice, {
            ...metadata,
            url: `${hookBase}/ok`,
            global: true,
          })
        ).status,
      ).toBe(403);
    });

    it('a pre_tool_use command hook exiting 2 denies with its reason; a deny rule still beats a hook allow', async () => {
      const created = await call('POST', '/api/settings/hooks', admin, {
        name: 'no-writes',
        event: 'pre_tool_use',
        matcher: 'Tool(write_file)',
        type: 'command',
        command: 'echo "writes are frozen" >&2; exit 2',
        global: true,
      });
      expect(created.status).toBe(201);
      const { s } = await run([wait('fine'), write('w', 'frozen.txt')], { permissionMode: 'full-access' });
      await s.next('error');
      expect(stepFrames(s.frames, 'step_complete', 'fine')[0]).toBeDefined(); // the matcher left wait alone
      const failed = failure(s.frames, 'w');
      expect(failed?.permission).toMatchObject({
        decision: 'deny',
        hook: 'no-writes',
        reason: 'writes are frozen',
      });
      await call('DELETE', `/api/settings/hooks/${String(created.json['id'])}`, admin);

      await call('POST', '/api/settings/hooks', admin, {
        name: 'allow-all',
        event: 'pre_tool_use',
        type: 'command',
        command: 'echo \'{"decision":"allow"}\'',
        global: true,
      });
      await rules(alice, { deny: ['Tool(wait)'] });
      const second = await run([wait('a')], { permissionMode: 'full-access' });
      await second.s.next('error');
      expect(failure(second.s.frames, 'a')?.permission).toMatchObject({
        decision: 'deny',
        rule: expect.any(String),
      });
    });

    it('an http hook denies; a broken one fails open, or closed when marked so', async () => {
      const add = (body: Record<string, unknown>) =>
        call('POST', '/api/settings/hooks', alice, { event: 'pre_tool_use', type: 'http', ...body });
      const deny = await add({ name: 'http-deny', url: `${hookBase}/deny` });
      expect(deny.status).toBe(201);
      const first = await run([wait('a')], { permissionMode: 'full-access' });
      await first.s.next('error');
      expect(failure(first.s.frames, 'a')?.permission).toMatchObject({
        hook: 'http-deny',
        reason: 'the http hook says no',
      });
      expect(deniedRunLookups).toEqual([200]);
      await call('DELETE', `/api/settings/hooks/${String(deny.json['id'])}`, alice);

      const broken = await add({ name: 'broken', url: `${hookBase}/broken` });
      const open = await run([wait('b')], { permissionMode: 'full-access' });
      await open.s.next('complete');
      await call('PUT', `/api/settings/hooks/${String(broken.json['id'])}`, alice, {
        name: 'broken',
        event: 'pre_tool_use',
        type: 'http',
        url: `${hookBase}/broken`,
        failClosed: true,
      });
      const closed = await run([wait('c')], { permissionMode: 'full-access' });
      await closed.s.next('error');
      expect(String(failure(closed.s.frames, 'c')?.error)).toContain('fail-closed');
    });

    it("a batch evaluate runs the calls' hooks a few at a time, each told it is a dry run", async () => {
      const slow = await call('POST', '/api/settings/hooks', alice, {
        name: 'slow',
        event: 'pre_tool_use',
        type: 'http',
        url: `${hookBase}/slow`,
      });
      expect(slow.status).toBe(201);
      const before = hookCalls.length;
      const calls = Array.from({ length: 20 }, (_, i) => ({ tool: 'wait', arguments: { ms: 0, value: i } }));
      const batch = await call('POST', '/api/agent/permissions/evaluate/batch', alice, {
        calls,
        permissionMode: 'full-access',
      });
      await call('DELETE', `/api/settings/hooks/${String(slow.json['id'])}`, alice);
      expect(batch.status).toBe(200);
      expect((batch.json['items'] as Array<Record<string, unknown>>).map((d) => d['decision'])).toEqual(
        calls.map(() => 'allow'),
      );
      const heard = hookCalls.slice(before).filter((c) => c.path === '/slow');
      expect(heard).toHaveLength(20);
      expect(heard.every((c) => c.body['dryRun'] === true)).toBe(true);
      expect(slowHook.most).toBeGreaterThanOrEqual(1);
      expect(slowHook.most).toBeLessThanOrEqual(6);
    });

    it('post_tool_use and run_complete hooks observe finished calls and runs', async () => {
      await call('POST', '/api/settings/hooks', alice, {
        name: 'post',
        event: 'post_tool_use',
        type: 'http',
        url: `${hookBase}/post`,
      });
      await call('POST', '/api/settings/hooks', alice, {
        name: 'end',
        event: 'run_complete',
        type: 'http',
        url: `${hookBase}/end`,
      });
      hookCalls.splice(0);
      const { runId, s } = await run([wait('observed')], { permissionMode: 'full-access' });
      await s.next('complete');
      await waitFor(async () => hookCalls.length >= 2, 60_000);
      expect(hookCalls.find((c) => c.path === '/post')?.body).toMatchObject({
        event: 'post_tool_use',
        runId,
        stepId: 'observed',
        tool: 'wait',
        result: 'observed',
      });
      expect(hookCalls.find((c) => c.path === '/end')?.body).toMatchObject({ event: 'run_complete', runId });
    });
  });
});
