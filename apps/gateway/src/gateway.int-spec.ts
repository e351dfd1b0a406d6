import { randomBytes } from 'node:crypto';
import { Controller, Get, Module } from '@nestjs/common';
import { api, createTestDatabase, testConfig, uniquePrefix, type TestDatabase } from '@switchyard/testing';
import { bootstrapService, Public, type RunningService } from '@switchyard/server-runtime';
import { gatewayOptions } from './bootstrap';

/** Handlers a careless change could add: one outside the route table and unmarked, one marked. */
const unlistedCalls: string[] = [];
@Controller('api/unlisted')
class UnlistedController {
  @Get()
  forgotten(): { leaked: true } {
    unlistedCalls.push('forgotten');
    return { leaked: true };
  }

  @Public()
  @Get('open')
  open(): { open: true } {
    return { open: true };
  }
}
@Module({ controllers: [UnlistedController] })
class UnlistedModule {}

/** Gateway in-process against real Postgres/NATS/Redis: auth, problems, validation, tokens, docs. */
describe('gateway (in-process, real infrastructure)', () => {
  let db: TestDatabase;
  let gateway: RunningService;
  let planner: RunningService;
  const adminToken = `adm_${randomBytes(24).toString('base64url')}`;
  let userToken: string;

  const call = (
    method: string,
    path: string,
    opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {},
  ) => api(gateway.url, method, path, opts);

  beforeAll(async () => {
    db = await createTestDatabase();
    const env = {
      DATABASE_URL: db.url,
      NATS_SUBJECT_PREFIX: uniquePrefix('gw'),
      SWITCHYARD_ADMIN_TOKEN: adminToken,
      LOG_LEVEL: 'fatal',
    };
    const options = gatewayOptions(testConfig('gateway', env));
    gateway = await bootstrapService({ ...options, modules: [...options.modules, UnlistedModule] });
    // A planner-shaped peer (the service kit answering planner.health.check); the e2e suite runs the real one.
    planner = await bootstrapService({
      config: testConfig('planner', env),
      modules: [],
      uses: { postgres: true, redis: false },
    });
    const created = await call('POST', '/api/tokens', {
      token: adminToken,
      body: { owner: 'bob', label: 'bob laptop' },
    });
    expect(created.status).toBe(201);
    userToken = created.json['token'] as string;
  });

  afterAll(async () => {
    await planner?.close();
    await gateway?.close();
    await db?.drop();
  });

  describe('authentication', () => {
    it('accepts the admin token from SWITCHYARD_ADMIN_TOKEN', async () => {
      const me = await call('GET', '/api/me', { token: adminToken });
      expect(me.status).toBe(200);
      expect(me.json['owner']).toMatchObject({ name: 'admin', role: 'admin' });
    });

    it('accepts Authorization: Bearer', async () => {
      const me = await call('GET', '/api/me', { headers: { authorization: `Bearer ${userToken}` } });
      expect(me.status).toBe(200);
      expect(me.json['owner']).toMatchObject({ name: 'bob', role: 'user' });
    });

    it.each([
      ['no token', {}],
      ['unknown token', { 'x-switchyard-token': 'sy_nope' }],
      ['malformed bearer', { authorization: 'Bearer' }],
      ['basic auth', { authorization: 'Basic YWRtaW46YWRtaW4=' }],
      ['oversized token', { 'x-switchyard-token': 'x'.repeat(5000) }],
    ])('answers 401 problem for %s', async (_, headers) => {
      const r = await call('GET', '/api/me', { headers: headers as Record<string, string> });
      expect(r.status).toBe(401);
      expect(r.type).toContain('application/problem+json');
      expect(r.json).toMatchObject({ code: 'unauthenticated', status: 401 });
    });

    it('refuses ?token= outside the event stream', async () => {
      const r = await call('GET', `/api/me?token=${userToken}`);
      expect(r.status).toBe(401);
      expect(r.json['detail']).toContain('query string');
    });

    it('stops accepting a revoked token at once on this replica', async () => {
      const t = await call('POST', '/api/tokens', { token: userToken, body: { label: 'short-lived' } });
      const token = t.json['token'] as string;
      expect((await call('GET', '/api/me', { token })).status).toBe(200);
      const id = (t.json['info'] as { id: string }).id;
      expect((await call('DELETE', `/api/tokens/${id}`, { token: userToken })).status).toBe(200);
      expect((await call('GET', '/api/me', { token })).status).toBe(401);
    });
  });

  describe('authorization', () => {
    it('answers 403 when the role lacks the permission', async () => {
      const r = await call('GET', '/api/services/planner', { token: userToken });
      expect(r.status).toBe(403);
      expect(r.json).toMatchObject({
        code: 'forbidden',
        details: { permission: 'system:service:query', role: 'user' },
      });
    });

    it.each([
      ['create a token for another owner', 'POST', '/api/tokens', { owner: 'admin' }],
      ['choose a role', 'POST', '/api/tokens', { role: 'admin' }],
    ])('does not let a user %s', async (_, method, path, body) => {
      const r = await call(method, path, { token: userToken, body });
      expect(r.status).toBe(403);
    });

    it("does not let a user list or revoke another owner's tokens", async () => {
      expect((await call('GET', '/api/tokens?owner=admin', { token: userToken })).status).toBe(403);
      const adminTokens = await call('GET', '/api/tokens', { token: adminToken });
      const adminTokenId = (adminTokens.json['items'] as Array<{ id: string }>)[0]?.id;
      expect(adminTokenId).toBeDefined();
      const r = await call('DELETE', `/api/tokens/${adminTokenId}`, { token: userToken });
      expect(r.status).toBe(404);
      expect((await call('GET', '/api/me', { token: adminToken })).status).toBe(200);
    });
  });

  describe('validation', () => {
    it('names the bad field of a malformed body', async () => {
      const r = await call('POST', '/api/tokens', {
        token: adminToken,
        body: { owner: 'Not Valid!', expiresInDays: 0 },
      });
      expect(r.status).toBe(400);
      expect(r.json['code']).toBe('validation_failed');
      const paths = (r.json['errors'] as Array<{ path: string }>).map((e) => e.path).sort();
      expect(paths).toEqual(['body.expiresInDays', 'body.owner']);
      expect(r.json['detail']).toContain('body.owner');
    });

    it('rejects unknown body fields instead of ignoring them', async () => {
      const r = await call('POST', '/api/tokens', { token: adminToken, body: { ownerId: 'x' } });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json['errors'])).toContain('ownerId');
    });

    it('answers malformed JSON with a 400 problem, not an HTML page', async () => {
      const r = await call('POST', '/api/tokens', { token: adminToken, raw: '{"owner":' });
      expect(r.status).toBe(400);
      expect(r.type).toContain('application/problem+json');
      expect(r.json).toMatchObject({ code: 'validation_failed', detail: 'request body is not valid JSON' });
    });

    it('answers an oversized body with 413', async () => {
      const r = await call('POST', '/api/tokens', {
        token: adminToken,
        raw: JSON.stringify({ label: 'x'.repeat(2_000_000) }),
      });
      expect(r.status).toBe(413);
      expect(r.json['code']).toBe('payload_too_large');
    });

    it('validates path parameters', async () => {
      const r = await call('GET', '/api/services/mailer', { token: adminToken });
      expect(r.status).toBe(400);
      expect((r.json['errors'] as Array<{ path: string }>)[0]?.path).toBe('params.name');
      expect((await call('DELETE', '/api/tokens/not-a-uuid', { token: adminToken })).status).toBe(400);
    });

    it('answers unknown routes with a 404 problem', async () => {
      const r = await call('GET', '/api/nothing-here', { token: adminToken });
      expect(r.status).toBe(404);
      expect(r.json['code']).toBe('not_found');
    });

    it('echoes a sane correlation id and mints one otherwise', async () => {
      const r = await call('GET', '/api/nothing-here', { headers: { 'x-correlation-id': 'trace-123' } });
      expect(r.headers.get('x-correlation-id')).toBe('trace-123');
      expect(r.json['correlationId']).toBe('trace-123');
      const bad = await call('GET', '/api/nothing-here', {
        headers: { 'x-correlation-id': 'bad id\twith spaces' },
      });
      expect(bad.headers.get('x-correlation-id')).toMatch(/^[0-9a-f-]{36}$/);
    });
  });

  describe('handlers outside the route table', () => {
    it('denies an unmarked handler to everyone, as if it did not exist', async () => {
      for (const token of [undefined, userToken, adminToken]) {
        const r = await call('GET', '/api/unlisted', token ? { token } : {});
        expect(r.status).toBe(404);
        expect(r.json['code']).toBe('not_found');
      }
      expect(unlistedCalls).toEqual([]);
    });

    it('opens a @Public() handler and the probes without a token', async () => {
      expect((await call('GET', '/api/unlisted/open')).json).toEqual({ open: true });
      expect((await call('GET', '/healthz')).status).toBe(200);
      expect((await call('GET', '/readyz')).status).toBe(200);
    });

    it('serves /metrics on its own port, not on the public one', async () => {
      expect(gateway.metricsUrl).not.toBe(gateway.url);
      for (const token of [undefined, adminToken]) {
        const r = await call('GET', '/metrics', token ? { token } : {});
        expect(r.status).toBe(404);
        expect(r.text).not.toContain('switchyard_http_requests_total');
      }
      const scrape = await fetch(`${gateway.metricsUrl}/metrics`);
      expect(scrape.status).toBe(200);
      expect(await scrape.text()).toContain('switchyard_http_requests_total');
      expect((await fetch(`${gateway.metricsUrl}/api/me`)).status).toBe(404);
    });
  });

  describe('hostile input', () => {
    const problemOf = (r: { status: number; json: Record<string, unknown> }) => ({
      status: r.status,
      code: r.json['code'],
      paths: (r.json['errors'] as Array<{ path: string }> | undefined)?.map((e) => e.path),
    });

    it.each([
      ['NUL', '"bob\\u0000"'],
      ['a lone high surrogate', '"bob\\ud800"'],
      ['a lone low surrogate', '"\\udc00bob"'],
    ])('refuses %s in a body string with 400 and its path, before the schema', async (_, literal) => {
      const r = await call('POST', '/api/tokens', { token: adminToken, raw: `{"owner":${literal}}` });
      expect(problemOf(r)).toEqual({ status: 400, code: 'validation_failed', paths: ['body.owner'] });
    });

    it('refuses NUL in a query value and in a path parameter', async () => {
      const q = await call('GET', '/api/tokens?owner=%00', { token: adminToken });
      expect(problemOf(q)).toEqual({ status: 400, code: 'validation_failed', paths: ['query.owner'] });
      const p = await call('GET', '/api/services/%00', { token: adminToken });
      expect(problemOf(p)).toEqual({ status: 400, code: 'validation_failed', paths: ['params.name'] });
    });

    it('refuses 3,000 levels of nesting with 400 naming where the limit was passed', async () => {
      const raw = `{"label":${'['.repeat(3000)}${']'.repeat(3000)}}`;
      const r = await call('POST', '/api/tokens', { token: adminToken, raw });
      expect(problemOf(r)).toEqual({
        status: 400,
        code: 'validation_failed',
        paths: [`body.label${'.0'.repeat(63)}`],
      });
    });

    it('still answers 401 first to a caller without a token', async () => {
      const r = await call('POST', '/api/tokens', { raw: '{"owner":"\\u0000"}' });
      expect(r.status).toBe(401);
    });
  });

  describe('tokens API', () => {
    it('creates an owner with a role for an admin, and the token works with that role', async () => {
      const r = await call('POST', '/api/tokens', {
        token: adminToken,
        body: { owner: 'carol', role: 'admin', expiresInDays: 30 },
      });
      expect(r.status).toBe(201);
      expect(r.json['info']).toMatchObject({ ownerName: 'carol' });
      expect((r.json['info'] as { expiresAt: string }).expiresAt).toBeTruthy();
      const me = await call('GET', '/api/me', { token: r.json['token'] as string });
      expect(me.json['owner']).toMatchObject({ name: 'carol', role: 'admin' });
    });

    it('lists tokens with paging and never shows a secret', async () => {
      for (let i = 0; i < 3; i++)
        await call('POST', '/api/tokens', { token: userToken, body: { label: `page-${i}` } });
      const first = await call('GET', '/api/tokens?limit=2', { token: userToken });
      expect(first.status).toBe(200);
      expect((first.json['items'] as unknown[]).length).toBe(2);
      expect(first.json['nextCursor']).toEqual(expect.any(String));
      const second = await call('GET', `/api/tokens?limit=2&cursor=${first.json['nextCursor'] as string}`, {
        token: userToken,
      });
      expect((second.json['items'] as unknown[]).length).toBeGreaterThan(0);
      expect(JSON.stringify([first.json, second.json])).not.toMatch(/sy_[A-Za-z0-9_-]{43}/);
    });
  });

  describe('platform', () => {
    it('serves the OpenAPI document without a token', async () => {
      const r = await call('GET', '/api/docs');
      expect(r.status).toBe(200);
      expect(r.json['openapi']).toBe('3.1.0');
      expect(Object.keys(r.json['paths'] as object)).toEqual(
        expect.arrayContaining(['/api/health', '/api/tokens', '/api/tokens/{id}']),
      );
    });

    it('asks a service over NATS for its health', async () => {
      const r = await call('GET', '/api/services/planner', { token: adminToken });
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({
        service: 'planner',
        status: 'up',
        checks: { postgres: { status: 'up' } },
      });
    });

    it('answers 503 unavailable for a service that is not running', async () => {
      const r = await call('GET', '/api/services/scheduler', { token: adminToken });
      expect(r.status).toBe(503);
      expect(r.json).toMatchObject({ code: 'unavailable' });
      expect(r.json['detail']).toContain('scheduler');
    });

    it('reports the missing services as down in /api/health with 503', async () => {
      const r = await call('GET', '/api/health');
      expect(r.status).toBe(503);
      expect(r.json['down']).toEqual(expect.arrayContaining(['executor', 'tool-registry', 'scheduler']));
      expect(r.json['down']).not.toContain('planner');
      expect(r.json['dependencies']).toMatchObject({
        nats: { status: 'up' },
        postgres: { status: 'up' },
        redis: { status: 'up' },
      });
    });
  });
});
