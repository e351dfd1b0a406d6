import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, readdir, symlink, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { Rpc, type Plugin, type ToolResult } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import type { RunningService } from '@switchyard/server-runtime';
import {
  buildFixturePlugin,
  createTestDatabase,
  fixtureManifest,
  testConfig,
  uniquePrefix,
  waitFor,
  type TestDatabase,
} from '@switchyard/testing';
import { PluginRepository } from '@switchyard/server-db-tools';
import { bootstrap } from '../bootstrap';
import { PluginServers } from './plugin-servers';
import { PluginToolsService } from './plugin-tools.service';
import { PluginsUseCases } from './plugins.usecases';

const ADMIN = { correlationId: 'c', ownerId: '0a0a0a0a-0000-4000-8000-00000000000a', role: 'admin' as const };
const USER = { correlationId: 'c', ownerId: '0b0b0b0b-0000-4000-8000-00000000000b', role: 'user' as const };

const textOf = (r: ToolResult) =>
  r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');

/** A real tool registry (real bwrap, real MCP processes) with its own database and plugins dir. */
function registryUnderTest(label: string, env: Record<string, string> = {}) {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `sy-${label}-`)));
  const h = { root, pluginsDir: join(root, 'plugins') } as {
    root: string;
    pluginsDir: string;
    db: TestDatabase;
    service: RunningService;
    bus: Bus;
    env: Record<string, string>;
  };
  beforeAll(async () => {
    h.db = await createTestDatabase();
    const prefix = uniquePrefix('plug');
    h.env = {
      DATABASE_URL: h.db.url,
      NATS_SUBJECT_PREFIX: prefix,
      WORKSPACE_DIR: join(root, 'workspace'),
      PLUGINS_DIR: h.pluginsDir,
      TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
      MCP_HANDSHAKE_TIMEOUT_MS: '15000',
      ...env,
    };
    h.service = await bootstrap(testConfig('tool-registry', h.env));
    h.bus = await Bus.connect({
      servers: ['nats://127.0.0.1:4222'],
      name: 'plugins-test',
      subjectPrefix: prefix,
      defaultTimeoutMs: 30_000,
    });
  });
  afterAll(async () => {
    await h.bus?.close();
    await h.service?.close();
    await h.db?.drop();
    rmSync(root, { recursive: true, force: true });
  });
  return h;
}

/** Errors come back as values to compare. */
async function outcome<T>(p: Promise<T>): Promise<T | { code: string; message: string }> {
  return p.catch((e: { code: string; message: string }) => ({ code: e.code, message: e.message }));
}

