import { Module } from '@nestjs/common';

/**
 * The planner's features. The service kit (config, logs, metrics, NATS, probes, health RPC) is added by
 * bootstrapService; feature handlers register here as they arrive.
 */
@Module({})
export class PlannerModule {}
