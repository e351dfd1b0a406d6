import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { PLUGIN_HOOKS_MAX_BYTES, PluginManifest, type PluginHooksEntry } from '@switchyard/contracts';
import {
  api,
  buildFixturePlugin,
  createTestDatabase,
  fixtureManifest,
  openStream,
  Stack,
  stepFrames,
  uniquePrefix,
  type ApiResponse,
  type SseFrame,
  type SseStream,
  type TestDatabase,
} from '@switchyard/testing';

/**
 * Trusted plugin hooks end to end (real executor, real hook processes): a plugin's hooks never run
 * until an admin trusts them, run as `plugin/<id>/<name>` in the bundle with the plugin's
 * directories in their environment once trusted, and stop with untrust, from the next call on.
 */
describe('plugin hooks and trust end to end', () => {
  let db: TestDatabase;
  let pg: Client;
  let stack: Stack;
  let base: string;
  let pluginsDir: string;
  let alice: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  const streams: SseStream[] = [];

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const wait = (id: string) => ({ id, tool: 'wait', arguments: { ms: 0, value: id } });

  /**
   * A real bundle on disk (the fixture server, naming none of its tools, so plugins never collide)
   * with `hooks/hooks.json` (text as given), installed as an enabled plugin row.
   */
  const install = async (id: string, hooks: unknown, opts: { enabled?: boolean } = {}): Promise<string> => {
    const dir = join(base, 'bundles', id);
    const manifest = PluginManifest.parse(fixtureManifest({ id, tools: {}, flowNodes: [] }));
    await buildFixturePlugin(dir, join(base, 'cache'), manifest);
    mkdirSync(join(dir, 'hooks'), { recursive: true });
    writeFileSync(
      join(dir, 'hooks', 'hooks.json'),
      typeof hooks === 'string' ? hooks : JSON.stringify(hooks),
    );
    await pg.query(
      `INSERT INTO plugin (id, version, name, manifest, install_dir, enabled, updated_at)
       VALUES ($1, '1.0.0', $2, $3::jsonb, $4, $5, now())`,
      [id, `Plugin ${id}`, JSON.stringify(manifest), dir, opts.enabled ?? true],
    );
    return dir;
  };

  const run = async (token = alice) => {
    const res = await call('POST', '/api/agent/run', token, {
      config: { planApproval: false, permissionMode: 'full-access' },
      workflow: { steps: [wait('w')] },
    });
    if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
    const s = await openStream(`${stack.gatewayUrl}/api/agent/stream?runId=${String(res.json['runId'])}`, {
      'x-switchyard-token': token,
    });
    streams.push(s);
    const end = await Promise.race([s.next('complete'), s.next('error')]);
    return { frames: s.frames, end: end.event };
  };
  const denial = (frames: readonly SseFrame[]) => {
    const failed = stepFrames(frames, 'step_failed', 'w')[0]?.data.data;
    return failed && !failed.cancelled ? failed.permission : undefined;
  };

  /** Writes where it ran and what it was told into the plugin's data dir, then denies the call. */
  const guardHooks = {
    description: 'a guard in the grouped (Claude Code) shape',
    hooks: {
      PreToolUse: [
        {
          matcher: 'wait|sleep_*',
          hooks: [
            {
              type: 'command',
              command:
                'printf "%s\\n%s\\n%s\\n" "$PWD" "$SWITCHYARD_PLUGIN_ROOT" "$SWITCHYARD_PLUGIN_DATA" > "$SWITCHYARD_PLUGIN_DATA/marker"; ' +
                'echo "the guard plugin says no" >&2; exit 2',
              timeout: 10,
            },
          ],
        },
      ],
      SessionStart: [{ hooks: [{ type: 'command', command: 'touch /tmp/never' }] }],
    },
  };

  beforeAll(async () => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'sy-plughooks-')));
    pluginsDir = join(base, 'plugins');
    mkdirSync(pluginsDir);
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('plughooks'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        WORKSPACE_DIR: join(base, 'workspace'),
        PLUGINS_DIR: pluginsDir,
      },
      ['gateway', 'executor', 'tool-registry'],
    );
    alice = (await call('POST', '/api/tokens', admin, { owner: 'alice', role: 'user' })).json[
      'token'
    ] as string;
  });

  afterEach(() => streams.splice(0).forEach((s) => s.close()));

  afterAll(async () => {
    await stack?.stop();
    await pg?.end();
    await db?.drop();
    rmSync(base, { recursive: true, force: true });
  });

  it('runs a plugin hook only while trusted: with its name, cwd and environment; untrust stops it on the next call', async () => {
    const root = await install('guard', guardHooks);
    const data = join(pluginsDir, 'data', 'guard');
    const marker = join(data, 'marker');

    // Installed and enabled, not trusted: the hook never runs.
    const before = await run();
    expect(before.end).toBe('complete');
    expect(existsSync(marker)).toBe(false);

    const listed = await call('GET', '/api/plugin-hooks', admin);
    expect(listed.status).toBe(200);
    const entry = (listed.json['items'] as PluginHooksEntry[]).find((i) => i.id === 'guard');
    expect(entry).toMatchObject({
      enabled: true,
      trusted: false,
      active: false,
      issues: [],
      ignored: [{ path: 'hooks.SessionStart', message: expect.stringContaining('unknown event') }],
      hooks: [
        {
          name: 'plugin/guard/PreToolUse-0-0',
          event: 'pre_tool_use',
          matchers: ['Tool(wait)', 'Tool(sleep_*)'],
          timeoutSeconds: 10,
        },
      ],
    });

    // Non-admins can neither see nor trust; an unknown plugin is 404.
    expect((await call('POST', '/api/plugin-hooks/guard/trust', alice)).status).toBe(403);
    expect((await call('GET', '/api/plugin-hooks', alice)).status).toBe(403);
    expect((await call('POST', '/api/plugin-hooks/no-such-plugin/trust', admin)).status).toBe(404);
    expect((await call('POST', '/api/plugin-hooks/no-such-plugin/untrust', admin)).status).toBe(404);
    expect((await run()).end).toBe('complete');
    expect(existsSync(marker)).toBe(false);

    const trusted = await call('POST', '/api/plugin-hooks/guard/trust', admin);
    expect(trusted.status).toBe(200);
    expect(trusted.json).toMatchObject({ trusted: true, active: true, changed: false });
    // The file's SHA-256 is shown, and it is the one the trust binds.
    expect(trusted.json['digest']).toMatch(/^[0-9a-f]{64}$/);
    expect(trusted.json['trustedDigest']).toBe(trusted.json['digest']);

    const denied = await run();
    expect(denied.end).toBe('error');
    expect(denial(denied.frames)).toMatchObject({
      decision: 'deny',
      hook: 'plugin/guard/PreToolUse-0-0',
      reason: 'the guard plugin says no',
    });
    expect(readFileSync(marker, 'utf8').split('\n').slice(0, 3)).toEqual([root, root, data]);
    expect(existsSync('/tmp/never')).toBe(false);

    rmSync(marker);
    const untrusted = await call('POST', '/api/plugin-hooks/guard/untrust', admin);
    expect(untrusted.json).toMatchObject({ trusted: false, active: false, trustedDigest: null });
    expect((await run()).end).toBe('complete');
    expect(existsSync(marker)).toBe(false);
  });

  it('a trusted file that changes runs nothing until trusted again; a disabled plugin runs nothing', async () => {
    const root = await install('drifter', {
      hooks: [
        { name: 'deny-all', event: 'pre_tool_use', type: 'command', command: 'echo drift >&2; exit 2' },
      ],
    });
    expect((await call('POST', '/api/plugin-hooks/drifter/trust', admin)).status).toBe(200);
    expect(denial((await run()).frames)).toMatchObject({ hook: 'plugin/drifter/deny-all', reason: 'drift' });

    writeFileSync(
      join(root, 'hooks', 'hooks.json'),
      JSON.stringify({
        hooks: [
          { name: 'deny-all', event: 'pre_tool_use', type: 'command', command: 'echo swapped >&2; exit 2' },
        ],
      }),
    );
    // Any rules-or-hooks change reloads every replica's copy at once (here: the global rules).
    expect((await call('PUT', '/api/settings/permissions?scope=global', admin, {})).status).toBe(200);
    const listed = (await call('GET', '/api/plugin-hooks', admin)).json['items'] as PluginHooksEntry[];
    const drifted = listed.find((i) => i.id === 'drifter');
    expect(drifted).toMatchObject({ trusted: true, changed: true, active: false });
    expect(drifted?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(drifted?.trustedDigest).not.toBe(drifted?.digest);
    expect((await run()).end).toBe('complete');

    await pg.query(`UPDATE plugin SET enabled = false WHERE id = 'drifter'`);
    expect((await call('POST', '/api/plugin-hooks/drifter/trust', admin)).json).toMatchObject({
      trusted: true,
      enabled: false,
      active: false,
    });
    expect((await run()).end).toBe('complete');
    await pg.query(`UPDATE plugin SET enabled = true WHERE id = 'drifter'`);
    expect((await call('POST', '/api/plugin-hooks/drifter/trust', admin)).status).toBe(200);
    expect(denial((await run()).frames)).toMatchObject({
      hook: 'plugin/drifter/deny-all',
      reason: 'swapped',
    });
    await call('POST', '/api/plugin-hooks/drifter/untrust', admin);
  });

  describe('attacks: a hooks file that cannot be trusted', () => {
    const refused = async (id: string) => {
      const res = await call('POST', `/api/plugin-hooks/${id}/trust`, admin);
      expect(res.status).toBe(400);
      expect(res.json['code']).toBe('validation_failed');
      const row = await pg.query(`SELECT hooks_trusted FROM plugin WHERE id = $1`, [id]);
      expect(row.rows[0].hooks_trusted).toBe(false);
      return res.json['errors'] as Array<{ path: string; message: string }>;
    };

    it('a working directory outside the bundle, by ".." or by a symlink', async () => {
      await install('escape-dots', [
        { name: 'up', event: 'pre_tool_use', type: 'command', command: 'touch x', cwd: '../../etc' },
        { name: 'abs', event: 'pre_tool_use', type: 'command', command: 'touch x', cwd: '/etc' },
      ]);
      const errors = await refused('escape-dots');
      expect(errors).toEqual(
        expect.arrayContaining([
          { path: 'hooks/hooks.json:[0].cwd', message: 'must stay inside the bundle (no "..")' },
          { path: 'hooks/hooks.json:[1].cwd', message: 'must be relative to the bundle' },
        ]),
      );
      const dir = await install('escape-link', [
        { name: 'via-link', event: 'pre_tool_use', type: 'command', command: 'touch x', cwd: 'sub' },
      ]);
      symlinkSync('/etc', join(dir, 'sub'));
      expect(await refused('escape-link')).toEqual([
        { path: 'hooks/hooks.json:via-link.cwd', message: 'leads outside the bundle (through a symlink)' },
      ]);
    });

    it('an oversized file, invalid JSON, a symlinked file (whose content is never echoed) and bad fields', async () => {
      await install('oversized', JSON.stringify({ hooks: [], pad: 'x'.repeat(PLUGIN_HOOKS_MAX_BYTES) }));
      expect((await refused('oversized'))[0]?.message).toContain(`at most ${PLUGIN_HOOKS_MAX_BYTES}`);

      await install('not-json', '{"hooks": {"PreToolUse": [');
      expect(await refused('not-json')).toEqual([{ path: 'hooks/hooks.json', message: 'not valid JSON' }]);

      const dir = await install('linked-file', '{}');
      rmSync(join(dir, 'hooks', 'hooks.json'));
      symlinkSync('/etc/passwd', join(dir, 'hooks', 'hooks.json'));
      const res = await call('POST', '/api/plugin-hooks/linked-file/trust', admin);
      expect(res.status).toBe(400);
      expect(res.text).not.toContain('root:');

      await install('bad-fields', {
        hooks: {
          PreToolUse: [
            { matcher: 'Write.*', hooks: [{ type: 'command', command: 'true' }] },
            { matcher: '', hooks: [{ type: 'shell', command: 'true', timeout: 9000, extra: 1 }] },
          ],
        },
      });
      const errors = await refused('bad-fields');
      expect(errors.map((e) => e.path).sort()).toEqual([
        'hooks/hooks.json:hooks.PreToolUse[0].matcher',
        'hooks/hooks.json:hooks.PreToolUse[1].hooks[0].extra',
        'hooks/hooks.json:hooks.PreToolUse[1].hooks[0].timeout',
        'hooks/hooks.json:hooks.PreToolUse[1].hooks[0].type',
      ]);
    });

    it('a plugin without hooks cannot be trusted (409), and is not listed', async () => {
      const dir = await install('no-hooks', '{}');
      rmSync(join(dir, 'hooks'), { recursive: true });
      expect((await call('POST', '/api/plugin-hooks/no-hooks/trust', admin)).status).toBe(409);
      const listed = (await call('GET', '/api/plugin-hooks', admin)).json['items'] as PluginHooksEntry[];
      expect(listed.find((i) => i.id === 'no-hooks')).toBeUndefined();
    });
  });
});
