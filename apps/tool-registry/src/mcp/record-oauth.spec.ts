import { RemoteOAuthConfig } from '@switchyard/contracts';
import { unionOfScopes } from '../records/record-oauth.usecases';
import { RecordOAuthProvider, type OAuthMode, type OAuthSecrets } from './record-oauth';

const record = { id: 7, name: 'linear' };
const CALLBACK = 'https://switchyard.example/api/mcp/oauth/callback';

function provider(config: Partial<RemoteOAuthConfig>, secrets: OAuthSecrets, mode: OAuthMode) {
  const saved: OAuthSecrets[] = [];
  const p = new RecordOAuthProvider(
    record,
    RemoteOAuthConfig.parse(config),
    secrets,
    async (s) => {
      saved.push(structuredClone(s));
    },
    mode,
  );
  return { p, saved };
}

describe('RecordOAuthProvider', () => {
  it('presents a pre-registered client with its auth method, then the copy the SDK stamped', () => {
    const config = {
      clientId: 'abc',
      clientSecret: 's3',
      tokenEndpointAuthMethod: 'client_secret_post' as const,
    };
    const { p } = provider(config, {}, { kind: 'interactive', redirectUri: CALLBACK, state: 'x' });
    expect(p.clientInformation()).toEqual({
      client_id: 'abc',
      client_secret: 's3',
      token_endpoint_auth_method: 'client_secret_post',
    });
    const stamped = { client_id: 'abc', client_secret: 's3', issuer: 'https://as.example' };
    const again = provider(config, { client: stamped }, { kind: 'interactive', redirectUri: CALLBACK });
    expect(again.p.clientInformation()).toBe(stamped);
    // A stored client of another id (the configuration changed) is not presented.
    const other = provider(
      config,
      { client: { client_id: 'old' } },
      { kind: 'interactive', redirectUri: CALLBACK },
    );
    expect(other.p.clientInformation()).toMatchObject({ client_id: 'abc' });
  });

  it('registers again when its registered client was made for another callback', () => {
    const client = { client_id: 'dyn-1', redirect_uris: ['http://localhost:3000/api/mcp/oauth/callback'] };
    const { p } = provider({}, { client }, { kind: 'interactive', redirectUri: CALLBACK, state: 's' });
    expect(p.clientInformation()).toBeUndefined();
    const same = provider(
      {},
      { client: { ...client, redirect_uris: [CALLBACK] } },
      {
        kind: 'interactive',
        redirectUri: CALLBACK,
      },
    );
    expect(same.p.clientInformation()).toMatchObject({ client_id: 'dyn-1' });
  });

  it('captures the authorization URL and verifier when a person is there', async () => {
    const { p } = provider({}, {}, { kind: 'interactive', redirectUri: CALLBACK, state: 'st' });
    expect(p.redirectUrl).toBe(CALLBACK);
    expect(p.state()).toBe('st');
    expect(p.clientMetadata).toMatchObject({
      redirect_uris: [CALLBACK],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    });
    await p.redirectToAuthorization(new URL('https://as.example/authorize?x=1'));
    p.saveCodeVerifier('v'.repeat(43));
    expect(p.authorizationUrl?.href).toBe('https://as.example/authorize?x=1');
    expect(p.startedVerifier).toBe('v'.repeat(43));
    expect(p.secrets.redirectUri).toBe(CALLBACK);
  });

  it('turns a sign-in needed in the background into Reconnect, with the reason', async () => {
    const reasons: string[] = [];
    const { p } = provider(
      {},
      { redirectUri: CALLBACK },
      {
        kind: 'background',
        onReconnect: async (r) => {
          reasons.push(r);
        },
      },
    );
    expect(p.redirectUrl).toBe(CALLBACK);
    expect(typeof p.state()).toBe('string');
    await expect(p.redirectToAuthorization(new URL('https://as.example/authorize'))).rejects.toMatchObject({
      code: 'conflict',
      message: expect.stringContaining('needs Reconnect'),
    });
    expect(reasons).toEqual([expect.stringContaining('expired or revoked')]);
    expect(() => p.codeVerifier()).toThrow('no sign-in in progress');
  });

  it('remembers a wider scope the server asked for, and waits for a person to grant it', async () => {
    const reasons: string[] = [];
    const { p, saved } = provider(
      {},
      { scope: 'read' },
      {
        kind: 'background',
        onReconnect: async (r) => {
          reasons.push(r);
        },
      },
    );
    await expect(p.insufficientScope('read write')).rejects.toMatchObject({ code: 'conflict' });
    expect(saved.at(-1)).toMatchObject({ stepUp: 'read write', scope: 'read' });
    expect(reasons[0]).toContain('"read write"');
  });

  it('asks for client credentials without a redirect, with the configured scope', () => {
    const { p } = provider(
      { grant: 'client_credentials', clientId: 'm', clientSecret: 's', scope: 'a b' },
      {},
      { kind: 'background', onReconnect: async () => undefined },
    );
    expect(p.redirectUrl).toBeUndefined();
    expect(p.clientMetadata).toMatchObject({ grant_types: ['client_credentials'], scope: 'a b' });
    expect(p.prepareTokenRequest('a b')?.toString()).toBe('grant_type=client_credentials&scope=a+b');
    const code = provider({}, {}, { kind: 'interactive', redirectUri: CALLBACK });
    expect(code.p.prepareTokenRequest()).toBeUndefined();
  });

  it('forgets what the SDK says is no longer valid, and stores it', async () => {
    const secrets: OAuthSecrets = {
      client: { client_id: 'c' },
      tokens: { access_token: 'a', token_type: 'Bearer' },
      discovery: { authorizationServerUrl: 'https://as.example' },
    };
    const { p, saved } = provider({}, secrets, { kind: 'interactive', redirectUri: CALLBACK });
    await p.invalidateCredentials('tokens');
    expect(saved.at(-1)).toEqual({
      client: { client_id: 'c' },
      discovery: secrets.discovery,
      redirectUri: CALLBACK,
    });
    await p.invalidateCredentials('all');
    expect(saved.at(-1)).toEqual({ redirectUri: CALLBACK });
  });
});

