import { Module } from '@nestjs/common';
import { MemoryRepository } from '@switchyard/server-db-memory';
import { WorkflowsRepository } from '@switchyard/server-db-workflows';
import { MemoryHandler } from './memory/memory.handler';
import { MemoryRecall } from './memory/memory-recall';
import { MemoryService } from './memory/memory.service';
import { PlanDrafter } from './plans/plan-drafter';
import { PlansHandler } from './plans/plans.handler';
import { WorkflowsHandler } from './workflows/workflows.handler';
import { WorkflowsService } from './workflows/workflows.service';

/**
 * The planner's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService; feature handlers register here as they arrive.
 */
@Module({
  controllers: [PlansHandler, WorkflowsHandler, MemoryHandler],
  providers: [
    PlanDrafter,
    WorkflowsRepository,
    WorkflowsService,
    MemoryRepository,
    MemoryService,
    MemoryRecall,
  ],
})
export class PlannerModule {}
