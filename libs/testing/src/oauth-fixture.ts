import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

interface Client {
  readonly clientId: string;
  readonly clientSecret: string | undefined;
  readonly authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  readonly redirectUris: readonly string[];
  readonly grantTypes: readonly string[];
}

interface Grant {
  readonly clientId: string;
  readonly scope: string;
  readonly resource: string | undefined;
  revoked: boolean;
}

interface AccessToken {
  readonly grant: Grant;
  expiresAt: number;
}

/** A token request as the fixture saw it, for assertions. */
export interface TokenRequestSeen {
  readonly grantType: string;
  readonly clientAuth: 'client_secret_basic' | 'client_secret_post' | 'none';
  readonly resource: string | undefined;
  readonly status: number;
}

export interface OAuthFixtureOptions {
  /** Scopes the MCP endpoint asks for in WWW-Authenticate; also its metadata's scopes_supported. */
  readonly scopes?: readonly string[];
  /** Lifetime of access tokens it issues (tests expire them on demand with expireAccessTokens). */
  readonly accessTokenTtlMs?: number;
  /**
   * The authorize endpoint shows a consent page (Allow / Deny buttons) before redirecting back, as
   * a provider does for a person in a browser. Off: it approves at once (scripts, the API tests).
   */
  readonly consentPage?: boolean;
}

/** The scope `admin_action` needs; the sign-in asks only for the fixture's `scopes`. */
export const ADMIN_SCOPE = 'mcp:admin';

const sha256url = (s: string) => createHash('sha256').update(s).digest('base64url');

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}

/**
 * A local OAuth 2.1 authorization server with an MCP server behind it, on loopback, for tests of
 * Connect: RFC 9728 protected-resource metadata (path-based), RFC 8414 metadata, RFC 7591 dynamic
 * registration, an authorize endpoint that approves at once and redirects back with a code, a token
 * endpoint checking PKCE (S256), the client's authentication, the redirect URI and the resource
 * indicator, refresh, client credentials, RFC 7009 revocation, and a Streamable HTTP MCP endpoint
 * (`/mcp`) that wants a Bearer token with its scopes. Written by hand, not with the SDK's server
 * auth, so the client under test does not meet its own code on the other side.
 */
