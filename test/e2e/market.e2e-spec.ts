import { randomBytes } from 'node:crypto';
import { mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import type { MarketEntry, MarketEntryList } from '@switchyard/contracts';
import { SecretBox } from '@switchyard/server-db';
import {
  api,
  createTestDatabase,
  Stack,
  uniquePrefix,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

const weather = {
  $schema: 'https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json',
  name: 'io.github.acme/weather',
  title: 'Weather',
  description: 'Forecasts and alerts',
  version: '1.2.0',
  packages: [
    {
      registryType: 'npm',
      identifier: '@acme/weather-mcp',
      version: '1.2.0',
      transport: { type: 'stdio' },
      packageArguments: [
        { type: 'named', name: '--units', default: 'metric' },
        { type: 'positional', valueHint: 'region', isRequired: false },
      ],
      environmentVariables: [
        { name: 'WEATHER_API_KEY', isRequired: true, isSecret: true },
        { name: 'WEATHER_LANG', default: 'en' },
      ],
    },
  ],
};
const notes = {
  name: 'io.github.acme/notes',
  description: 'Notes in Python',
  version: '0.3.1',
  packages: [
    { registryType: 'pypi', identifier: 'acme-notes', version: '0.3.1', transport: { type: 'stdio' } },
  ],
};
const hosted = (base: string) => ({
  name: 'com.acme/hosted',
  description: 'A hosted server',
  version: '2.0.0',
  remotes: [
    {
      type: 'streamable-http',
      url: `${base}/mcp`,
      headers: [{ name: 'Authorization', isRequired: true, isSecret: true }],
    },
  ],
});
const dotnet = {
  name: 'io.github.acme/dotnet',
  description: 'Only a NuGet package',
  version: '1.0.0',
  packages: [
    { registryType: 'nuget', identifier: 'Acme.Mcp', version: '1.0.0', transport: { type: 'stdio' } },
  ],
};

/**
 * The MCP market end to end: a fixture registry on loopback in the official registry's format
 * (`/v0/servers`), file sources under MARKET_DIR, imports as LOCAL and REMOTE records (checked in
 * the database, decrypted), malformed entries reported by path, and SSRF attempts refused.
 */
describe('MCP market end to end', () => {
  let db: TestDatabase;
  let pg: Client;
  let stack: Stack;
  let registry: Server;
  let base: string;
  let marketDir: string;
  let alice: string;
  const admin = `e2e_${randomBytes(24).toString('base64url')}`;
  const key = randomBytes(32).toString('base64');

  const call = (method: string, path: string, token: string, body?: unknown): Promise<ApiResponse> =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });
  const storedConfig = async (id: number): Promise<unknown> => {
    const { rows } = await pg.query<{ config_enc: string }>('SELECT config_enc FROM mcp_tool WHERE id = $1', [
      id,
    ]);
    return JSON.parse(new SecretBox(key).open(rows[0]?.config_enc ?? ''));
  };

  beforeAll(async () => {
    registry = createServer((req, res) => {
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (req.url === '/v0/servers')
        return json(200, {
          servers: [
            { server: weather, _meta: { 'io.modelcontextprotocol.registry/official': { isLatest: true } } },
            {
              server: { ...weather, version: '1.1.0' },
              _meta: { 'io.modelcontextprotocol.registry/official': { isLatest: false } },
            },
            { server: notes },
            { server: hosted(base) },
            { server: dotnet },
            { server: { name: 'io.github.acme/broken', description: 'no version' } },
            { server: { name: 'no-namespace', version: '1.0.0' } },
            'not an object',
          ],
          metadata: { count: 8 },
        });
      if (req.url === '/metadata-redirect')
        return res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
      if (req.url === '/huge') return json(200, { servers: [], pad: 'x'.repeat(5 * 1024 * 1024) });
      json(404, {});
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(registry.address() as AddressInfo).port}`;
    marketDir = realpathSync(mkdtempSync(join(tmpdir(), 'sy-market-')));
    writeFileSync(join(marketDir, 'notes.json'), JSON.stringify(notes));
    symlinkSync('/etc/passwd', join(marketDir, 'passwd.json'));
    db = await createTestDatabase();
    pg = new Client({ connectionString: db.url });
    await pg.connect();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('market'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        LOG_LEVEL: 'warn',
        SHUTDOWN_GRACE_MS: '3000',
        TOOL_CONFIG_KEY: key,
        MARKET_DIR: marketDir,
        WEB_FETCH_PRIVATE_HOSTS: new URL(base).host,
      },
      ['gateway', 'tool-registry'],
    );
    alice = (await call('POST', '/api/tokens', admin, { owner: 'alice', role: 'user' })).json[
      'token'
    ] as string;
  });

  afterAll(async () => {
    await stack?.stop();
    await pg?.end();
    await db?.drop();
    registry?.closeAllConnections();
    await new Promise((r) => registry?.close(r));
    rmSync(marketDir, { recursive: true, force: true });
  });

  it('is for admins only', async () => {
    expect((await call('GET', '/api/market/sources', alice)).status).toBe(403);
    expect((await call('GET', '/api/market/entries', alice)).status).toBe(403);
    expect(
      (await call('POST', '/api/market/sources', alice, { name: 'x', url: `${base}/v0/servers` })).status,
    ).toBe(403);
    expect((await call('POST', '/api/market/import', alice, { source: 'x', name: 'a/b' })).status).toBe(403);
  });

  it('refuses sources that would reach link-local, other private addresses, files or paths outside MARKET_DIR', async () => {
    const refused = async (body: Record<string, string>, status = 403) => {
      const res = await call('POST', '/api/market/sources', admin, { name: 'bad', ...body });
      expect(res.status).toBe(status);
      return String(res.json['detail']);
    };
    expect(await refused({ url: 'http://169.254.169.254/latest/meta-data/' })).toContain('link-local');
    expect(await refused({ url: 'http://[::ffff:169.254.169.254]/' })).toContain('link-local');
    expect(await refused({ url: 'file:///etc/passwd' })).toContain('only http and https');
    expect(await refused({ url: 'http://127.0.0.1:1/v0/servers' })).toContain('private, loopback');
    expect(await refused({ path: '../../etc/passwd' })).toContain('outside MARKET_DIR');
    expect(await refused({ path: '/etc/passwd' })).toContain('outside MARKET_DIR');
    expect(await refused({ path: 'passwd.json' })).toContain('through a symlink');
    expect(await refused({ url: `${base}/v0/servers`, path: 'notes.json' }, 400)).toContain('exactly one');
    expect((await call('GET', '/api/market/sources', admin)).json['items']).toEqual([]);
  });

  it('lists, searches and inspects entries; malformed ones are reported by path and skipped', async () => {
    const added = await call('POST', '/api/market/sources', admin, {
      name: 'fixture',
      url: `${base}/v0/servers`,
    });
    expect(added.status).toBe(201);
    expect((await call('POST', '/api/market/sources', admin, { name: 'fixture', url: base })).status).toBe(
      409,
    );
    expect(
      (await call('POST', '/api/market/sources', admin, { name: 'files', path: 'notes.json' })).status,
    ).toBe(201);

    const all = (await call('GET', '/api/market/entries?source=fixture', admin)).json as MarketEntryList;
    expect(all.items.map((e: MarketEntry) => [e.name, e.version, e.kinds])).toEqual([
      ['io.github.acme/weather', '1.2.0', ['LOCAL']],
      ['io.github.acme/notes', '0.3.1', ['LOCAL']],
      ['com.acme/hosted', '2.0.0', ['REMOTE']],
      ['io.github.acme/dotnet', '1.0.0', []],
    ]);
    expect(all.problems).toEqual([
      { source: 'fixture', path: 'servers[5].server.version', message: expect.any(String) },
      { source: 'fixture', path: 'servers[6].server.name', message: expect.stringContaining('reverse-DNS') },
      { source: 'fixture', path: 'servers[7]', message: expect.any(String) },
    ]);

    const found = (await call('GET', '/api/market/entries?q=FORECAST', admin)).json as MarketEntryList;
    expect(found.items.map((e) => `${e.source}:${e.name}`)).toEqual(['fixture:io.github.acme/weather']);
    const fromFile = (await call('GET', '/api/market/entries?source=files', admin)).json as MarketEntryList;
    expect(fromFile).toEqual({
      items: [expect.objectContaining({ source: 'files', name: 'io.github.acme/notes' })],
      problems: [],
    });

    const detail = await call(
      'GET',
      `/api/market/entries/fixture/${encodeURIComponent(weather.name)}`,
      admin,
    );
    expect(detail.status).toBe(200);
    expect(detail.json['server']).toEqual(weather);
    expect(
      (await call('GET', `/api/market/entries/fixture/${encodeURIComponent('io.github.acme/broken')}`, admin))
        .status,
    ).toBe(404);
  });

  it('imports a package as an untested LOCAL record and a remote as a REMOTE one, with the right settings', async () => {
    const missing = await call('POST', '/api/market/import', admin, {
      source: 'fixture',
      name: weather.name,
    });
    expect(missing.status).toBe(400);
    expect(missing.json['errors']).toEqual([
      {
        path: 'packages[0].environmentVariables[0]',
        message: 'WEATHER_API_KEY is required: give it in as.env',
      },
    ]);

    const local = await call('POST', '/api/market/import', admin, {
      source: 'fixture',
      name: weather.name,
      as: { env: { WEATHER_API_KEY: 'k-123' } },
    });
    expect(local.status).toBe(201);
    expect(local.json).toMatchObject({
      kind: 'LOCAL',
      record: { name: 'weather', type: 'LOCAL', status: 'ENABLED', tested: false, hasConfig: true },
      config: { env: { WEATHER_API_KEY: '***', WEATHER_LANG: '***' } },
    });
    expect(JSON.stringify(local.json)).not.toContain('k-123');
    const localId = (local.json['record'] as { id: number }).id;
    expect(await storedConfig(localId)).toEqual({
      command: 'npx',
      args: ['-y', '@acme/weather-mcp@1.2.0', '--units', 'metric'],
      env: { WEATHER_API_KEY: 'k-123', WEATHER_LANG: 'en' },
    });
    // Untested: none of its tools is in the catalog.
    const catalog = await call('GET', '/api/agent/tools', admin);
    expect(JSON.stringify(catalog.json)).not.toContain('mcp__weather__');

    const again = await call('POST', '/api/market/import', admin, {
      source: 'fixture',
      name: weather.name,
      as: { env: { WEATHER_API_KEY: 'k' } },
    });
    expect(again.status).toBe(409);

    const py = await call('POST', '/api/market/import', admin, {
      source: 'files',
      name: notes.name,
      as: { name: 'py-notes' },
    });
    expect(py.status).toBe(201);
    expect(await storedConfig((py.json['record'] as { id: number }).id)).toEqual({
      command: 'uvx',
      args: ['acme-notes==0.3.1'],
    });

    const remote = await call('POST', '/api/market/import', admin, {
      source: 'fixture',
      name: 'com.acme/hosted',
      as: { headers: { Authorization: 'Bearer tok' } },
    });
    expect(remote.status).toBe(201);
    expect(remote.json).toMatchObject({
      kind: 'REMOTE',
      record: { name: 'hosted', type: 'REMOTE', tested: false },
    });
    expect(await storedConfig((remote.json['record'] as { id: number }).id)).toEqual({
      baseUrl: `${base}/mcp`,
      headers: { Authorization: 'Bearer tok' },
    });

    const nuget = await call('POST', '/api/market/import', admin, { source: 'fixture', name: dotnet.name });
    expect(nuget.status).toBe(400);
    expect(nuget.json['detail']).toContain('nuget/stdio');
    const undeclared = await call('POST', '/api/market/import', admin, {
      source: 'fixture',
      name: notes.name,
      as: { name: 'n2', env: { SNEAKY: '1' } },
    });
    expect(undeclared.status).toBe(400);
  });

  it('reports a source whose redirect leads to a link-local address, or that is too large, without failing the others', async () => {
    await call('POST', '/api/market/sources', admin, { name: 'redirect', url: `${base}/metadata-redirect` });
    await call('POST', '/api/market/sources', admin, { name: 'huge', url: `${base}/huge` });
    const listed = (await call('GET', '/api/market/entries', admin)).json as MarketEntryList;
    expect(listed.problems).toEqual(
      expect.arrayContaining([
        { source: 'redirect', path: '', message: expect.stringContaining('link-local') },
        { source: 'huge', path: '', message: expect.stringContaining('larger than') },
      ]),
    );
    expect(listed.items.some((e) => e.source === 'fixture')).toBe(true);
    expect((await call('DELETE', '/api/market/sources/redirect', admin)).status).toBe(200);
    expect((await call('DELETE', '/api/market/sources/redirect', admin)).status).toBe(404);
  });
});