describe('plugins in the tool registry (real bubblewrap, real MCP server)', () => {
  const reg = registryUnderTest('plugins');
  const work = join(reg.root, 'work');
  const cache = join(reg.root, 'cache');
  const canaryDir = join(reg.root, 'secret-area');
  const canary = join(canaryDir, 'canary.txt');
  let tcp: Server;
  let port = 0;

  const admin = <C extends (typeof Rpc.registry)[keyof typeof Rpc.registry]>(c: C, body: unknown) =>
    reg.bus.call(c, body as never, { ctx: ADMIN, timeoutMs: 30_000 });
  const invoke = (tool: string, args: Record<string, unknown>) =>
    reg.bus.call(Rpc.registry.invoke, { tool, arguments: args }, { ctx: USER, timeoutMs: 30_000 });
  const catalog = async () =>
    (await reg.bus.call(Rpc.registry.catalog, {}, { ctx: USER, timeoutMs: 30_000 })).tools;
  const install = (path: string) =>
    reg.bus.call(Rpc.registry.pluginInstall, { path, upload: false }, { ctx: ADMIN, timeoutMs: 60_000 });

  beforeAll(async () => {
    await mkdir(canaryDir, { recursive: true });
    writeFileSync(canary, 'the canary sings');
    tcp = createServer((s) => s.end());
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    port = (tcp.address() as { port: number }).port;
    await buildFixturePlugin(join(work, 'fixture'), cache);
  });

  afterAll(async () => {
    await new Promise((r) => tcp?.close(r));
  });

  it('reports the sandbox posture: bubblewrap works on this host', async () => {
    expect(await reg.bus.call(Rpc.registry.pluginPosture, {}, { ctx: USER })).toEqual({
      posture: 'sandboxed',
    });
  });

  it('installs from a folder, disabled, with its manifest metadata; nothing joins the catalog yet', async () => {
    const p = await install(join(work, 'fixture'));
    expect(p).toMatchObject({
      id: 'fixture-plugin',
      version: '1.0.0',
      enabled: false,
      permissions: { network: true, files: false },
      grants: { network: false, files: false },
      hooks: false,
      server: { state: 'disabled' },
      sandbox: { posture: 'sandboxed' },
    });
    expect(p.tools.find((t) => t.name === 'fixture_connect')).toEqual({
      name: 'fixture_connect',
      effect: 'external',
      idempotent: false,
      requiresApproval: true,
      flowNode: false,
    });
    expect(existsSync(join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.0', 'server.cjs'))).toBe(true);
    expect(existsSync(join(reg.pluginsDir, 'data', 'fixture-plugin'))).toBe(true);
    expect((await catalog()).filter((t) => t.source === 'plugin')).toEqual([]);
    expect(await outcome(invoke('fixture_echo', { text: 'x' }))).toMatchObject({ code: 'not_found' });
  });

  it('enables: the server starts, its manifest tools join the catalog with flow-node schemas', async () => {
    const p = await admin(Rpc.registry.pluginEnable, { id: 'fixture-plugin' });
    expect(p.server).toEqual({ state: 'running', missingTools: ['fixture_missing'] });
    // The list reports what runs here without starting anything.
    const listed = (await admin(Rpc.registry.pluginList, {})).items.find(
      (i: Plugin) => i.id === 'fixture-plugin',
    );
    expect(listed?.server).toEqual({ state: 'running', missingTools: ['fixture_missing'] });
    const tools = (await catalog()).filter((t) => t.source === 'plugin');
    expect(tools.map((t) => t.name).sort()).toEqual([
      'fixture_connect',
      'fixture_echo',
      'fixture_read_file',
      'fixture_write_data',
    ]);
    const echo = tools.find((t) => t.name === 'fixture_echo');
    expect(echo).toMatchObject({
      effect: 'read',
      idempotent: true,
      description: expect.stringContaining('Gives its text back.'),
      outputSchema: {
        type: 'object',
        properties: { text: { type: 'string' }, meta: { properties: { n: { type: 'number' } } } },
        examples: [{ text: 'hi', meta: { n: 1 } }],
      },
      inputSchema: { properties: { text: { type: 'string' } } },
    });
    expect(echo?.requiresApproval).toBeUndefined();
    expect(tools.find((t) => t.name === 'fixture_connect')).toMatchObject({
      effect: 'external',
      requiresApproval: true,
    });
  });

  it('runs the server as nobody with only the plugin environment', async () => {
    const r = await invoke('fixture_echo', { text: 'hello' });
    expect(r.isError).toBe(false);
    const value = r.value as { text: string; env: Record<string, string>; uid: number };
    expect(value.text).toBe('hello');
    expect(value.uid).toBe(65534);
    const installDir = join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.0');
    expect(value.env).toEqual({
      PATH: expect.any(String),
      HOME: join(reg.pluginsDir, 'data', 'fixture-plugin'),
      TMPDIR: '/tmp',
      LANG: 'C.UTF-8',
      PWD: installDir,
      SWITCHYARD_PLUGIN_ROOT: installDir,
      SWITCHYARD_PLUGIN_DATA: join(reg.pluginsDir, 'data', 'fixture-plugin'),
      SWITCHYARD_PLUGIN_CONFIG: '{}',
    });
    expect(await outcome(invoke('fixture_echo', { text: 3 }))).toMatchObject({ code: 'validation_failed' });
    expect(await outcome(invoke('fixture_unlisted', {}))).toMatchObject({ code: 'not_found' });
  });

  it('cannot read a canary outside its grants, nor the repository, nor /etc/shadow; can use its data dir', async () => {
    for (const path of [canary, join(__dirname, 'plugins.int-spec.ts'), '/etc/shadow', '/root']) {
      const r = await invoke('fixture_read_file', { path });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/ENOENT/);
    }
    const installDir = join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.0');
    const own = await invoke('fixture_read_file', { path: join(installDir, 'switchyard-plugin.json') });
    expect(own.isError).toBe(false);
    const written = await invoke('fixture_write_data', { name: 'note.txt', text: 'kept' });
    expect(written.isError).toBe(false);
    expect(readdirSync(join(reg.pluginsDir, 'data', 'fixture-plugin'))).toContain('note.txt');
  });

  it('cannot open a socket without the network grant; can once an admin grants it', async () => {
    const refused = await invoke('fixture_connect', { host: '127.0.0.1', port });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^error: (ECONNREFUSED|ENETUNREACH|EACCES)/);
    const granted = await admin(Rpc.registry.pluginGrants, { id: 'fixture-plugin', body: { network: true } });
    expect(granted.grants).toEqual({ network: true, files: false });
    const ok = await invoke('fixture_connect', { host: '127.0.0.1', port });
    expect(textOf(ok)).toBe('connected');
    await admin(Rpc.registry.pluginGrants, { id: 'fixture-plugin', body: { network: false } });
    expect(textOf(await invoke('fixture_connect', { host: '127.0.0.1', port }))).toMatch(/^error: /);
  });

  it('refuses a grant the manifest does not ask for', async () => {
    expect(
      await outcome(admin(Rpc.registry.pluginGrants, { id: 'fixture-plugin', body: { files: true } })),
    ).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('body.files') });
  });

  it('keeps settings encrypted, never returns secrets, and hands them to the server', async () => {
    const p = await admin(Rpc.registry.pluginSettings, {
      id: 'fixture-plugin',
      body: { values: { region: 'eu', apiKey: 'sk-very-secret' } },
    });
    expect(p.settings).toEqual([
      { key: 'region', label: 'Region', secret: false, required: false, set: true, value: 'eu' },
      { key: 'apiKey', label: 'API key', secret: true, required: false, set: true },
    ]);
    expect(JSON.stringify(await admin(Rpc.registry.pluginList, {}))).not.toContain('sk-very-secret');
    const r = await invoke('fixture_echo', { text: 'cfg' });
    const env = (r.value as { env: Record<string, string> }).env;
    expect(JSON.parse(env['SWITCHYARD_PLUGIN_CONFIG'] ?? '')).toEqual({
      region: 'eu',
      apiKey: 'sk-very-secret',
    });
    expect(
      await outcome(
        admin(Rpc.registry.pluginSettings, { id: 'fixture-plugin', body: { values: { nope: 'x' } } }),
      ),
    ).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('nope') });
    const cleared = await admin(Rpc.registry.pluginSettings, {
      id: 'fixture-plugin',
      body: { values: { region: null } },
    });
    expect(cleared.settings.map((s) => [s.key, s.set])).toEqual([
      ['region', false],
      ['apiKey', true],
    ]);
  });

  it('disable takes the tools out and stops the server; enable brings them back', async () => {
    await admin(Rpc.registry.pluginDisable, { id: 'fixture-plugin' });
    expect((await catalog()).some((t) => t.source === 'plugin')).toBe(false);
    expect(await outcome(invoke('fixture_echo', { text: 'x' }))).toMatchObject({ code: 'not_found' });
    await admin(Rpc.registry.pluginEnable, { id: 'fixture-plugin' });
    expect((await catalog()).filter((t) => t.source === 'plugin')).toHaveLength(4);
    expect((await invoke('fixture_echo', { text: 'back' })).isError).toBe(false);
  });

  it('a change on one replica stops the plugin on the others', async () => {
    const other = await bootstrap(testConfig('tool-registry', reg.env));
    try {
      const tools = () => other.app.get(PluginToolsService).descriptors();
      expect((await tools()).map((t) => t.name)).toContain('fixture_echo');
      expect(await other.app.get(PluginServers).running('fixture-plugin')).toBeDefined();
      await reg.service.app.get(PluginsUseCases).disable(ADMIN, 'fixture-plugin');
      await waitFor(async () => (await other.app.get(PluginServers).running('fixture-plugin')) === undefined);
      expect(await tools()).toEqual([]);
      await reg.service.app.get(PluginsUseCases).enable(ADMIN, 'fixture-plugin');
      await waitFor(async () => (await tools()).length === 4);
    } finally {
      await other.close();
    }
  });

  it('upgrades from a .tgz: new version, grants, settings and enabled state kept, old bundle gone', async () => {
    await admin(Rpc.registry.pluginGrants, { id: 'fixture-plugin', body: { network: true } });
    const dir = join(work, 'fixture-101');
    await buildFixturePlugin(dir, cache, fixtureManifest({ version: '1.0.1' }));
    const tgz = join(work, 'fixture-101.tgz');
    await tar.c({ gzip: true, file: tgz, cwd: dir }, ['.']);
    const p = await install(tgz);
    expect(p).toMatchObject({ version: '1.0.1', enabled: true, grants: { network: true } });
    expect(p.settings.find((s) => s.key === 'apiKey')?.set).toBe(true);
    expect(existsSync(join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.0'))).toBe(false);
    expect(existsSync(join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.1'))).toBe(true);
    expect(readdirSync(join(reg.pluginsDir, 'data', 'fixture-plugin'))).toContain('note.txt');
    const r = await invoke('fixture_echo', { text: 'v2' });
    expect((r.value as { env: Record<string, string> }).env['SWITCHYARD_PLUGIN_ROOT']).toBe(
      join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.1'),
    );
  });

  describe('refuses bad bundles by path, installing nothing', () => {
    const bad = async (name: string, manifest: unknown, extra?: (dir: string) => Promise<void>) => {
      const dir = join(work, 'bad', name);
      await buildFixturePlugin(dir, cache, manifest as Record<string, unknown>);
      await extra?.(dir);
      return dir;
    };
    const nothingInstalled = async (id: string) => {
      const list = await admin(Rpc.registry.pluginList, {});
      expect(list.items.map((i: Plugin) => i.id)).not.toContain(id);
      expect((await readdir(join(reg.pluginsDir, 'bundles'))).filter((d) => d.startsWith(id))).toEqual([]);
      expect(await readdir(join(reg.pluginsDir, 'incoming'))).toEqual([]);
    };

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['a bad id', fixtureManifest({ id: 'Bad_Id' }), /id: /],
      ['a missing server', fixtureManifest({ id: 'no-server', server: undefined }), /server: /],
      ['an unknown key', fixtureManifest({ id: 'extra-key', colour: 'red' }), /colour/],
      [
        'a bad tool effect',
        fixtureManifest({ id: 'bad-effect', tools: { bad_effect_tool: { effect: 'explode' } } }),
        /tools\.bad_effect_tool\.effect: /,
      ],
      [
        'a flow node for an unknown tool',
        fixtureManifest({
          id: 'bad-node',
          tools: { bad_node_tool: { effect: 'read' } },
          flowNodes: [{ tool: 'ghost_tool', label: 'Ghost', outputs: {} }],
        }),
        /flowNodes\.0\.tool: ghost_tool is not one of the manifest's tools/,
      ],
      [
        'a reserved tool name',
        fixtureManifest({ id: 'reserved', tools: { mcp__sneaky: { effect: 'read' } }, flowNodes: [] }),
        /tools\.mcp__sneaky: names starting with mcp__ are reserved/,
      ],
    ])('%s', async (_, manifest, message) => {
      const id = String(manifest['id']);
      const r = await outcome(install(await bad(id, manifest)));
      expect(r).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(message) });
      await nothingInstalled(id);
    });

    it('a tool name taken by a built-in or by another plugin (409)', async () => {
      const builtin = fixtureManifest({
        id: 'clash-builtin',
        tools: { read_file: { effect: 'read' } },
        flowNodes: [],
      });
      expect(await outcome(install(await bad('clash-builtin', builtin)))).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('read_file (a built-in tool)'),
      });
      await nothingInstalled('clash-builtin');
      const other = fixtureManifest({
        id: 'clash-plugin',
        tools: { fixture_echo: { effect: 'read' } },
        flowNodes: [],
      });
      expect(await outcome(install(await bad('clash-plugin', other)))).toMatchObject({
        code: 'conflict',
        message: expect.stringContaining('fixture_echo (a tool of plugin fixture-plugin)'),
      });
      await nothingInstalled('clash-plugin');
    });

    it('a missing manifest, and a folder with a link out of the bundle', async () => {
      const empty = join(work, 'bad', 'empty');
      await mkdir(empty, { recursive: true });
      expect(await outcome(install(empty))).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining("switchyard-plugin.json: missing at the bundle's root"),
      });
      const linked = await bad('linked-out', fixtureManifest({ id: 'linked-out' }), (dir) =>
        symlink(canary, join(dir, 'steal.txt')),
      );
      expect(await outcome(install(linked))).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('steal.txt: links outside the bundle'),
      });
      await nothingInstalled('linked-out');
    });

    it('a .tgz with path traversal or a link escaping it', async () => {
      const dir = await bad('traversal', fixtureManifest({ id: 'traversal' }));
      await writeFile(join(work, 'bad', 'evil.txt'), 'evil');
      const traversal = join(work, 'traversal.tgz');
      await tar.c({ gzip: true, file: traversal, cwd: dir, preservePaths: true }, ['.', '../evil.txt']);
      expect(await outcome(install(traversal))).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('../evil.txt: leaves the bundle'),
      });
      await nothingInstalled('traversal');
      expect(existsSync(join(reg.pluginsDir, 'evil.txt'))).toBe(false);

      const linkDir = await bad('tgz-link', fixtureManifest({ id: 'tgz-link' }), (d) =>
        symlink('/etc/passwd', join(d, 'passwd')),
      );
      const linked = join(work, 'tgz-link.tgz');
      await tar.c({ gzip: true, file: linked, cwd: linkDir }, ['.']);
      expect(await outcome(install(linked))).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('passwd: links outside the bundle'),
      });
      await nothingInstalled('tgz-link');
    });

    it('an oversize .tgz (413) and a file that is not one', async () => {
      const huge = join(work, 'huge.tgz');
      await writeFile(huge, '');
      await truncate(huge, 50 * 1024 * 1024 + 1);
      expect(await outcome(install(huge))).toMatchObject({ code: 'payload_too_large' });
      const notGzip = join(work, 'plain.tgz');
      await writeFile(notGzip, 'hello');
      expect(await outcome(install(notGzip))).toMatchObject({
        code: 'validation_failed',
        message: expect.stringContaining('not a gzip-compressed tar archive'),
      });
      expect(await outcome(install(join(work, 'nowhere')))).toMatchObject({ code: 'not_found' });
      // Only staged uploads (in incoming/) are removed after an install, whoever claims otherwise.
      const outside = reg.bus.call(
        Rpc.registry.pluginInstall,
        { path: notGzip, upload: true },
        { ctx: ADMIN },
      );
      expect(await outcome(outside)).toMatchObject({ code: 'validation_failed' });
      expect(existsSync(notGzip)).toBe(true);
    });
  });

  it('launches a keyed server with extra binds: it alone sees them, the default one does not', async () => {
    const servers = reg.service.app.get(PluginServers);
    const row = await reg.service.app.get(PluginRepository).get('fixture-plugin');
    const conn = await servers.connection(row, {
      key: 'run-1',
      binds: [{ hostPath: canaryDir, sandboxPath: '/run-files', writable: false }],
    });
    const read = (path: string) => conn.client.callTool({ name: 'fixture_read_file', arguments: { path } });
    expect(await read('/run-files/canary.txt')).toMatchObject({
      content: [{ type: 'text', text: 'the canary sings' }],
    });
    const denied = await invoke('fixture_read_file', { path: '/run-files/canary.txt' });
    expect(denied.isError).toBe(true);
    await servers.release('fixture-plugin', 'run-1');
    expect(conn.closed()).toBe(true);
    // The same through the invoke path's runner, as a run-scoped call would go.
    const run = await reg.service.app
      .get(PluginToolsService)
      .runner(
        'fixture_read_file',
        { path: '/run-files/canary.txt' },
        { key: 'run-2', binds: [{ hostPath: canaryDir, sandboxPath: '/run-files', writable: false }] },
      );
    expect(textOf(await run!(new AbortController().signal, 10_000))).toBe('the canary sings');
    await servers.release('fixture-plugin', 'run-2');
  });

  it('reports a server that cannot start, and leaves its tools out', async () => {
    const dir = join(work, 'broken');
    await buildFixturePlugin(
      dir,
      cache,
      fixtureManifest({
        id: 'broken-plugin',
        server: { command: 'node', args: ['${root}/no-such-server.cjs'] },
        tools: { broken_tool: { effect: 'read' } },
        flowNodes: [],
      }),
    );
    await install(dir);
    const p = await admin(Rpc.registry.pluginEnable, { id: 'broken-plugin' });
    expect(p.server).toMatchObject({
      state: 'failed',
      error: expect.stringContaining('plugin broken-plugin'),
    });
    expect((await catalog()).some((t) => t.name === 'broken_tool')).toBe(false);
    expect(await outcome(invoke('broken_tool', {}))).toMatchObject({
      code: expect.stringMatching(/tool_failed|unavailable/),
    });
    await admin(Rpc.registry.pluginDelete, { id: 'broken-plugin' });
  });

  it('is for admins only, but the posture is for everyone', async () => {
    for (const [c, body] of [
      [Rpc.registry.pluginList, {}],
      [Rpc.registry.pluginGet, { id: 'fixture-plugin' }],
      [Rpc.registry.pluginInstall, { path: join(work, 'fixture') }],
      [Rpc.registry.pluginEnable, { id: 'fixture-plugin' }],
      [Rpc.registry.pluginDisable, { id: 'fixture-plugin' }],
      [Rpc.registry.pluginDelete, { id: 'fixture-plugin' }],
      [Rpc.registry.pluginGrants, { id: 'fixture-plugin', body: {} }],
      [Rpc.registry.pluginSettings, { id: 'fixture-plugin', body: { values: {} } }],
    ] as const) {
      expect(await outcome(reg.bus.call(c, body as never, { ctx: USER }))).toMatchObject({
        code: 'forbidden',
      });
    }
  });

  it('uninstalls: the server stops, bundle and data are removed, the tools leave', async () => {
    expect(await admin(Rpc.registry.pluginDelete, { id: 'fixture-plugin' })).toEqual({
      id: 'fixture-plugin',
      version: '1.0.1',
    });
    expect((await catalog()).some((t) => t.source === 'plugin')).toBe(false);
    expect(existsSync(join(reg.pluginsDir, 'bundles', 'fixture-plugin@1.0.1'))).toBe(false);
    expect(existsSync(join(reg.pluginsDir, 'data', 'fixture-plugin'))).toBe(false);
    expect(await outcome(admin(Rpc.registry.pluginGet, { id: 'fixture-plugin' }))).toMatchObject({
      code: 'not_found',
    });
  });
});

