import { Module } from '@nestjs/common';
import { RunsRepository, type PrismaClient } from '@switchyard/server-db';
import { PRISMA } from '@switchyard/server-runtime';
import { ActiveRuns } from './runs/active-runs';
import { RunsHandler } from './runs/runs.handler';
import { RunsService } from './runs/runs.service';

/**
 * The executor's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService.
 */
@Module({
  controllers: [RunsHandler],
  providers: [
    {
      provide: RunsRepository,
      useFactory: (prisma: PrismaClient) => new RunsRepository(prisma),
      inject: [PRISMA],
    },
    ActiveRuns,
    RunsService,
  ],
})
export class ExecutorModule {}
