import { loadConfig, type AppConfig } from '@switchyard/server-config';
import { bootstrapService, type BootstrapOptions, type RunningService } from '@switchyard/server-runtime';
import { SchedulerModule } from './scheduler.module';

export function schedulerOptions(config: AppConfig = loadConfig('scheduler')): BootstrapOptions {
  return { config, modules: [SchedulerModule], uses: { postgres: true, redis: true } };
}

export function bootstrap(config?: AppConfig): Promise<RunningService> {
  return bootstrapService(schedulerOptions(config));
}
