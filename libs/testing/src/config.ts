import type { ServiceName } from '@switchyard/contracts';
import { loadConfig, type AppConfig } from '@switchyard/server-config';

/** A real AppConfig for a test: ports 0 (the gateway's metrics port too), quiet logs, the given database and subject prefix. */
export function testConfig(service: ServiceName, env: Record<string, string>): AppConfig {
  return loadConfig(service, {
    NODE_ENV: 'test',
    PORT: '0',
    METRICS_PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    SHUTDOWN_GRACE_MS: '5000',
    ...env,
  });
}