export class OAuthFixture {
  readonly clients = new Map<string, Client>();
  private readonly codes = new Map<
    string,
    {
      clientId: string;
      redirectUri: string;
      challenge: string;
      scope: string;
      resource: string | undefined;
    }
  >();
  private readonly access = new Map<string, AccessToken>();
  private readonly refresh = new Map<string, Grant>();
  /** Every token request, in order. */
  readonly tokenRequests: TokenRequestSeen[] = [];
  /** The query of every authorization request, in order. */
  readonly authorizeRequests: URLSearchParams[] = [];
  /** MCP requests answered 401 (no or bad token). */
  unauthorized = 0;
  /** Set: the protected-resource metadata names this authorization server instead of the fixture. */
  advertisedAuthorizationServer: string | undefined;
  private readonly scopes: readonly string[];
  private readonly ttlMs: number;
  private readonly consentPage: boolean;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    opts: OAuthFixtureOptions,
  ) {
    this.scopes = opts.scopes ?? ['mcp:tools'];
    this.ttlMs = opts.accessTokenTtlMs ?? 3_600_000;
    this.consentPage = opts.consentPage ?? false;
  }

  static async start(opts: OAuthFixtureOptions = {}): Promise<OAuthFixture> {
    const ready: { fixture?: OAuthFixture } = {};
    const server = createServer((req, res) => {
      ready.fixture?.handle(req, res).catch((err: Error) => {
        if (!res.headersSent) json(res, 500, { error: 'server_error', error_description: err.message });
        else res.destroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    ready.fixture = new OAuthFixture(server, `http://127.0.0.1:${port}`, opts);
    return ready.fixture;
  }

  /** `host:port`, as WEB_FETCH_PRIVATE_HOSTS takes it. */
  get host(): string {
    return new URL(this.url).host;
  }

  get mcpUrl(): string {
    return `${this.url}/mcp`;
  }

  /** A client registered out of band (a pre-registered client id and secret). */
  preRegister(c: {
    clientId: string;
    clientSecret?: string;
    authMethod: Client['authMethod'];
    grantTypes: string[];
    redirectUris?: string[];
  }): void {
    this.clients.set(c.clientId, {
      clientId: c.clientId,
      clientSecret: c.clientSecret,
      authMethod: c.authMethod,
      redirectUris: c.redirectUris ?? [],
      grantTypes: c.grantTypes,
    });
  }

  /** Every access token issued so far expires now (refresh tokens stay good). */
  expireAccessTokens(): void {
    for (const t of this.access.values()) t.expiresAt = 0;
  }

  /** Revokes every grant: access and refresh tokens alike stop working (a user withdrew consent). */
  revokeAll(): void {
    for (const t of this.access.values()) t.grant.revoked = true;
    for (const g of this.refresh.values()) g.revoked = true;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const path = url.pathname;
    if (path === '/.well-known/oauth-protected-resource/mcp' && req.method === 'GET')
      return json(res, 200, {
        resource: this.mcpUrl,
        authorization_servers: [this.advertisedAuthorizationServer ?? this.url],
        scopes_supported: this.scopes,
        bearer_methods_supported: ['header'],
      });
    if (path === '/.well-known/oauth-authorization-server' && req.method === 'GET')
      return json(res, 200, {
        issuer: this.url,
        authorization_endpoint: `${this.url}/authorize`,
        token_endpoint: `${this.url}/token`,
        registration_endpoint: `${this.url}/register`,
        revocation_endpoint: `${this.url}/revoke`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        scopes_supported: this.scopes,
        authorization_response_iss_parameter_supported: true,
      });
    if (path === '/register' && req.method === 'POST') return this.register(req, res);
    if (path === '/authorize' && req.method === 'GET') return this.authorize(url, res);
    if (path === '/token' && req.method === 'POST') return this.token(req, res);
    if (path === '/revoke' && req.method === 'POST') return this.revoke(req, res);
    if (path === '/mcp') return this.mcp(req, res);
    json(res, 404, { error: 'not_found' });
  }

  private async register(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const meta = JSON.parse(await readBody(req)) as Record<string, unknown>;
    const redirectUris = meta['redirect_uris'];
    if (!Array.isArray(redirectUris) || !redirectUris.every((u) => typeof u === 'string'))
      return json(res, 400, { error: 'invalid_redirect_uri', error_description: 'redirect_uris required' });
    const method =
      (meta['token_endpoint_auth_method'] as Client['authMethod'] | undefined) ?? 'client_secret_basic';
    const client: Client = {
      clientId: `dyn-${randomBytes(8).toString('hex')}`,
      clientSecret: method === 'none' ? undefined : randomBytes(24).toString('base64url'),
      authMethod: method,
      redirectUris: redirectUris as string[],
      grantTypes: (meta['grant_types'] as string[] | undefined) ?? ['authorization_code', 'refresh_token'],
    };
    this.clients.set(client.clientId, client);
    json(res, 201, {
      ...meta,
      client_id: client.clientId,
      ...(client.clientSecret ? { client_secret: client.clientSecret, client_secret_expires_at: 0 } : {}),
      token_endpoint_auth_method: method,
      client_id_issued_at: Math.floor(Date.now() / 1000),
    });
  }

  /**
   * Approves at once (the "person" always consents) and redirects back with a code; with
   * `consentPage`, first a page whose Allow / Deny buttons come back here with `decision`.
   */
  private authorize(url: URL, res: ServerResponse): void {
    const q = url.searchParams;
    const decision = q.get('decision');
    if (!decision) this.authorizeRequests.push(new URLSearchParams(q));
    const client = this.clients.get(q.get('client_id') ?? '');
    const redirectUri = q.get('redirect_uri') ?? '';
    if (!client || !client.redirectUris.includes(redirectUri))
      return json(res, 400, {
        error: 'invalid_request',
        error_description: 'unknown client or redirect_uri',
      });
    if (this.consentPage && !decision) return this.consent(q, res);
    const back = new URL(redirectUri);
    const state = q.get('state');
    if (state) back.searchParams.set('state', state);
    back.searchParams.set('iss', this.url);
    const challenge = q.get('code_challenge');
    if (decision === 'deny') {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'the person denied access');
    } else if (q.get('response_type') !== 'code' || !challenge || q.get('code_challenge_method') !== 'S256') {
      back.searchParams.set('error', 'invalid_request');
      back.searchParams.set('error_description', 'PKCE with S256 is required');
    } else {
      const code = randomBytes(16).toString('base64url');
      this.codes.set(code, {
        clientId: client.clientId,
        redirectUri,
        challenge,
        scope: q.get('scope') ?? '',
        resource: q.get('resource') ?? undefined,
      });
      back.searchParams.set('code', code);
    }
    res.writeHead(302, { location: back.href });
    res.end();
  }

  private consent(q: URLSearchParams, res: ServerResponse): void {
    const hidden = [...q.entries()]
      .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
      .join('');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize</title></head>
<body><h1>OAuth fixture: authorize ${escapeHtml(q.get('client_id') ?? '')}?</h1>
<p>Scopes: <code>${escapeHtml(q.get('scope') ?? '(none)')}</code></p>
<form method="get" action="/authorize">${hidden}
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></form></body></html>`);
  }

  private authenticateClient(
    req: IncomingMessage,
    form: URLSearchParams,
  ): { client: Client; method: Client['authMethod'] } | undefined {
    const basic = /^Basic\s+(.+)$/i.exec(req.headers.authorization ?? '');
    let id: string | undefined;
    let secret: string | undefined;
    let method: Client['authMethod'];
    if (basic) {
      const [u, p] = Buffer.from(basic[1] as string, 'base64')
        .toString('utf8')
        .split(':');
      id = decodeURIComponent(u ?? '');
      secret = decodeURIComponent(p ?? '');
      method = 'client_secret_basic';
    } else if (form.get('client_secret')) {
      id = form.get('client_id') ?? undefined;
      secret = form.get('client_secret') ?? undefined;
      method = 'client_secret_post';
    } else {
      id = form.get('client_id') ?? undefined;
      method = 'none';
    }
    const client = this.clients.get(id ?? '');
    if (!client || client.authMethod !== method) return undefined;
    if (method !== 'none' && (!client.clientSecret || !secret || !same(client.clientSecret, secret)))
      return undefined;
    return { client, method };
  }

  private issue(grant: Grant, withRefresh: boolean): Record<string, unknown> {
    const accessToken = randomBytes(24).toString('base64url');
    this.access.set(accessToken, { grant, expiresAt: Date.now() + this.ttlMs });
    const out: Record<string, unknown> = {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: Math.floor(this.ttlMs / 1000),
      scope: grant.scope,
    };
    if (withRefresh) {
      const refreshToken = randomBytes(24).toString('base64url');
      this.refresh.set(refreshToken, grant);
      out['refresh_token'] = refreshToken;
    }
    return out;
  }

  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const grantType = form.get('grant_type') ?? '';
    const resource = form.get('resource') ?? undefined;
    const answer = (
      status: number,
      body: Record<string, unknown>,
      clientAuth: Client['authMethod'] = 'none',
    ) => {
      this.tokenRequests.push({ grantType, clientAuth, resource, status });
      json(res, status, body);
    };
    const authed = this.authenticateClient(req, form);
    if (!authed) return answer(401, { error: 'invalid_client' });
    const { client, method } = authed;
    if (resource !== undefined && resource !== this.mcpUrl)
      return answer(
        400,
        { error: 'invalid_target', error_description: `unknown resource ${resource}` },
        method,
      );
    if (grantType === 'authorization_code') {
      const code = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      if (!code || code.clientId !== client.clientId || code.redirectUri !== form.get('redirect_uri'))
        return answer(400, { error: 'invalid_grant', error_description: 'bad code or redirect_uri' }, method);
      if (sha256url(form.get('code_verifier') ?? '') !== code.challenge)
        return answer(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' }, method);
      const grant: Grant = {
        clientId: client.clientId,
        scope: code.scope,
        resource: code.resource,
        revoked: false,
      };
      return answer(200, this.issue(grant, true), method);
    }
    if (grantType === 'refresh_token') {
      const token = form.get('refresh_token') ?? '';
      const grant = this.refresh.get(token);
      if (!grant || grant.revoked || grant.clientId !== client.clientId)
        return answer(
          400,
          { error: 'invalid_grant', error_description: 'refresh token revoked or unknown' },
          method,
        );
      this.refresh.delete(token); // rotated: each refresh token works once
      return answer(200, this.issue(grant, true), method);
    }
    if (grantType === 'client_credentials') {
      if (!client.grantTypes.includes('client_credentials') || method === 'none')
        return answer(400, { error: 'unauthorized_client' }, method);
      const grant: Grant = {
        clientId: client.clientId,
        scope: form.get('scope') ?? this.scopes.join(' '),
        resource,
        revoked: false,
      };
      return answer(200, this.issue(grant, false), method);
    }
    answer(400, { error: 'unsupported_grant_type' }, method);
  }

  private async revoke(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const form = new URLSearchParams(await readBody(req));
    const token = form.get('token') ?? '';
    const grant = this.access.get(token)?.grant ?? this.refresh.get(token);
    if (grant) grant.revoked = true;
    res.writeHead(200);
    res.end();
  }

  private async mcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bearer = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const token = bearer ? this.access.get(bearer) : undefined;
    const challenge = `Bearer resource_metadata="${this.url}/.well-known/oauth-protected-resource/mcp", scope="${this.scopes.join(' ')}"`;
    if (!token || token.grant.revoked || token.expiresAt <= Date.now()) {
      this.unauthorized++;
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': `${challenge}, error="invalid_token"` },
      );
    }
    if (token.grant.resource !== undefined && token.grant.resource !== this.mcpUrl)
      return json(
        res,
        401,
        { error: 'invalid_token' },
        { 'www-authenticate': `${challenge}, error="invalid_token"` },
      );
    const granted = token.grant.scope.split(' ').filter(Boolean);
    if (!this.scopes.every((s) => granted.includes(s)))
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        { 'www-authenticate': `${challenge}, error="insufficient_scope"` },
      );
    const body =
      req.method === 'POST' ? (JSON.parse(await readBody(req)) as Record<string, unknown>) : undefined;
    // Step-up: one tool needs a scope beyond the ones asked for at sign-in.
    const params = body?.['params'] as { name?: string } | undefined;
    if (
      body?.['method'] === 'tools/call' &&
      params?.name === 'admin_action' &&
      !granted.includes(ADMIN_SCOPE)
    ) {
      const wider = [...this.scopes, ADMIN_SCOPE].join(' ');
      return json(
        res,
        403,
        { error: 'insufficient_scope' },
        {
          'www-authenticate': `Bearer resource_metadata="${this.url}/.well-known/oauth-protected-resource/mcp", scope="${wider}", error="insufficient_scope"`,
        },
      );
    }
    // Stateless: a server and transport per request, as the SDK's stateless example does.
    const server = new McpServer({ name: 'switchyard-oauth-fixture', version: '1.0.0' });
    server.registerTool(
      'whoami',
      {
        description: 'Says which OAuth client and scopes the call carries',
        inputSchema: { note: z.string().optional() },
      },
      ({ note }) => ({
        content: [
          {
            type: 'text',
            text: `client ${token.grant.clientId} scopes ${token.grant.scope}${note ? ` note ${note}` : ''}`,
          },
        ],
      }),
    );
    server.registerTool(
      'admin_action',
      { description: `Needs the ${ADMIN_SCOPE} scope (step-up)`, inputSchema: {} },
      () => ({ content: [{ type: 'text', text: `admin action done with scopes ${token.grant.scope}` }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}
