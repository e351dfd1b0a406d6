import { Module } from '@nestjs/common';
import { PermissionsRepository, RUNS_POOL_PROVIDERS, RunsRepository } from '@switchyard/server-db-runs';
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

/**
 * The executor's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService.
 */
@Module({
  controllers: [RunsHandler, PermissionsHandler, WorkflowsHandler],
  providers: [
    ...RUNS_POOL_PROVIDERS,
    RunsRepository,
    PermissionsRepository,
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
