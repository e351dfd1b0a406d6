import { Inject, Injectable, Module, type OnApplicationShutdown } from '@nestjs/common';
import type { AppConfig } from '@switchyard/server-config';
import {
  createPgPool,
  PermissionsRepository,
  RunsRepository,
  type PgPool,
  type PrismaClient,
} from '@switchyard/server-db';
import { APP_CONFIG, PRISMA } from '@switchyard/server-runtime';
import { HooksService } from './permissions/hooks.service';
import { PermissionSettingsService } from './permissions/permission-settings.service';
import { PermissionsHandler } from './permissions/permissions.handler';
import { PermissionsService } from './permissions/permissions.service';
import { ActiveRuns } from './runs/active-runs';
import { RunsHandler } from './runs/runs.handler';
import { ControlRun } from './runs/control-run.usecase';
import { DeriveRun } from './runs/derive-run.usecase';
import { RunLauncher } from './runs/run-launcher';
import { RunQueries } from './runs/run-queries';
import { StartRun } from './runs/start-run.usecase';
import { TaskWorker } from './tasks/task-worker';
import { WorkflowRuns } from './workflows/workflow-runs.service';
import { WorkflowsHandler } from './workflows/workflows.handler';

const RUNS_POOL = Symbol('RUNS_POOL');

/** Closes the run log's pg pool after everything else (runs are marked interrupted through it). */
@Injectable()
class RunsPoolCloser implements OnApplicationShutdown {
  constructor(@Inject(RUNS_POOL) private readonly pool: PgPool) {}

  async onApplicationShutdown(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * The executor's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService.
 */
@Module({
  controllers: [RunsHandler, PermissionsHandler, WorkflowsHandler],
  providers: [
    {
      provide: RUNS_POOL,
      useFactory: (config: AppConfig) =>
        createPgPool({
          url: config.database.url,
          poolSize: config.database.poolSize,
          applicationName: `${config.service}-runs`,
        }),
      inject: [APP_CONFIG],
    },
    RunsPoolCloser,
    {
      provide: RunsRepository,
      useFactory: (prisma: PrismaClient, pool: PgPool) => new RunsRepository(prisma, pool),
      inject: [PRISMA, RUNS_POOL],
    },
    {
      provide: PermissionsRepository,
      useFactory: (prisma: PrismaClient) => new PermissionsRepository(prisma),
      inject: [PRISMA],
    },
    PermissionSettingsService,
    HooksService,
    PermissionsService,
    ActiveRuns,
    RunLauncher,
    StartRun,
    ControlRun,
    DeriveRun,
    RunQueries,
    WorkflowRuns,
    TaskWorker,
  ],
})
export class ExecutorModule {}
