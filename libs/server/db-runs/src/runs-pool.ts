import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchyard/server-config';
import { createPgPool, type PgPool } from '@switchyard/server-db';

/** The run log's raw pg pool (RunsRepository's hot path: appends and creates as prepared statements). */
export const RUNS_POOL = Symbol('RUNS_POOL');

/** Closes the run log's pg pool after everything else (runs are marked interrupted through it). */
@Injectable()
class RunsPoolCloser implements OnApplicationShutdown {
  constructor(@Inject(RUNS_POOL) private readonly pool: PgPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The pool, sized like the service's Prisma pool, and its closer: providers of the executor's module. */
export const RUNS_POOL_PROVIDERS: Provider[] = [
  {
    provide: RUNS_POOL,
    useFactory: (config: AppConfig) =>
      createPgPool({
        url: config.database.url,
        ssl: config.database.ssl,
        poolSize: config.database.poolSize,
        applicationName: `${config.service}-runs`,
      }),
    inject: [APP_CONFIG],
  },
  RunsPoolCloser,
];
