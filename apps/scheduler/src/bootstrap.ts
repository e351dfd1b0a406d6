import { loadConfig, type AppConfig } from '@switchyard/server-config';
import { bootstrapService, type BootstrapOptions, type RunningService } from '@switchyard/server-runtime';
import { systemClock, type Clock } from './clock';
import { schedulerModule } from './scheduler.module';

export function schedulerOptions(
  config: AppConfig = loadConfig('scheduler'),
  clock: Clock = systemClock,
): BootstrapOptions {
  return { config, modules: [schedulerModule(clock)], uses: { postgres: true, redis: true } };
}

export function bootstrap(config?: AppConfig, clock?: Clock): Promise<RunningService> {
  return bootstrapService(schedulerOptions(config, clock));
}
