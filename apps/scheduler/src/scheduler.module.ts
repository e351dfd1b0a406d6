import { Module, type Type } from '@nestjs/common';
import {
  SchedulesRepository,
  TASKS_POOL_PROVIDERS,
  TasksRepository,
  WebhooksRepository,
} from '@switchyard/server-db-tasks';
import {
  OwnerFeedOutbox,
  POSTURE_SOURCE,
  PublishedWorkflows,
  RegistryPosture,
} from '@switchyard/server-runtime';
import { CLOCK, systemClock, type Clock } from './clock';
import { ScheduleFirer } from './schedules/schedule-firer';
import { SchedulesHandler } from './schedules/schedules.handler';
import { SchedulesService } from './schedules/schedules.service';
import { TaskFeed } from './tasks/task-feed';
import { TaskMetrics } from './tasks/task-metrics';
import { TaskTransitions } from './tasks/task-transitions';
import { TasksHandler } from './tasks/tasks.handler';
import { TasksService } from './tasks/tasks.service';
import { TriggerMetrics } from './triggers/trigger-metrics';
import { UnattendedCheck } from './triggers/unattended-check';
import { TriggerPosture } from './triggers/trigger-posture';
import { WebhooksHandler } from './webhooks/webhooks.handler';
import { WebhooksService } from './webhooks/webhooks.service';

/**
 * The scheduler's features, on the given clock (the system's; tests move theirs by hand). The service
 * kit (config, logs, metrics, NATS, Postgres, Redis, probes, health RPC) is added by bootstrapService.
 */
export function schedulerModule(clock: Clock = systemClock): Type<unknown> {
  @Module({
    controllers: [TasksHandler, SchedulesHandler, WebhooksHandler],
    providers: [
      ...TASKS_POOL_PROVIDERS,
      TasksRepository,
      SchedulesRepository,
      WebhooksRepository,
      { provide: CLOCK, useValue: clock },
      TaskMetrics,
      TaskTransitions,
      OwnerFeedOutbox,
      TaskFeed,
      PublishedWorkflows,
      TasksService,
      TriggerMetrics,
      UnattendedCheck,
      RegistryPosture,
      { provide: POSTURE_SOURCE, useExisting: RegistryPosture },
      TriggerPosture,
      SchedulesService,
      ScheduleFirer,
      WebhooksService,
    ],
  })
  class SchedulerModule {}
  return SchedulerModule;
}
