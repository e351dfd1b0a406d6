import { Module } from '@nestjs/common';
import { TasksRepository, type PrismaClient } from '@switchyard/server-db';
import { PRISMA } from '@switchyard/server-runtime';
import { TaskMetrics } from './tasks/task-metrics';
import { TasksHandler } from './tasks/tasks.handler';
import { TasksService } from './tasks/tasks.service';

/**
 * The scheduler's features. The service kit (config, logs, metrics, NATS, Postgres, Redis, probes,
 * health RPC) is added by bootstrapService.
 */
@Module({
  controllers: [TasksHandler],
  providers: [
    {
      provide: TasksRepository,
      useFactory: (prisma: PrismaClient) => new TasksRepository(prisma),
      inject: [PRISMA],
    },
    TaskMetrics,
    TasksService,
  ],
})
export class SchedulerModule {}
