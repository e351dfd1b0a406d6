import { loadConfig, type AppConfig } from '@switchyard/server-config';
import { bootstrapService, type BootstrapOptions, type RunningService } from '@switchyard/server-runtime';
import { PlannerModule } from './planner.module';

export function plannerOptions(config: AppConfig = loadConfig('planner')): BootstrapOptions {
  return { config, modules: [PlannerModule], uses: { postgres: true, redis: false } };
}

export function bootstrap(config?: AppConfig): Promise<RunningService> {
  return bootstrapService(plannerOptions(config));
}