describe('RecordOAuthProvider across replicas', () => {
  it('takes the tokens another replica refreshed instead of erasing them, and erases spent ones', async () => {
    const mine = { access_token: 'a1', refresh_token: 'r1', token_type: 'Bearer' };
    const theirs = { access_token: 'a2', refresh_token: 'r2', token_type: 'Bearer' };
    let stored: OAuthSecrets = { tokens: theirs };
    const { p, saved } = provider(
      {},
      { tokens: mine },
      {
        kind: 'background',
        onReconnect: async () => undefined,
        reload: async () => stored,
      },
    );
    await p.invalidateCredentials('tokens');
    expect(p.tokens()).toEqual(theirs);
    expect(saved).toEqual([]);
    // The stored tokens are the ones refused: they are spent, and go.
    stored = { tokens: theirs };
    await p.invalidateCredentials('tokens');
    expect(p.tokens()).toBeUndefined();
    expect(saved.at(-1)).not.toHaveProperty('tokens');
  });
});

describe('unionOfScopes', () => {
  it('joins scope lists, each token once, in order of first mention', () => {
    expect(unionOfScopes('b a', undefined, 'a c')).toBe('b a c');
    expect(unionOfScopes(undefined, '')).toBeUndefined();
  });
});

describe('RemoteOAuthConfig', () => {
  it.each([
    [{ grant: 'client_credentials', clientId: 'x' }, 'clientId'],
    [{ clientSecret: 's' }, 'clientId'],
    [{ clientId: 'x', tokenEndpointAuthMethod: 'client_secret_basic' }, 'clientSecret'],
    [{ clientMetadataUrl: 'http://plain.example/meta.json' }, 'clientMetadataUrl'],
    [{ scope: 'a  b' }, 'scope'],
    [{ extra: 1 }, ''],
  ])('refuses %j', (config, path) => {
    const r = RemoteOAuthConfig.safeParse(config);
    expect(r.success).toBe(false);
    if (!r.success && path) expect(r.error.issues.map((i) => i.path.join('.'))).toContain(path);
  });
});
