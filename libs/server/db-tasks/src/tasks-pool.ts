import { Inject, Injectable, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@switchyard/server-config';
import { createPgPool, type PgPool } from '@switchyard/server-db';

/** The task table's raw pg pool: the task hot path as prepared statements (Prisma compiled each query). */
export const TASKS_POOL = Symbol('TASKS_POOL');

/** Closes the tasks' pg pool after everything else (a body's end may still be recorded at shutdown). */
@Injectable()
class TasksPoolCloser implements OnApplicationShutdown {
  constructor(@Inject(TASKS_POOL) private readonly pool: PgPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/** The pool, sized like the service's Prisma pool, and its closer: providers of the scheduler's module. */
export const TASKS_POOL_PROVIDERS: Provider[] = [
  {
    provide: TASKS_POOL,
    useFactory: (config: AppConfig) =>
      createPgPool({
        url: config.database.url,
        ssl: config.database.ssl,
        poolSize: config.database.poolSize,
        applicationName: `${config.service}-tasks`,
      }),
    inject: [APP_CONFIG],
  },
  TasksPoolCloser,
];
