import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import {
  api,
  createTestDatabase,
  OAuthFixture,
  Stack,
  uniquePrefix,
  type ApiResponse,
  type TestDatabase,
} from '@switchyard/testing';

interface OAuthStatus {
  grant: string;
  state: 'not_connected' | 'connected' | 'reconnect';
  reason: string | null;
  connectedBy: string | null;
}

/**
 * OAuth sign-in of a REMOTE record against a local authorization server with an MCP server behind
 * it: Connect, the provider's redirect back to the gateway's callback, tested record, calls, refresh
 * after expiry, revocation held out as "Reconnect", client credentials, and the state's binding.
 */
describe('MCP OAuth: Connect a REMOTE record through the gateway', () => {
  let db: TestDatabase;
  let stack: Stack;
  let fixture: OAuthFixture;
  const admin = `adm_${randomBytes(24).toString('base64url')}`;
  let otherAdmin: string;
  let user: string;
  let recordId: number;

  const call = (method: string, path: string, body?: unknown, token = admin) =>
    api(stack.gatewayUrl, method, path, { token, ...(body !== undefined ? { body } : {}) });

  async function create(name: string, config: unknown): Promise<ApiResponse> {
    return call('POST', '/mcp/tool', { name, type: 'REMOTE', configJson: JSON.stringify(config) });
  }

  async function status(id: number): Promise<OAuthStatus> {
    const r = await call('GET', `/mcp/tool/${id}`);
    expect(r.status).toBe(200);
    return r.json['oauth'] as OAuthStatus;
  }

  /**
   * Connect, answered with the provider's page; the page's redirect (not yet followed) back to us.
   * A grant that still refreshes answers `connected` instead: the tests revoke it first.
   */
  async function startConnect(id: number, token = admin): Promise<{ authorizationUrl: URL; callback: URL }> {
    const r = await call('POST', `/mcp/tool/${id}/connect`, undefined, token);
    expect(r.status).toBe(200);
    expect(r.json).toHaveProperty('authorizationUrl');
    const authorizationUrl = new URL(r.json['authorizationUrl'] as string);
    const page = await fetch(authorizationUrl, { redirect: 'manual' });
    expect(page.status).toBe(302);
    return { authorizationUrl, callback: new URL(page.headers.get('location') as string) };
  }

  const followCallback = (callback: URL, token?: string) =>
    api(stack.gatewayUrl, 'GET', `${callback.pathname}${callback.search}`, token ? { token } : {});

  const invoke = (tool: string, args: Record<string, unknown>) =>
    call('POST', '/api/agent/tools/invoke', { tool, arguments: args });

  const catalogNames = async () =>
    ((await call('GET', '/api/agent/tools')).json as unknown as Array<{ name: string }>).map((t) => t.name);

  beforeAll(async () => {
    fixture = await OAuthFixture.start({ scopes: ['mcp:tools'] });
    db = await createTestDatabase();
    stack = await Stack.start(
      {
        DATABASE_URL: db.url,
        NATS_SUBJECT_PREFIX: uniquePrefix('oauth'),
        SWITCHYARD_ADMIN_TOKEN: admin,
        TOOL_CONFIG_KEY: randomBytes(32).toString('base64'),
        // The fixture is on loopback: allowed by name, as an administrator would allow an intranet host.
        WEB_FETCH_PRIVATE_HOSTS: fixture.host,
        MCP_HANDSHAKE_TIMEOUT_MS: '8000',
        LOG_LEVEL: 'warn',
      },
      ['gateway', 'tool-registry'],
    );
    const token = async (owner: string, role: 'user' | 'admin') => {
      const r = await call('POST', '/api/tokens', { owner, role });
      expect(r.status).toBe(201);
      return r.json['token'] as string;
    };
    otherAdmin = await token('second-admin', 'admin');
    user = await token('plain-user', 'user');
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await fixture?.stop();
    await db?.drop();
  });

  it('takes an oauth section, keeps secrets write-only, and holds the record out until Connect', async () => {
    const r = await create('oauthy', { baseUrl: fixture.mcpUrl, oauth: {} });
    expect(r.status).toBe(201);
    recordId = r.json['id'] as number;
    expect(r.json['oauth']).toMatchObject({ grant: 'authorization_code', state: 'not_connected' });
    const test = await call('POST', `/mcp/tool/${recordId}/test`);
    expect(test.json).toMatchObject({ success: false });
    expect(test.json['message']).toContain('needs Connect');
    // A secret without its client, a bearer header beside OAuth, client credentials without a client: refused.
    for (const oauth of [{ clientSecret: 's' }, { grant: 'client_credentials' }]) {
      const bad = await create(`bad-${Object.keys(oauth)[0]}`, { baseUrl: fixture.mcpUrl, oauth });
      expect(bad.status).toBe(400);
    }
    const both = await create('both', {
      baseUrl: fixture.mcpUrl,
      headers: { Authorization: 'Bearer x' },
      oauth: {},
    });
    expect(both.status).toBe(400);
  });

  it('refuses Connect to a non-admin and to records without OAuth', async () => {
    expect((await call('POST', `/mcp/tool/${recordId}/connect`, undefined, user)).status).toBe(403);
    const plain = await create('plain-remote', { baseUrl: fixture.mcpUrl });
    expect(plain.status).toBe(201);
    const r = await call('POST', `/mcp/tool/${plain.json['id'] as number}/connect`);
    expect(r.status).toBe(409);
    expect(r.json['code']).toBe('conflict');
  });

  it('connects: registers, sends PKCE and the resource, and the callback stores the grant', async () => {
    const { authorizationUrl, callback } = await startConnect(recordId);
    const q = authorizationUrl.searchParams;
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get('resource')).toBe(fixture.mcpUrl);
    expect(q.get('scope')).toBe('mcp:tools');
    expect(q.get('redirect_uri')).toBe(`${stack.gatewayUrl}/api/mcp/oauth/callback`);
    expect(q.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(callback.searchParams.get('code')).toBeTruthy();

    const done = await followCallback(callback);
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ connected: true, id: recordId, name: 'oauthy' });
    const code = fixture.tokenRequests.at(-1);
    expect(code).toMatchObject({
      grantType: 'authorization_code',
      clientAuth: 'client_secret_basic',
      status: 200,
    });
    expect(code?.resource).toBe(fixture.mcpUrl);
    expect(await status(recordId)).toMatchObject({ state: 'connected', reason: null });

    // The same callback again: the state was single use.
    const replay = await followCallback(callback);
    expect(replay.status).toBe(403);
    expect(replay.json['detail']).toContain('already used');
  });

  it('tests like any other record and calls its tools with the token', async () => {
    const test = await call('POST', `/mcp/tool/${recordId}/test`);
    expect(test.json).toMatchObject({ success: true, tools: ['whoami', 'admin_action'] });
    expect(await catalogNames()).toContain('mcp__oauthy__whoami');
    const r = await invoke('mcp__oauthy__whoami', { note: 'first' });
    expect(r.status).toBe(200);
    expect((r.json['content'] as Array<{ text: string }>)[0]?.text).toMatch(
      /^client dyn-[0-9a-f]+ scopes mcp:tools note first$/,
    );
  });

  it('never shows tokens or client secrets in any answer', async () => {
    const listed = await call('GET', '/mcp/tool/list?pageNum=1&pageSize=50');
    const got = await call('GET', `/mcp/tool/${recordId}`);
    const exported = await call('POST', '/mcp/tool/export');
    for (const r of [listed, got, exported]) {
      expect(r.text).not.toMatch(/access_token|refresh_token|client_secret/);
      for (const c of fixture.clients.values())
        if (c.clientSecret) expect(r.text).not.toContain(c.clientSecret);
    }
  });

  it('refreshes an expired access token and the call goes through', async () => {
    const refreshesBefore = fixture.tokenRequests.filter((t) => t.grantType === 'refresh_token').length;
    fixture.expireAccessTokens();
    const r = await invoke('mcp__oauthy__whoami', { note: 'after expiry' });
    expect(r.status).toBe(200);
    expect((r.json['content'] as Array<{ text: string }>)[0]?.text).toContain('note after expiry');
    const refreshes = fixture.tokenRequests.filter((t) => t.grantType === 'refresh_token');
    expect(refreshes.length).toBe(refreshesBefore + 1);
    expect(refreshes.at(-1)).toMatchObject({ status: 200, resource: fixture.mcpUrl });
    expect(await status(recordId)).toMatchObject({ state: 'connected' });
  });

  it('holds a revoked grant out of the catalog with "Reconnect", and Connect brings it back', async () => {
    fixture.revokeAll();
    const r = await invoke('mcp__oauthy__whoami', {});
    expect(r.status).not.toBe(200);
    expect(r.json['detail']).toContain('Reconnect');
    const s = await status(recordId);
    expect(s.state).toBe('reconnect');
    expect(s.reason).toContain('Reconnect');
    expect(await catalogNames()).not.toContain('mcp__oauthy__whoami');
    const again = await invoke('mcp__oauthy__whoami', {});
    expect(again.json['detail']).toContain('needs Reconnect');

    const { callback } = await startConnect(recordId);
    expect((await followCallback(callback)).status).toBe(200);
    expect(await status(recordId)).toMatchObject({ state: 'connected' });
    expect(await catalogNames()).toContain('mcp__oauthy__whoami');
    expect((await invoke('mcp__oauthy__whoami', {})).status).toBe(200);
  });

  it("binds the state to who started: another person's token voids it, a wrong state is refused", async () => {
    // A grant that still works needs no sign-in.
    expect((await call('POST', `/mcp/tool/${recordId}/connect`)).json).toEqual({ connected: true });
    fixture.revokeAll();
    const { callback } = await startConnect(recordId);
    const hijack = await followCallback(callback, otherAdmin);
    expect(hijack.status).toBe(403);
    expect(hijack.json['detail']).toContain('started by someone else');
    // Void now, for the starter too: a leaked state is good for one try.
    expect((await followCallback(callback, admin)).status).toBe(403);

    const wrong = new URL(callback);
    wrong.searchParams.set('state', randomBytes(32).toString('base64url'));
    const w = await followCallback(wrong);
    expect(w.status).toBe(403);
    expect(w.json['code']).toBe('forbidden');

    const missing = await api(stack.gatewayUrl, 'GET', '/api/mcp/oauth/callback');
    expect(missing.status).toBe(400);

    // The starter's own token is accepted, and a provider's refusal is reported, not stored.
    const own = await startConnect(recordId);
    expect((await followCallback(own.callback, admin)).status).toBe(200);
    fixture.revokeAll();
    const denied = await startConnect(recordId);
    const refusal = new URL(denied.callback);
    refusal.searchParams.delete('code');
    refusal.searchParams.set('error', 'access_denied');
    const d = await followCallback(refusal);
    expect(d.status).toBe(403);
    expect(d.json['detail']).toContain('access_denied');
    const after = await followCallback(refusal);
    expect(after.status).toBe(403);
    // Connected again for the tests that follow.
    const last = await startConnect(recordId);
    expect((await followCallback(last.callback)).status).toBe(200);
  });

  it('refuses an expired state, an invalid token, a mixed-up issuer and a record deleted meanwhile', async () => {
    const pg = new Client({ connectionString: db.url });
    await pg.connect();
    try {
      fixture.revokeAll();
      const expired = await startConnect(recordId);
      await pg.query(`UPDATE mcp_oauth_start SET expires_at = now() - interval '1 second'`);
      const e = await followCallback(expired.callback);
      expect(e.status).toBe(403);
      expect(e.json['detail']).toContain('expired');

      const bad = await startConnect(recordId);
      const invalid = await followCallback(bad.callback, 'not-a-real-token');
      expect(invalid.status).toBe(401);
      // Refused before the registry saw it: the state is still good for its owner.
      expect((await followCallback(bad.callback)).status).toBe(200);

      fixture.revokeAll();
      const mixed = await startConnect(recordId);
      const other = new URL(mixed.callback);
      other.searchParams.set('iss', 'https://attacker.example');
      const m = await followCallback(other);
      expect(m.status).toBe(403);
      expect(m.json['detail']).toContain('issuer');

      const gone = await create('short-lived', { baseUrl: fixture.mcpUrl, oauth: {} });
      const goneId = gone.json['id'] as number;
      const started = await startConnect(goneId);
      expect((await call('DELETE', `/mcp/tool/${goneId}`)).status).toBe(200);
      const g = await followCallback(started.callback);
      expect(g.status).toBe(403);
      expect((await pg.query('SELECT count(*)::int AS n FROM mcp_oauth_start')).rows[0].n).toBe(0);

      // At rest: sealed, no token or secret in the clear.
      const rows = (await pg.query('SELECT secrets_enc FROM mcp_oauth_grant WHERE secrets_enc IS NOT NULL'))
        .rows as Array<{ secrets_enc: string }>;
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.secrets_enc).toMatch(/^v1:/);
        expect(r.secrets_enc).not.toMatch(/access_token|refresh_token|client_secret|dyn-/);
      }

      // Connected again for the tests that follow.
      const last = await startConnect(recordId);
      expect((await followCallback(last.callback)).status).toBe(200);
    } finally {
      await pg.end();
    }
  });

  it('steps up on insufficient_scope: Reconnect asks for the wider scope, and the call then works', async () => {
    const r = await invoke('mcp__oauthy__admin_action', {});
    expect(r.status).toBe(409);
    expect(r.json['detail']).toContain('"mcp:tools mcp:admin"');
    expect(r.json['detail']).toContain('Reconnect');
    expect(await status(recordId)).toMatchObject({ state: 'reconnect' });
    expect(await catalogNames()).not.toContain('mcp__oauthy__admin_action');

    // The grant still refreshes, but a wider scope needs the person: Connect signs in again.
    const { authorizationUrl, callback } = await startConnect(recordId);
    expect(authorizationUrl.searchParams.get('scope')).toBe('mcp:tools mcp:admin');
    expect((await followCallback(callback)).status).toBe(200);
    const done = await invoke('mcp__oauthy__admin_action', {});
    expect(done.status).toBe(200);
    expect((done.json['content'] as Array<{ text: string }>)[0]?.text).toBe(
      'admin action done with scopes mcp:tools mcp:admin',
    );
    // And the next Connect keeps asking for it.
    fixture.revokeAll();
    const again = await startConnect(recordId);
    expect(again.authorizationUrl.searchParams.get('scope')).toBe('mcp:tools mcp:admin');
    expect((await followCallback(again.callback)).status).toBe(200);
  });

  it('answers a browser with a page (escaped, strict CSP, no code or state in it) and scripts with JSON', async () => {
    const html = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const browse = (url: URL, headers: Record<string, string> = html) =>
      api(stack.gatewayUrl, 'GET', `${url.pathname}${url.search}`, { headers });
    const scripts = (text: string) => text.match(/<script/gi)?.length ?? 0;

    fixture.revokeAll();
    const ok = await startConnect(recordId);
    const page = await browse(ok.callback);
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toMatch(
      /^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-/,
    );
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.text).toContain('<h1>Connected</h1>');
    expect(page.text).toContain(
      `data-message="{&quot;type&quot;:&quot;switchyard:mcp-oauth&quot;,&quot;ok&quot;:true,&quot;id&quot;:${recordId},`,
    );
    for (const secret of [ok.callback.searchParams.get('code'), ok.callback.searchParams.get('state')])
      expect(page.text).not.toContain(secret);
    expect(page.text).not.toMatch(/access_token|refresh_token|client_secret/);
    const me = (await call('GET', '/api/me')).json['owner'] as { name: string };
    expect((await call('GET', `/mcp/tool/${recordId}`)).json['oauth']).toMatchObject({
      state: 'connected',
      connectedByName: me.name,
    });

    // Script in the provider's error and its description, on a live state: shown as text only.
    const evil = '<script>alert(1)</script>"><img src=x onerror=alert(1)>';
    fixture.revokeAll();
    const refused = new URL((await startConnect(recordId)).callback);
    refused.searchParams.delete('code');
    refused.searchParams.set('error', evil);
    refused.searchParams.set('error_description', `${evil}</main><script src="https://evil.example/x.js">`);
    const r = await browse(refused);
    expect(r.status).toBe(403);
    expect(r.type).toMatch(/^text\/html/);
    expect(r.text).toContain('<code>forbidden</code>');
    expect(r.text).toContain(
      '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;',
    );
    expect(r.text).not.toMatch(/<img|<script>alert|<script src/i);
    expect(scripts(r.text)).toBe(1);

    // A hostile state (unknown) and a query that fails validation: pages too, nothing reflected raw.
    const forged = new URL(refused);
    forged.searchParams.set('state', evil);
    const f = await browse(forged);
    expect(f.status).toBe(403);
    expect(f.text).not.toMatch(/<img|<script>alert/i);
    expect(scripts(f.text)).toBe(1);
    const invalid = await api(
      stack.gatewayUrl,
      'GET',
      `/api/mcp/oauth/callback?error=${encodeURIComponent(evil)}&state=${'x'.repeat(600)}`,
      { headers: html },
    );
    expect(invalid.status).toBe(400);
    expect(invalid.type).toMatch(/^text\/html/);
    expect(invalid.text).toContain('<code>validation_failed</code>');
    expect(invalid.text).not.toMatch(/<img|<script>alert/i);
    expect(scripts(invalid.text)).toBe(1);
    const zh = await browse(forged, { ...html, 'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8' });
    expect(zh.text).toContain('<html lang="zh-CN">');
    expect(zh.text).toContain('连接未完成');

    // Scripts keep JSON: application/json, and no Accept at all.
    const j = await browse(forged, { accept: 'application/json' });
    expect(j.status).toBe(403);
    expect(j.type).toMatch(/^application\/problem\+json/);
    expect(j.json['code']).toBe('forbidden');
    expect((await browse(forged, {})).type).toMatch(/^application\/problem\+json/);

    // Connected again for the tests that follow.
    const last = await startConnect(recordId);
    expect((await followCallback(last.callback)).json).toMatchObject({ connected: true, id: recordId });
  });

  it('connects a client-credentials record at once, with the configured client authentication', async () => {
    fixture.preRegister({
      clientId: 'machine',
      clientSecret: 'machine-secret',
      authMethod: 'client_secret_post',
      grantTypes: ['client_credentials'],
    });
    const r = await create('machine', {
      baseUrl: fixture.mcpUrl,
      oauth: {
        grant: 'client_credentials',
        clientId: 'machine',
        clientSecret: 'machine-secret',
        tokenEndpointAuthMethod: 'client_secret_post',
      },
    });
    expect(r.status).toBe(201);
    const id = r.json['id'] as number;
    const c = await call('POST', `/mcp/tool/${id}/connect`);
    expect(c.json).toEqual({ connected: true });
    expect(fixture.tokenRequests.at(-1)).toMatchObject({
      grantType: 'client_credentials',
      clientAuth: 'client_secret_post',
      status: 200,
    });
    const test = await call('POST', `/mcp/tool/${id}/test`);
    expect(test.json).toMatchObject({ success: true, tools: ['whoami', 'admin_action'] });
    const got = await call('GET', `/mcp/tool/${id}`);
    expect(got.text).not.toContain('machine-secret');
    const w = await invoke('mcp__machine__whoami', {});
    expect((w.json['content'] as Array<{ text: string }>)[0]?.text).toContain('client machine');
    // Expired: a new client-credentials token is fetched, no person needed.
    fixture.expireAccessTokens();
    expect((await invoke('mcp__machine__whoami', {})).status).toBe(200);
  });

  it('refuses an authorization server on a private address the platform does not allow', async () => {
    const other = await OAuthFixture.start();
    try {
      // The record's server is allowed; the authorization server its metadata names is not.
      fixture.advertisedAuthorizationServer = other.url;
      const r = await create('private-as', { baseUrl: fixture.mcpUrl, oauth: {} });
      expect(r.status).toBe(201);
      const c = await call('POST', `/mcp/tool/${r.json['id'] as number}/connect`);
      expect(c.status).toBe(403);
      expect(c.json['detail']).toContain(`${other.host} is refused`);
      expect(other.clients.size).toBe(0);
      expect(other.tokenRequests).toEqual([]);
    } finally {
      fixture.advertisedAuthorizationServer = undefined;
      await other.stop();
    }
  });
});
