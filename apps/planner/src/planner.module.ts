import { Module } from '@nestjs/common';
import { WorkflowsRepository, type PrismaClient } from '@switchyard/server-db';
import { PRISMA } from '@switchyard/server-runtime';
import { PlanDrafter } from './plans/plan-drafter';
import { PlansHandler } from './plans/plans.handler';
import { WorkflowsHandler } from './workflows/workflows.handler';
import { WorkflowsService } from './workflows/workflows.service';

/**
 * The planner's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService; feature handlers register here as they arrive.
 */
@Module({
  controllers: [PlansHandler, WorkflowsHandler],
  providers: [
    PlanDrafter,
    {
      provide: WorkflowsRepository,
      useFactory: (prisma: PrismaClient) => new WorkflowsRepository(prisma),
      inject: [PRISMA],
    },
    WorkflowsService,
  ],
})
export class PlannerModule {}
