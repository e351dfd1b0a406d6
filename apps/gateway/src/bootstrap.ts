import { loadConfig, type AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import {
  bootstrapService,
  LOGGER,
  type BootstrapOptions,
  type RunningService,
} from '@switchyard/server-runtime';
import { JsonFastPath } from './http/json-fast-path';
import { expressProblemHandler } from './http/problem.filter';
import { GatewayModule } from './gateway.module';
import { StreamFastPath } from './runs/stream-fast-path';
import { installHookBodyParser } from './triggers/hook-intake';
import { installUploadBodyBypass } from './files/files.controller';
import { webClient } from './web/web-client';

export function gatewayOptions(config: AppConfig = loadConfig('gateway')): BootstrapOptions {
  return {
    config,
    modules: [GatewayModule],
    uses: { postgres: true, redis: true },
    beforeBodyParser: (app) => {
      installHookBodyParser(app);
      installUploadBodyBypass(app);
    },
    configureHttp: (app) => {
      app.set('trust proxy', 'loopback, linklocal, uniquelocal');
      // The admin web client at / (GET/HEAD outside /api, /mcp and the probes). Public by design and
      // outside the AuthGuard (which guards Nest routes only): static files, no data (see webClient).
      app.use(webClient(config.http.webDir));
      // Body-parser failures (malformed JSON, too large) happen before Nest's filters see them.
      app.use(expressProblemHandler(app.get<Logger>(LOGGER)));
      // Long-lived SSE streams skip Express (see StreamFastPath), and so does a task's submit
      // (see JsonFastPath).
      app.get(StreamFastPath).install(app.getHttpServer());
      app.get(JsonFastPath).install(app.getHttpServer());
    },
  };
}

export function bootstrap(config?: AppConfig): Promise<RunningService> {
  return bootstrapService(gatewayOptions(config));
}
