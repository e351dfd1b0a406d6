import { Module } from '@nestjs/common';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import {
  APP_CONFIG,
  BUS,
  OwnerFeedOutbox,
  POSTURE_SOURCE,
  PublishedWorkflows,
  RegistryPosture,
} from '@switchyard/server-runtime';
import {
  ChatRepository,
  InputRequestsRepository,
  PermissionsRepository,
  PluginHooksRepository,
  RUNS_POOL_PROVIDERS,
  RunsRepository,
} from '@switchyard/server-db-runs';
import { ActiveChats } from './chat/active-chats';
import { CHAT_CONTEXT, MemoryChatContext } from './chat/chat-context';
import { ChatHandler } from './chat/chat.handler';
import { ChatSessions } from './chat/chat-sessions.usecase';
import { SendChatMessage } from './chat/send-chat-message.usecase';
import { HOOK_RUNNER, hookRunnerFor } from './permissions/hook-runner';
import { HooksService, PLUGIN_HOOK_SOURCE } from './permissions/hooks.service';
import { RunPosture } from './runs/sandbox-posture';
import { PluginHooksHandler } from './plugin-hooks/plugin-hooks.handler';
import { PluginHooksService } from './plugin-hooks/plugin-hooks.service';
import { PermissionSettingsService } from './permissions/permission-settings.service';
import { PermissionsHandler } from './permissions/permissions.handler';
import { PermissionsService } from './permissions/permissions.service';
import { ActiveRuns } from './runs/active-runs';
import { RunEventOutbox } from './runs/engine/run-event-outbox';
import { RunsHandler } from './runs/runs.handler';
import { ControlRun } from './runs/control-run.usecase';
import { DeriveRun } from './runs/derive-run.usecase';
import { RunLauncher } from './runs/run-launcher';
import { RunQueries } from './runs/run-queries';
import { StartRun } from './runs/start-run.usecase';
import { ToolCatalogs } from './runs/tool-catalogs';
import { BullTaskJobs, TASK_JOBS } from './tasks/task-jobs';
import { systemWorkerTime, TASK_WORKER_TIME, TaskWorker } from './tasks/task-worker';
import { WorkflowRuns } from './workflows/workflow-runs.service';
import { WorkflowsHandler } from './workflows/workflows.handler';
import { InputOptionsUseCase } from './workflows/input-options.usecase';
import { InputRequests } from './inputs/input-requests.usecase';
import { InputsHandler } from './inputs/inputs.handler';
import { InputWaits } from './inputs/input-waits';

/**
 * The executor's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService.
 */
@Module({
  controllers: [
    RunsHandler,
    PermissionsHandler,
    WorkflowsHandler,
    ChatHandler,
    PluginHooksHandler,
    InputsHandler,
  ],
  providers: [
    ...RUNS_POOL_PROVIDERS,
    RunsRepository,
    PermissionsRepository,
    PermissionSettingsService,
    HooksService,
    PluginHooksRepository,
    PluginHooksService,
    { provide: PLUGIN_HOOK_SOURCE, useExisting: PluginHooksService },
    { provide: HOOK_RUNNER, inject: [APP_CONFIG], useFactory: hookRunnerFor },
    PermissionsService,
    ActiveRuns,
    {
      provide: RunEventOutbox,
      inject: [BUS, APP_CONFIG],
      useFactory: (bus: Bus, config: AppConfig) => new RunEventOutbox(bus, config.runs.eventWindowMs),
    },
    RegistryPosture,
    { provide: POSTURE_SOURCE, useExisting: RegistryPosture },
    RunPosture,
    OwnerFeedOutbox,
    RunLauncher,
    ToolCatalogs,
    PublishedWorkflows,
    StartRun,
    ControlRun,
    DeriveRun,
    RunQueries,
    WorkflowRuns,
    InputOptionsUseCase,
    TaskWorker,
    { provide: TASK_JOBS, useClass: BullTaskJobs },
    { provide: TASK_WORKER_TIME, useValue: systemWorkerTime },
    ChatRepository,
    InputRequestsRepository,
    InputWaits,
    InputRequests,
    ActiveChats,
    ChatSessions,
    SendChatMessage,
    // Cross-session memory replaces this provider.
    { provide: CHAT_CONTEXT, useClass: MemoryChatContext },
  ],
})
export class ExecutorModule {}
