import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchyard/server-config';
import { createPgPool, type PgPool } from '@switchyard/server-db';

/**
 * The gateway's raw pg pool for RunEventsReader: a stream's open (visibility, replay) as prepared
 * statements. Through Prisma each open allocated about 19 KB that outlived the young generation
 * (query compiler, adapter, promise chains), so 10,000 streams opening grew the old space by
 * ~190 MB of garbage that stayed in RSS until the next full collection.
 */
export const RUN_EVENTS_POOL = Symbol('RUN_EVENTS_POOL');

/** Closes the pool after everything else. */
@Injectable()
class RunEventsPoolCloser implements OnApplicationShutdown {
  constructor(@Inject(RUN_EVENTS_POOL) private readonly pool: PgPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The pool (sized like the service's Prisma pool; connections open on demand) and its closer. */
export const RUN_EVENTS_POOL_PROVIDERS: Provider[] = [
  {
    provide: RUN_EVENTS_POOL,
    useFactory: (config: AppConfig) =>
      createPgPool({
        url: config.database.url,
        ssl: config.database.ssl,
        poolSize: config.database.poolSize,
        applicationName: `${config.service}-run-events`,
      }),
    inject: [APP_CONFIG],
  },
  RunEventsPoolCloser,
];
