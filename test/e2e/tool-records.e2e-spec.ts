import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { Rpc } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { api, createTestDatabase, Stack, uniquePrefix, type TestDatabase } from '@switchyard/testing';

/** The seed's tool management API through the gateway, with the real tool-registry process. */
describe('tool records API', () => {
  let db: TestDatabase;
  let stack: Stack;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  let user: string;

  const call = (method: string, path: string, token: string, body?: unknown) =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });

  async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query(query, params)).rows as T[];
    } finally {
      await c.end();
    }
  }

  const local = (extra: Record<string, unknown> = {}) => ({
    name: `files-${randomBytes(3).toString('hex')}`,
    description: 'filesystem server',
    type: 'LOCAL',
    configJson: JSON.stringify({
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'],
      env: { SECRET_TOKEN: 'tok-123' },
    }),
    ...extra,
  });

  beforeAll(async () => {
    db = await createTestDatabase();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('rec'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
        LOG_LEVEL: 'warn',
      },
      ['gateway', 'tool-registry'],
    );
    user = (await call('POST', '/api/tokens', admin, { owner: 'uma' })).json['token'] as string;
  });

  afterAll(async () => {
    await stack?.stop();
    await db?.drop();
  });

  it('has a BUILTIN record for every built-in tool', async () => {
    const r = await call('GET', '/mcp/tool/all?type=BUILTIN', user);
    expect(r.status).toBe(200);
    const names = (r.json['items'] as Array<{ name: string; status: string }>).map((i) => i.name);
    expect(names).toEqual(
      expect.arrayContaining(['read_file', 'write_file', 'execute_command', 'web_fetch', 'wait']),
    );
  });

  it('lets a user read but not change records', async () => {
    expect((await call('GET', '/mcp/tool/list', user)).status).toBe(200);
    expect((await call('GET', '/mcp/tool/options', user)).status).toBe(200);
    expect((await call('POST', '/mcp/tool', user, local())).status).toBe(403);
    expect((await call('PUT', '/mcp/tool', user, { id: 1, description: 'x' })).status).toBe(403);
    expect((await call('PUT', '/mcp/tool/1/status?status=DISABLED', user)).status).toBe(403);
    expect((await call('DELETE', '/mcp/tool/1', user)).status).toBe(403);
    expect((await call('POST', '/mcp/tool/export', user)).status).toBe(403);
    expect(
      (await call('POST', '/api/agent/tools/invoke', user, { tool: 'wait', arguments: { ms: 0 } })).status,
    ).toBe(403);
    expect((await call('POST', '/mcp/tool/1/test', user)).status).toBe(403);
  });

  it('creates a LOCAL record, returns it with its id, and never shows or stores the settings in clear', async () => {
    const body = local();
    const r = await call('POST', '/mcp/tool', admin, body);
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({
      id: expect.any(Number),
      name: body.name,
      type: 'LOCAL',
      status: 'ENABLED',
      hasConfig: true,
    });
    expect(r.text).not.toContain('tok-123');
    const details = await call('GET', `/mcp/tool/${r.json['id'] as number}`, user);
    expect(details.status).toBe(200);
    expect(details.text).not.toContain('npx');
    const [row] = await sql<{ config_enc: string }>('SELECT config_enc FROM mcp_tool WHERE id = $1', [
      r.json['id'],
    ]);
    expect(row?.config_enc).toMatch(/^v1:/);
    expect(row?.config_enc).not.toContain('tok-123');
    expect(row?.config_enc).not.toContain('server-filesystem');
  });

  it('keeps settings on an empty edit and replaces them whole on a new value', async () => {
    const { json } = await call('POST', '/mcp/tool', admin, local());
    const id = json['id'] as number;
    const before = (
      await sql<{ config_enc: string }>('SELECT config_enc FROM mcp_tool WHERE id = $1', [id])
    )[0]?.config_enc;
    const kept = await call('PUT', '/mcp/tool', admin, { id, description: 'renamed', configJson: '' });
    expect(kept.status).toBe(200);
    expect(kept.json).toMatchObject({ description: 'renamed', hasConfig: true });
    expect(
      (await sql<{ config_enc: string }>('SELECT config_enc FROM mcp_tool WHERE id = $1', [id]))[0]
        ?.config_enc,
    ).toBe(before);
    const replaced = await call('PUT', '/mcp/tool', admin, {
      id,
      configJson: JSON.stringify({ command: 'node', args: ['server.js'] }),
    });
    expect(replaced.status).toBe(200);
    expect(
      (await sql<{ config_enc: string }>('SELECT config_enc FROM mcp_tool WHERE id = $1', [id]))[0]
        ?.config_enc,
    ).not.toBe(before);
    const typeOnly = await call('PUT', '/mcp/tool', admin, { id, type: 'REMOTE' });
    expect(typeOnly.status).toBe(400);
    expect(typeOnly.json['errors']).toEqual([
      { path: 'configJson', message: 'required when the type changes' },
    ]);
  });

  it.each([
    ['a BUILTIN record', { type: 'BUILTIN' }, 409, undefined],
    ['configJson that is not JSON', { configJson: '{nope' }, 400, 'configJson'],
    [
      'a LOCAL command with shell syntax',
      { configJson: JSON.stringify({ command: 'npx; rm -rf /' }) },
      400,
      'configJson.command',
    ],
    [
      'an unknown LOCAL setting',
      { configJson: JSON.stringify({ command: 'npx', shell: true }) },
      400,
      'configJson',
    ],
    [
      'a REMOTE server on a private address',
      { type: 'REMOTE', configJson: JSON.stringify({ baseUrl: 'http://169.254.169.254/mcp' }) },
      403,
      undefined,
    ],
    [
      'a REMOTE server on loopback',
      { type: 'REMOTE', configJson: JSON.stringify({ baseUrl: 'http://127.0.0.1:3000/mcp' }) },
      403,
      undefined,
    ],
    [
      'a REMOTE URL that is not http',
      { type: 'REMOTE', configJson: JSON.stringify({ baseUrl: 'file:///etc/passwd' }) },
      400,
      'configJson.baseUrl',
    ],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 400, 'body.name'],
  ])('refuses %s', async (_, override, status, path) => {
    const r = await call('POST', '/mcp/tool', admin, local(override));
    expect(r.status).toBe(status);
    if (path) expect((r.json['errors'] as Array<{ path: string }>).map((e) => e.path)).toContain(path);
  });

  it('refuses a duplicate name with 409', async () => {
    const body = local();
    expect((await call('POST', '/mcp/tool', admin, body)).status).toBe(201);
    const again = await call('POST', '/mcp/tool', admin, body);
    expect(again.status).toBe(409);
    expect(again.json['detail']).toContain(body.name);
  });

  it('accepts a REMOTE server at a public address', async () => {
    const r = await call(
      'POST',
      '/mcp/tool',
      admin,
      local({
        type: 'REMOTE',
        configJson: JSON.stringify({
          baseUrl: 'https://93.184.216.34/mcp',
          headers: { Authorization: 'Bearer abc' },
        }),
      }),
    );
    expect(r.status).toBe(201);
    expect(r.text).not.toContain('Bearer abc');
  });

  it('toggles records but never built-ins', async () => {
    const { json } = await call('POST', '/mcp/tool', admin, local());
    const off = await call('PUT', `/mcp/tool/${json['id'] as number}/status?status=DISABLED`, admin);
    expect(off.json['status']).toBe('DISABLED');
    const options = await call('GET', '/mcp/tool/options', admin);
    expect((options.json['items'] as Array<{ id: number }>).some((o) => o.id === json['id'])).toBe(false);
    const builtin = (await call('GET', '/mcp/tool/all?type=BUILTIN', admin)).json['items'] as Array<{
      id: number;
    }>;
    const r = await call('PUT', `/mcp/tool/${builtin[0]?.id}/status?status=DISABLED`, admin);
    expect(r.status).toBe(409);
    expect((await call('PUT', `/mcp/tool/${json['id'] as number}/status?status=MAYBE`, admin)).status).toBe(
      400,
    );
  });

  it('deletes by comma-separated ids, all or nothing', async () => {
    const a = (await call('POST', '/mcp/tool', admin, local())).json['id'] as number;
    const b = (await call('POST', '/mcp/tool', admin, local())).json['id'] as number;
    const builtinId = (
      (await call('GET', '/mcp/tool/all?type=BUILTIN', admin)).json['items'] as Array<{ id: number }>
    )[0]?.id;
    expect((await call('DELETE', `/mcp/tool/${a},${builtinId}`, admin)).status).toBe(409);
    expect((await call('DELETE', `/mcp/tool/${a},999999`, admin)).status).toBe(404);
    expect((await call('GET', `/mcp/tool/${a}`, admin)).status).toBe(200);
    const r = await call('DELETE', `/mcp/tool/${a},${b}`, admin);
    expect(r.status).toBe(200);
    expect((r.json['deleted'] as number[]).sort()).toEqual([a, b].sort());
    expect((await call('GET', `/mcp/tool/${a}`, admin)).status).toBe(404);
    expect((await call('DELETE', '/mcp/tool/1;DROP', admin)).status).toBe(400);
  });

  it('pages and filters the list', async () => {
    const r = await call('GET', '/mcp/tool/list?type=BUILTIN&pageNum=1&pageSize=3', admin);
    expect(r.json).toMatchObject({ pageNum: 1, pageSize: 3 });
    expect((r.json['items'] as unknown[]).length).toBe(3);
    expect(r.json['total'] as number).toBeGreaterThanOrEqual(8);
    const named = await call('GET', '/mcp/tool/list?name=READ_F', admin);
    expect((named.json['items'] as Array<{ name: string }>).map((i) => i.name)).toEqual(['read_file']);
  });

  it('exports CSV without settings and defuses spreadsheet formulas', async () => {
    await call(
      'POST',
      '/mcp/tool',
      admin,
      local({ name: '=HYPERLINK("http://evil")', description: 'a, "quoted" one' }),
    );
    const r = await call('POST', '/mcp/tool/export', admin);
    expect(r.status).toBe(200);
    expect(r.type).toContain('text/csv');
    const lines = r.text.trim().split('\r\n');
    expect(lines[0]).toBe('id,name,description,type,status,effect,idempotent,hasConfig,createdAt,updatedAt');
    expect(r.text).toContain(`"'=HYPERLINK(""http://evil"")","a, ""quoted"" one",LOCAL`);
    expect(r.text).not.toContain('server-filesystem');
  });

  describe('agents and their tool sets', () => {
    let other: string;
    let readFileId: number;
    let writeFileId: number;
    let disabledId: number;

    beforeAll(async () => {
      other = (await call('POST', '/api/tokens', admin, { owner: 'otto' })).json['token'] as string;
      const builtins = (await call('GET', '/mcp/tool/all?type=BUILTIN', admin)).json['items'] as Array<{
        id: number;
        name: string;
      }>;
      readFileId = builtins.find((b) => b.name === 'read_file')?.id as number;
      writeFileId = builtins.find((b) => b.name === 'write_file')?.id as number;
      disabledId = (await call('POST', '/mcp/tool', admin, local({ status: 'DISABLED' }))).json[
        'id'
      ] as number;
    });

    it('creates an agent, dropping null and duplicate tool ids', async () => {
      const r = await call('POST', '/api/agents', user, {
        name: 'reader',
        systemPrompt: 'You read files.',
        modelSettings: { provider: 'openai', model: 'gpt-test', temperature: 0.2 },
        mcpToolIds: [readFileId, null, readFileId, disabledId, 999999],
      });
      expect(r.status).toBe(201);
      expect(r.json).toMatchObject({
        name: 'reader',
        mcpToolIds: [readFileId, disabledId, 999999],
        modelSettings: { model: 'gpt-test' },
      });
    });

    it('assembles only enabled, existing records into the tool set', async () => {
      const agents = (await call('GET', '/api/agents', user)).json['items'] as Array<{
        id: number;
        name: string;
      }>;
      const id = agents.find((a) => a.name === 'reader')?.id as number;
      const set = await call('GET', `/api/agents/${id}/tools`, user);
      expect(set.status).toBe(200);
      expect(set.json['recordIds']).toEqual([readFileId]);
      expect((set.json['tools'] as Array<{ name: string }>).map((t) => t.name)).toEqual(['read_file']);
      const edited = await call('PUT', `/api/agents/${id}`, user, { mcpToolIds: [writeFileId, readFileId] });
      expect(edited.json['mcpToolIds']).toEqual([writeFileId, readFileId]);
      const again = await call('GET', `/api/agents/${id}/tools`, user);
      expect((again.json['tools'] as Array<{ name: string }>).map((t) => t.name)).toEqual([
        'write_file',
        'read_file',
      ]);
      const empty = await call('PUT', `/api/agents/${id}`, user, { mcpToolIds: [] });
      expect(empty.status).toBe(200);
      expect((await call('GET', `/api/agents/${id}/tools`, user)).json).toEqual({
        tools: [],
        recordIds: [],
        pluginIds: [],
      });
    });

    it("keeps each owner's agents to that owner", async () => {
      const mine = (await call('GET', '/api/agents', user)).json['items'] as Array<{ id: number }>;
      const id = mine[0]?.id as number;
      expect((await call('GET', `/api/agents/${id}`, other)).status).toBe(404);
      expect((await call('PUT', `/api/agents/${id}`, other, { name: 'stolen' })).status).toBe(404);
      expect((await call('DELETE', `/api/agents/${id}`, other)).status).toBe(404);
      expect((await call('GET', `/api/agents/${id}/tools`, other)).status).toBe(404);
      expect(((await call('GET', '/api/agents', other)).json['items'] as unknown[]).length).toBe(0);
      // Names are unique per owner, not globally.
      expect((await call('POST', '/api/agents', other, { name: 'reader' })).status).toBe(201);
      expect((await call('POST', '/api/agents', user, { name: 'reader' })).status).toBe(409);
    });

    it('validates agent bodies', async () => {
      const r = await call('POST', '/api/agents', user, {
        name: '',
        mcpToolIds: ['1'],
        modelSettings: { temperature: 5 },
      });
      expect(r.status).toBe(400);
      expect((r.json['errors'] as Array<{ path: string }>).map((e) => e.path).sort()).toEqual(
        ['body.mcpToolIds.0', 'body.modelSettings.temperature', 'body.name'].sort(),
      );
    });

    it('assembles by record names and all enabled over the registry RPC', async () => {
      const bus = await Bus.connect({
        servers: ['nats://127.0.0.1:4222'],
        name: 'toolset',
        subjectPrefix: stack.env['NATS_SUBJECT_PREFIX'] ?? '',
        defaultTimeoutMs: 10_000,
      });
      try {
        const byName = await bus.call(Rpc.registry.toolSet, {
          recordNames: ['wait', 'read_file', 'no-such-record'],
        });
        expect(byName.tools.map((t) => t.name).sort()).toEqual(['read_file', 'wait']);
        const all = await bus.call(Rpc.registry.toolSet, { allEnabled: true });
        expect(all.tools.map((t) => t.name)).toEqual(
          expect.arrayContaining(['read_file', 'execute_sql_query', 'web_fetch']),
        );
        expect(all.recordIds).not.toContain(disabledId);
        expect((await bus.call(Rpc.registry.toolSet, { recordIds: [] })).tools).toEqual([]);
      } finally {
        await bus.close();
      }
    });
  });
});
