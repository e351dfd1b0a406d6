import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { AppError, type RemoteOAuthConfig } from '@switchyard/contracts';

/** What the OAuth client of one record learns and keeps, sealed at rest (SecretBox). */
export interface OAuthSecrets {
  /** A client this record registered (dynamic registration or a metadata-document client id). */
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  discovery?: OAuthDiscoveryState;
  /** The callback the grant was made for: a refresh or a new registration uses the same one. */
  redirectUri?: string;
  /** The scope the last Connect asked for; the next one asks for it again. */
  scope?: string;
  /** A scope the server said a call needs (insufficient_scope): the next Connect asks for it too. */
  stepUp?: string;
}

export type OAuthMode =
  /** Connect or the callback: a person is there to follow the authorization URL. */
  | {
      readonly kind: 'interactive';
      readonly redirectUri: string;
      readonly state?: string;
      readonly codeVerifier?: string;
    }
  /** A connection for tool calls: nobody to sign in; a refused grant means Reconnect. */
  | {
      readonly kind: 'background';
      readonly onReconnect: (reason: string) => Promise<void>;
      /** The grant's secrets as stored now (another replica may have refreshed them). */
      readonly reload?: () => Promise<OAuthSecrets>;
    };

/**
 * The MCP SDK's OAuthClientProvider for one REMOTE record: its configured client (pre-registered,
 * or registered on first Connect), its tokens and discovered metadata, persisted through `save`.
 * Discovery, PKCE, registration, the token requests and refresh are the SDK's (`auth`).
 */
export class RecordOAuthProvider implements OAuthClientProvider {
  /** Set by `redirectToAuthorization` during an interactive Connect. */
  authorizationUrl: URL | undefined;
  /** The PKCE verifier of the authorization this Connect started. */
  startedVerifier: string | undefined;

  constructor(
    private readonly record: { readonly id: number; readonly name: string },
    private readonly config: RemoteOAuthConfig,
    readonly secrets: OAuthSecrets,
    private readonly save: (secrets: OAuthSecrets) => Promise<void>,
    private readonly mode: OAuthMode,
  ) {
    if (mode.kind === 'interactive') secrets.redirectUri = mode.redirectUri;
  }

  get redirectUrl(): string | undefined {
    if (this.config.grant === 'client_credentials') return undefined;
    return this.mode.kind === 'interactive' ? this.mode.redirectUri : this.secrets.redirectUri;
  }

  get clientMetadataUrl(): string | undefined {
    return this.config.clientMetadataUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    const redirect = this.redirectUrl;
    return {
      client_name: 'Switchyard',
      redirect_uris: redirect ? [redirect] : [],
      grant_types:
        this.config.grant === 'client_credentials'
          ? ['client_credentials']
          : ['authorization_code', 'refresh_token'],
      response_types: this.config.grant === 'client_credentials' ? [] : ['code'],
      ...(this.config.tokenEndpointAuthMethod
        ? { token_endpoint_auth_method: this.config.tokenEndpointAuthMethod }
        : {}),
      ...(this.config.scope ? { scope: this.config.scope } : {}),
    };
  }

  state(): string {
    // In the background no sign-in can start: redirectToAuthorization turns it into Reconnect.
    if (this.mode.kind !== 'interactive') return randomBytes(16).toString('base64url');
    if (!this.mode.state) throw new AppError('conflict', `${this.record.name} cannot start a sign-in here`);
    return this.mode.state;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const { clientId, clientSecret, tokenEndpointAuthMethod } = this.config;
    if (clientId) {
      // The stored copy carries the SDK's issuer stamp once the client has been used.
      if (this.secrets.client?.client_id === clientId) return this.secrets.client;
      return {
        client_id: clientId,
        ...(clientSecret ? { client_secret: clientSecret } : {}),
        ...(tokenEndpointAuthMethod ? { token_endpoint_auth_method: tokenEndpointAuthMethod } : {}),
      };
    }
    const client = this.secrets.client;
    // A registration made for another callback cannot complete this one: register again.
    const redirect = this.redirectUrl;
    if (client && redirect && 'redirect_uris' in client && Array.isArray(client.redirect_uris)) {
      if (!client.redirect_uris.includes(redirect)) return undefined;
    }
    return client;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    this.secrets.client = client;
    await this.save(this.secrets);
  }

  tokens(): OAuthTokens | undefined {
    return this.secrets.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    this.secrets.tokens = tokens;
    await this.save(this.secrets);
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    if (this.mode.kind === 'interactive') {
      this.authorizationUrl = url;
      return;
    }
    const reason = 'the provider no longer accepts the grant (expired or revoked): Reconnect';
    await this.mode.onReconnect(reason);
    throw new AppError('conflict', `${this.record.name} needs Reconnect: ${reason}`);
  }

  /**
   * The server refused a call for want of scope (RFC 6750 insufficient_scope). Only a person can
   * grant more, so the record waits for Reconnect, which asks for the wider scope.
   */
  async insufficientScope(scope: string | undefined): Promise<void> {
    if (this.mode.kind !== 'background') return;
    this.secrets.stepUp = scope ?? this.secrets.scope;
    await this.save(this.secrets);
    const reason = `the server asks for scope "${scope ?? 'unspecified'}", which the grant lacks: Reconnect to grant it`;
    await this.mode.onReconnect(reason);
    throw new AppError('conflict', `${this.record.name} needs Reconnect: ${reason}`);
  }

  saveCodeVerifier(verifier: string): void {
    this.startedVerifier = verifier;
  }

  codeVerifier(): string {
    const verifier = this.mode.kind === 'interactive' ? this.mode.codeVerifier : undefined;
    if (!verifier) throw new AppError('conflict', `${this.record.name} has no sign-in in progress`);
    return verifier;
  }

  prepareTokenRequest(scope?: string): URLSearchParams | undefined {
    if (this.config.grant !== 'client_credentials') return undefined;
    return new URLSearchParams({ grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'tokens' && this.mode.kind === 'background' && this.mode.reload) {
      // Rotating refresh tokens: when another replica refreshed first, ours was refused because it
      // is spent. Take the stored tokens instead of erasing them (the SDK refreshes with those).
      const stored = (await this.mode.reload()).tokens;
      if (stored && stored.refresh_token !== this.secrets.tokens?.refresh_token) {
        this.secrets.tokens = stored;
        return;
      }
    }
    if (scope === 'all' || scope === 'client') delete this.secrets.client;
    if (scope === 'all' || scope === 'tokens') delete this.secrets.tokens;
    if (scope === 'all' || scope === 'discovery') delete this.secrets.discovery;
    await this.save(this.secrets);
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    this.secrets.discovery = state;
    await this.save(this.secrets);
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.secrets.discovery;
  }
}
