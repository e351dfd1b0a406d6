import { loadConfig, type AppConfig } from '@switchyard/server-config';
import { bootstrapService, type BootstrapOptions, type RunningService } from '@switchyard/server-runtime';
import { ExecutorModule } from './executor.module';

export function executorOptions(config: AppConfig = loadConfig('executor')): BootstrapOptions {
  return { config, modules: [ExecutorModule], uses: { postgres: true, redis: true } };
}

export function bootstrap(config?: AppConfig): Promise<RunningService> {
  return bootstrapService(executorOptions(config));
}
