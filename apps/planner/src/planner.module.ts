import { Module } from '@nestjs/common';
import { PlanDrafter } from './plans/plan-drafter';
import { PlansHandler } from './plans/plans.handler';

/**
 * The planner's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService; feature handlers register here as they arrive.
 */
@Module({
  controllers: [PlansHandler],
  providers: [PlanDrafter],
})
export class PlannerModule {}
