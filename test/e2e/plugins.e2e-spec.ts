import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import {
  api,
  buildFixturePlugin,
  createTestDatabase,
  fixtureManifest,
  Stack,
  uniquePrefix,
  type TestDatabase,
} from '@switchyard/testing';

/** The plugin routes through the gateway: admin only, uploads, the catalog everyone sees. */
describe('plugins through the gateway', () => {
  let db: TestDatabase;
  let stack: Stack;
  let user: string;
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sy-plug-e2e-')));
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  let tgz: Buffer;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  /** Raw bytes (the `api` helper sends JSON). */
  const upload = (token: string, bytes: Buffer, type = 'application/gzip') =>
    fetch(`${stack.gatewayUrl}/api/plugins/upload`, {
      method: 'POST',
      headers: { 'x-switchyard-token': token, 'content-type': type },
      body: bytes,
    }).then(async (r) => ({ status: r.status, json: (await r.json()) as Record<string, unknown> }));

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('plug'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
        WORKSPACE_DIR: join(root, 'workspace'),
        MCP_HANDSHAKE_TIMEOUT_MS: '15000',
        LOG_LEVEL: 'warn',
      },
      ['gateway', 'tool-registry'],
    );
    const created = await call('POST', '/api/tokens', admin, { owner: 'ann' });
    user = created.json['token'] as string;
    const dir = await buildFixturePlugin(join(root, 'fixture'), join(root, 'cache'));
    await tar.c({ gzip: true, file: join(root, 'fixture.tgz'), cwd: dir }, ['.']);
    tgz = readFileSync(join(root, 'fixture.tgz'));
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
    rmSync(root, { recursive: true, force: true });
  });

  it('answers 403 to a non-admin on every plugin route', async () => {
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/api/plugins'],
      ['POST', '/api/plugins', { path: join(root, 'fixture') }],
      ['GET', '/api/plugins/fixture-plugin'],
      ['POST', '/api/plugins/fixture-plugin/enable'],
      ['POST', '/api/plugins/fixture-plugin/disable'],
      ['DELETE', '/api/plugins/fixture-plugin'],
      ['PUT', '/api/plugins/fixture-plugin/grants', { network: true }],
      ['PUT', '/api/plugins/fixture-plugin/settings', { values: {} }],
    ];
    for (const [method, path, body] of routes) {
      const r = await call(method, path, user, body);
      expect([path, r.status, r.json['code']]).toEqual([path, 403, 'forbidden']);
    }
    const up = await upload(user, tgz);
    expect([up.status, up.json['code']]).toEqual([403, 'forbidden']);
  });

  it('installs an uploaded .tgz; enabled, its tools are in every caller’s catalog', async () => {
    const up = await upload(admin, tgz);
    expect(up.status).toBe(201);
    expect(up.json).toMatchObject({
      id: 'fixture-plugin',
      enabled: false,
      sandbox: { posture: 'sandboxed' },
    });
    const list = await call('GET', '/api/plugins', admin);
    expect(list.status).toBe(200);
    expect(list.json['sandbox']).toEqual({ posture: 'sandboxed' });
    const enabled = await call('POST', '/api/plugins/fixture-plugin/enable', admin);
    expect(enabled.json['server']).toEqual({ state: 'running', missingTools: ['fixture_missing'] });
    const tools = (await call('GET', '/api/agent/tools', user)).json as unknown as Array<
      Record<string, unknown>
    >;
    const echo = tools.find((t) => t['name'] === 'fixture_echo');
    expect(echo).toMatchObject({
      source: 'plugin',
      outputSchema: { examples: [{ text: 'hi', meta: { n: 1 } }] },
    });
    const r = await call('POST', '/api/agent/tools/invoke', admin, {
      tool: 'fixture_echo',
      arguments: { text: 'through the gateway' },
    });
    expect(r.status).toBe(200);
    expect(r.json['value']).toMatchObject({ text: 'through the gateway', uid: 65534 });
  });

  it('refuses a bad manifest by path (400), an oversize upload (413) and a wrong type', async () => {
    const bad = await buildFixturePlugin(
      join(root, 'bad'),
      join(root, 'cache'),
      fixtureManifest({ id: 'bad-one', tools: { bad_tool: { effect: 'explode' } }, flowNodes: [] }),
    );
    await tar.c({ gzip: true, file: join(root, 'bad.tgz'), cwd: bad }, ['.']);
    const refused = await upload(admin, readFileSync(join(root, 'bad.tgz')));
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'validation_failed' });
    expect(JSON.stringify(refused.json['errors'])).toContain('tools.bad_tool.effect');
    const huge = await upload(admin, Buffer.alloc(50 * 1024 * 1024 + 1));
    expect([huge.status, huge.json['code']]).toEqual([413, 'payload_too_large']);
    const json = await upload(admin, Buffer.from('{}'), 'application/json');
    expect(json.status).toBe(400);
    const list = await call('GET', '/api/plugins', admin);
    expect((list.json['items'] as Array<{ id: string }>).map((p) => p.id)).toEqual(['fixture-plugin']);
  });

  let agentId: number;

  it('gives an agent a plugin’s tools by plugin id, and refuses a plugin that is not installed', async () => {
    const unknown = await call('POST', '/api/agents', user, { name: 'ghostly', pluginIds: ['ghost-plugin'] });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({
      code: 'validation_failed',
      errors: [expect.objectContaining({ path: 'pluginIds.0' })],
    });
    const bad = await call('POST', '/api/agents', user, { name: 'bad', pluginIds: ['../etc'] });
    expect(bad.status).toBe(400);
    const created = await call('POST', '/api/agents', user, {
      name: 'office clerk',
      pluginIds: ['fixture-plugin', 'fixture-plugin'],
    });
    expect(created.status).toBe(201);
    expect(created.json['pluginIds']).toEqual(['fixture-plugin']);
    agentId = created.json['id'] as number;
    const set = await call('GET', `/api/agents/${agentId}/tools`, user);
    expect(set.status).toBe(200);
    expect(set.json['pluginIds']).toEqual(['fixture-plugin']);
    expect((set.json['tools'] as Array<{ name: string }>).map((t) => t.name).sort()).toEqual([
      'fixture_connect',
      'fixture_echo',
      'fixture_read_file',
      'fixture_write_data',
    ]);
    const plain = await call('POST', '/api/agents', user, { name: 'plain' });
    expect((await call('GET', `/api/agents/${plain.json['id'] as number}/tools`, user)).json).toMatchObject({
      tools: [],
      pluginIds: [],
    });
  });

  it('disable removes the tools; the API document and health tell about plugins', async () => {
    await call('POST', '/api/plugins/fixture-plugin/disable', admin);
    expect((await call('GET', `/api/agents/${agentId}/tools`, user)).json).toMatchObject({
      tools: [],
      pluginIds: [],
    });
    const tools = (await call('GET', '/api/agent/tools', user)).json as unknown as Array<
      Record<string, unknown>
    >;
    expect(tools.some((t) => t['source'] === 'plugin')).toBe(false);
    const doc = await api(stack.gatewayUrl, 'GET', '/api/docs/openapi.json');
    const paths = doc.json['paths'] as Record<string, Record<string, Record<string, unknown>>>;
    expect(paths['/api/plugins/upload']?.['post']?.['requestBody']).toMatchObject({
      content: { 'application/gzip': { schema: { type: 'string' } } },
    });
    const health = await api(stack.gatewayUrl, 'GET', '/api/health');
    expect((health.json['features'] as Record<string, unknown>)['pluginSandbox']).toMatchObject({
      status: 'available',
    });
    const gone = await call('DELETE', '/api/plugins/fixture-plugin', admin);
    expect(gone.json).toEqual({ id: 'fixture-plugin', version: '1.0.0' });
  });
});
