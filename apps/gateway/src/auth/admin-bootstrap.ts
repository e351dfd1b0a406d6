import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AppConfig } from '@switchyard/server-config';
import { IdentityRepository } from '@switchyard/server-db-identity';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';

/** SWITCHYARD_ADMIN_TOKEN, when set, makes sure an admin owner with that token exists. */
@Injectable()
export class AdminBootstrap implements OnApplicationBootstrap {
  constructor(
    private readonly identity: IdentityRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const token = this.config.identity.adminToken;
    if (!token) return;
    const { owner, created } = await this.identity.ensureOwner(
      this.config.identity.adminOwner,
      'admin',
      true,
    );
    await this.identity.ensureToken(owner.id, token, 'SWITCHYARD_ADMIN_TOKEN');
    this.logger.info({ owner: owner.name, created }, 'admin token from SWITCHYARD_ADMIN_TOKEN is active');
  }
}
