import { Inject, Injectable } from '@nestjs/common';
import { AppError, Events, type RemoteOAuthConfig } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { SecretBox } from '@switchyard/server-db';
import { McpOAuthRepository, type McpOAuthGrantRow } from '@switchyard/server-db-tools';
import type { Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';
import { RecordOAuthProvider, type OAuthMode, type OAuthSecrets } from './record-oauth';

interface RecordRef {
  readonly id: number;
  readonly name: string;
}

/**
 * The OAuth grants of REMOTE records as providers for the MCP SDK: secrets opened from and sealed
 * back to Postgres, and a refused grant turned into "Reconnect" on every replica.
 */
@Injectable()
export class OAuthGrants {
  constructor(
    private readonly grants: McpOAuthRepository,
    private readonly box: SecretBox,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async grantOf(record: RecordRef): Promise<McpOAuthGrantRow> {
    const grant = await this.grants.grant(record.id);
    if (!grant)
      throw new AppError(
        'conflict',
        `${record.name} does not sign in with OAuth: its configJson has no oauth section`,
      );
    return grant;
  }

  secretsOf(grant: McpOAuthGrantRow): OAuthSecrets {
    return grant.secretsEnc ? (JSON.parse(this.box.open(grant.secretsEnc)) as OAuthSecrets) : {};
  }

  seal(secrets: OAuthSecrets): string {
    return this.box.seal(JSON.stringify(secrets));
  }

  provider(
    record: RecordRef,
    config: RemoteOAuthConfig,
    secrets: OAuthSecrets,
    mode: OAuthMode,
  ): RecordOAuthProvider {
    return new RecordOAuthProvider(
      record,
      config,
      secrets,
      (s) => this.grants.saveSecrets(record.id, this.seal(s)),
      mode,
    );
  }

  /**
   * The provider a tool connection signs its requests with. A record not connected (or whose grant
   * the provider refused) is refused here with what to do, before any connection is tried.
   */
  async forConnection(
    record: RecordRef,
    config: RemoteOAuthConfig,
    onReconnect: () => void,
  ): Promise<RecordOAuthProvider> {
    const grant = await this.grantOf(record);
    if (grant.state !== 'connected') {
      const verb = grant.state === 'reconnect' ? 'Reconnect' : 'Connect';
      throw new AppError('conflict', `${record.name} needs ${verb}: ${grant.reason ?? 'not signed in'}`, {
        details: { oauth: grant.state },
      });
    }
    return this.provider(record, config, this.secretsOf(grant), {
      kind: 'background',
      reload: async () => {
        const now = await this.grants.grant(record.id);
        return now ? this.secretsOf(now) : {};
      },
      onReconnect: async (reason) => {
        await this.grants.markReconnect(record.id, reason);
        this.logger.warn({ record: record.name, reason }, 'oauth grant refused; the record needs Reconnect');
        onReconnect();
        this.bus.emit(Events.recordChanged, { id: record.id, reason: 'updated' });
      },
    });
  }
}
