import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { auth, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import {
  AppError,
  type McpOAuthCallbackQuery,
  type McpOAuthCallbackResult,
  type McpToolConnectResult,
  type RemoteServerConfig,
} from '@switchyard/contracts';
import { SecretBox } from '@switchyard/server-db';
import { McpOAuthRepository, McpToolRepository, type McpToolRow } from '@switchyard/server-db-tools';
import { requireAdmin, requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { AddressPolicy, LOGGER, vettedFetchLike, type FetchLike } from '@switchyard/server-runtime';
import { McpClientPool } from '../mcp/mcp-client.pool';
import { OAuthGrants } from '../mcp/oauth-grants';
import { RecordCache } from '../mcp/record-cache';

/** How long the provider's sign-in page may take: the state parameter expires after this. */
export const OAUTH_START_TTL_MS = 10 * 60_000;

const ADMIN_ONLY = 'connecting a tool record needs an admin: the grant serves every owner who uses it';

/** Space-separated scope tokens of all the given, each once, in order of first mention. */
export function unionOfScopes(...scopes: Array<string | undefined>): string | undefined {
  const tokens = [...new Set(scopes.flatMap((s) => (s ?? '').split(' ').filter(Boolean)))];
  return tokens.length ? tokens.join(' ') : undefined;
}

/** The provider's refusal as a sentence, or the SDK's error as it came. */
function describe(err: unknown): string {
  if (err instanceof OAuthError) return `${err.errorCode}${err.message ? `: ${err.message}` : ''}`;
  return (err as Error).message ?? String(err);
}

/**
 * Connect and its callback for REMOTE records that sign in with OAuth. The OAuth work (discovery,
 * registration, PKCE, token requests, refresh) is the MCP SDK's `auth`; this keeps the state
 * parameter bound to the person and record that started, single use and short-lived, and stores
 * what the SDK learns sealed (docs/mcp-oauth.md).
 */
@Injectable()
export class RecordOAuthUseCases {
  private readonly fetch: FetchLike;

  constructor(
    private readonly records: McpToolRepository,
    private readonly grantsRepo: McpOAuthRepository,
    private readonly grants: OAuthGrants,
    private readonly pool: McpClientPool,
    private readonly cache: RecordCache,
    private readonly box: SecretBox,
    addresses: AddressPolicy,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.fetch = vettedFetchLike(addresses);
  }

  async connect(
    caller: CallContext,
    input: { id: number; redirectUri: string },
  ): Promise<McpToolConnectResult> {
    requireAdmin(caller, ADMIN_ONLY);
    const ownerId = requireOwner(caller, 'sign-ins');
    const record = await this.records.get(input.id);
    const config = this.oauthConfig(record);
    const oauth = config.oauth;
    const grant = await this.grants.grantOf(record);
    const state = randomBytes(32).toString('base64url');
    const secrets = this.grants.secretsOf(grant);
    const challenge = await this.challenge(config);
    // A wider scope than the grant's needs a new sign-in, not a refresh.
    if (secrets.stepUp) delete secrets.tokens;
    const scope = unionOfScopes(secrets.stepUp, secrets.scope, challenge.scope);
    if (scope) secrets.scope = scope;
    const provider = this.grants.provider(record, oauth, secrets, {
      kind: 'interactive',
      redirectUri: input.redirectUri,
      state,
    });
    let result;
    try {
      result = await auth(provider, {
        serverUrl: config.baseUrl,
        ...(challenge.resourceMetadataUrl ? { resourceMetadataUrl: challenge.resourceMetadataUrl } : {}),
        ...(scope ? { scope } : {}),
        fetchFn: this.fetch,
      });
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('tool_failed', `signing ${record.name} in failed: ${describe(err)}`);
    }
    if (result === 'AUTHORIZED') {
      await this.connected(record, provider.secrets, ownerId);
      return { connected: true };
    }
    if (!provider.authorizationUrl || !provider.startedVerifier)
      throw new AppError('tool_failed', `the sign-in of ${record.name} did not produce an authorization URL`);
    await this.grantsRepo.saveSecrets(record.id, this.grants.seal(provider.secrets));
    await this.grantsRepo.start({
      state,
      recordId: record.id,
      ownerId,
      verifierEnc: this.box.seal(provider.startedVerifier),
      redirectUri: input.redirectUri,
      ttlMs: OAUTH_START_TTL_MS,
    });
    this.logger.info({ record: record.name }, 'oauth sign-in started');
    return { authorizationUrl: provider.authorizationUrl.href };
  }

  async callback(caller: CallContext, q: McpOAuthCallbackQuery): Promise<McpOAuthCallbackResult> {
    // Taken first, whatever follows: a state is good for one try only.
    const start = await this.grantsRepo.take(q.state);
    if (!start) throw new AppError('forbidden', 'unknown or already used sign-in state: start Connect again');
    if (start.expiresAt.getTime() < Date.now())
      throw new AppError('forbidden', 'this sign-in expired (ten minutes): start Connect again');
    if (caller.ownerId && caller.ownerId !== start.ownerId)
      throw new AppError('forbidden', 'this sign-in was started by someone else; it is void now');
    const record = await this.records.get(start.recordId);
    if (q.error)
      throw new AppError(
        'forbidden',
        `the provider did not grant access to ${record.name}: ${q.error}${q.error_description ? ` (${q.error_description})` : ''}`,
      );
    if (!q.code) throw new AppError('validation_failed', 'the callback carries neither code nor error');
    const config = this.oauthConfig(record);
    const grant = await this.grants.grantOf(record);
    const secrets = this.grants.secretsOf(grant);
    const issuer = secrets.discovery?.authorizationServerMetadata?.issuer;
    // RFC 9207: a response that names another issuer is a mix-up attempt.
    if (q.iss && issuer && q.iss !== issuer)
      throw new AppError('forbidden', `the callback names issuer ${q.iss}, not ${issuer}`);
    const provider = this.grants.provider(record, config.oauth, secrets, {
      kind: 'interactive',
      redirectUri: start.redirectUri,
      codeVerifier: this.box.open(start.verifierEnc),
    });
    try {
      const result = await auth(provider, {
        serverUrl: config.baseUrl,
        authorizationCode: q.code,
        fetchFn: this.fetch,
      });
      if (result !== 'AUTHORIZED') throw new Error('the provider asked for another sign-in');
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('tool_failed', `completing the sign-in of ${record.name} failed: ${describe(err)}`);
    }
    await this.connected(record, provider.secrets, start.ownerId);
    return { connected: true, id: record.id, name: record.name };
  }

  private async connected(
    record: McpToolRow,
    secrets: Parameters<OAuthGrants['seal']>[0],
    by: string | null,
  ): Promise<void> {
    delete secrets.stepUp;
    await this.grantsRepo.markConnected(record.id, this.grants.seal(secrets), by);
    await this.pool.drop(record.id);
    this.cache.changed({ id: record.id, reason: 'updated' });
    this.logger.info({ record: record.name }, 'oauth grant stored; the record is connected');
  }

  private oauthConfig(
    record: McpToolRow,
  ): RemoteServerConfig & { oauth: NonNullable<RemoteServerConfig['oauth']> } {
    const settings = record.type === 'BUILTIN' ? undefined : this.pool.settingsOf(record);
    if (settings?.type !== 'REMOTE' || !settings.config.oauth)
      throw new AppError(
        'conflict',
        `${record.name} does not sign in with OAuth: only REMOTE records with an oauth section in their configJson can Connect`,
      );
    return { ...settings.config, oauth: settings.config.oauth };
  }

  /**
   * What the server says when asked without a token: RFC 9728's WWW-Authenticate names its
   * metadata and the scopes it wants. A server that says nothing leaves discovery to the
   * well-known paths.
   */
  private async challenge(
    config: RemoteServerConfig,
  ): Promise<{ resourceMetadataUrl?: URL; scope?: string }> {
    try {
      const res = await this.fetch(config.baseUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(config.headers ?? {}),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: {
            protocolVersion: LATEST_PROTOCOL_VERSION,
            capabilities: {},
            clientInfo: { name: 'switchyard-tool-registry', version: '0.1.0' },
          },
        }),
        signal: AbortSignal.timeout(15_000),
      });
      await res.body?.cancel().catch(() => undefined);
      if (res.status !== 401 && res.status !== 403) return {};
      const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(res);
      return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) };
    } catch (err) {
      if (err instanceof AppError && err.code === 'forbidden') throw err;
      return {};
    }
  }
}