/** The documented fallback: PLUGIN_SANDBOX=none runs servers as plain children, and says so. */
describe('plugins without a sandbox (PLUGIN_SANDBOX=none)', () => {
  const reg = registryUnderTest('plugins-none', { PLUGIN_SANDBOX: 'none' });
  const canary = join(reg.root, 'canary.txt');

  it('reports unsandboxed with the reason, and the server can then read what the sandbox hides', async () => {
    writeFileSync(canary, 'the canary sings');
    expect(await reg.bus.call(Rpc.registry.pluginPosture, {}, { ctx: USER })).toEqual({
      posture: 'unsandboxed',
      reason: 'the sandbox is switched off (PLUGIN_SANDBOX=none)',
    });
    const dir = await buildFixturePlugin(join(reg.root, 'fixture'), join(reg.root, 'cache'));
    const p = await reg.bus.call(
      Rpc.registry.pluginInstall,
      { path: dir, upload: false },
      { ctx: ADMIN, timeoutMs: 60_000 },
    );
    expect(p.sandbox).toEqual({
      posture: 'unsandboxed',
      reason: expect.stringContaining('PLUGIN_SANDBOX=none'),
    });
    await reg.bus.call(
      Rpc.registry.pluginEnable,
      { id: 'fixture-plugin' },
      { ctx: ADMIN, timeoutMs: 30_000 },
    );
    const r = await reg.bus.call(
      Rpc.registry.invoke,
      { tool: 'fixture_read_file', arguments: { path: canary } },
      { ctx: USER, timeoutMs: 30_000 },
    );
    expect(textOf(r)).toBe('the canary sings');
  });
});
