import { Module } from '@nestjs/common';
import { WorkflowsRepository } from '@switchyard/server-db-workflows';
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
  providers: [PlanDrafter, WorkflowsRepository, WorkflowsService],
})
export class PlannerModule {}
