import { loadConfig, type AppConfig } from '@switchyard/server-config';
import { bootstrapService, type BootstrapOptions, type RunningService } from '@switchyard/server-runtime';
import { ToolRegistryModule } from './tool-registry.module';

export function toolRegistryOptions(config: AppConfig = loadConfig('tool-registry')): BootstrapOptions {
  return { config, modules: [ToolRegistryModule], uses: { postgres: true, redis: true } };
}

export function bootstrap(config?: AppConfig): Promise<RunningService> {
  return bootstrapService(toolRegistryOptions(config));
}
