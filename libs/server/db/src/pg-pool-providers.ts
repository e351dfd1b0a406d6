import type { Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchyard/server-config';
import type { Pool } from 'pg';
import { createPgPool } from './prisma';

/**
 * A service's raw pg pool under `token` (sized like its Prisma pool, named `<service>-<purpose>` in
 * pg_stat_activity) and the provider that closes it when the service stops: providers for a module.
 */
export function pgPoolProviders(token: symbol, purpose: string): Provider[] {
  return [
    {
      provide: token,
      useFactory: (config: AppConfig): Pool =>
        createPgPool({
          url: config.database.url,
          ssl: config.database.ssl,
          poolSize: config.database.poolSize,
          applicationName: `${config.service}-${purpose}`,
        }),
      inject: [APP_CONFIG],
    },
    {
      provide: Symbol(`${purpose} pool closer`),
      useFactory: (pool: Pool) => ({ onApplicationShutdown: () => pool.end() }),
      inject: [token],
    },
  ];
}
