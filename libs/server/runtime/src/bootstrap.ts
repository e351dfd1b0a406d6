import { Module, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Request, Response, NextFunction } from 'express';
import type { AppConfig } from '@switchyard/server-config';
import { SwitchyardNatsServer } from '@switchyard/server-bus';
import {
  correlationIdFrom,
  startOtlpPush,
  NestPinoLogger,
  type ContextStore,
  type Logger,
  type Metrics,
} from '@switchyard/server-observability';
import { ServiceKitModule, type ServiceKitOptions } from './service-kit.module';
import { CONTEXT, LOGGER, METRICS, SERVICE_INFO, type ServiceInfo } from './tokens';

export interface BootstrapOptions {
  readonly config: AppConfig;
  /** The service's feature module(s). */
  readonly modules: Type<unknown>[];
  readonly uses: ServiceKitOptions['uses'];
  /** HTTP setup that must come before the JSON body parser (routes that read their body otherwise). */
  readonly beforeBodyParser?: (app: NestExpressApplication) => void;
  /** Extra HTTP setup (the gateway adds its error filter and request context here). */
  readonly configureHttp?: (app: NestExpressApplication) => void | Promise<void>;
  readonly logDestination?: ServiceKitOptions['logDestination'];
}

export interface RunningService {
  readonly app: NestExpressApplication;
  readonly port: number;
  readonly url: string;
  /** Where Prometheus scrapes `/metrics`: `url` itself, or the gateway's own metrics port. */
  readonly metricsUrl: string;
  readonly logger: Logger;
  /** Graceful: stop taking work, finish what is in flight, close connections. */
  close(): Promise<void>;
}

/** `/metrics` alone, on a port of its own (the gateway's, whose HTTP port is public). */
async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

function urlOf(host: string, port: number): string {
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
}

/** Builds and starts one service: HTTP (probes, metrics, routes) plus its NATS queue-group server. */
export async function bootstrapService(opts: BootstrapOptions): Promise<RunningService> {
  const { config } = opts;

  @Module({
    imports: [
      ServiceKitModule.forRoot({
        config,
        uses: opts.uses,
        ...(opts.logDestination ? { logDestination: opts.logDestination } : {}),
      }),
      ...opts.modules,
    ],
  })
  class RootModule {}

  const app = await NestFactory.create<NestExpressApplication>(RootModule, {
    bufferLogs: true,
    bodyParser: false,
  });
  const logger = app.get<Logger>(LOGGER);
  const metrics = app.get<Metrics>(METRICS);
  const context = app.get<ContextStore>(CONTEXT);
  const info = app.get<ServiceInfo>(SERVICE_INFO);
  // OTLP push of the same metrics, when a collector is configured (Prometheus /metrics stays).
  const stopOtlp = config.otlp.endpoint
    ? startOtlpPush(metrics.registry, {
        endpoint: config.otlp.endpoint,
        service: config.service,
        intervalMs: config.otlp.intervalMs,
        onError: (err) => logger.warn({ err: err.message }, 'OTLP metrics push failed'),
      })
    : undefined;
  app.useLogger(new NestPinoLogger(logger));
  app.disable('x-powered-by');
  app.use((req: Request, res: Response, next: NextFunction) => {
    const correlationId = correlationIdFrom(req.headers['x-correlation-id']);
    (req as Request & { correlationId: string }).correlationId = correlationId;
    res.setHeader('x-correlation-id', correlationId);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
      metrics.httpDuration.observe({ method: req.method, route }, seconds);
    });
    context.run({ correlationId }, next);
  });
  opts.beforeBodyParser?.(app);
  app.useBodyParser('json', { limit: config.http.bodyLimit });
  await opts.configureHttp?.(app);

  const server = new SwitchyardNatsServer({
    ...config.nats,
    queue: config.service,
    name: `${config.service}-server-${info.instanceId}`,
    subjectPrefix: config.nats.subjectPrefix,
    graceMs: config.shutdownGraceMs,
    onShutdownTimeout: (n) =>
      logger.warn({ inFlight: n }, 'shutdown grace period ended with requests in flight'),
    context,
    onRequestDone: (subject, outcome, seconds) => metrics.recordRpc(subject, outcome, seconds),
  });
  app.connectMicroservice({ strategy: server }, { inheritAppConfig: false });

  const metricsServer =
    config.http.metricsPort === undefined
      ? undefined
      : await serveMetrics(metrics, config.http.host, config.http.metricsPort);
  await app.startAllMicroservices();
  await app.listen(config.http.port, config.http.host);
  const port = (app.getHttpServer().address() as AddressInfo).port;
  const url = urlOf(config.http.host, port);
  const metricsUrl = metricsServer
    ? urlOf(config.http.host, (metricsServer.address() as AddressInfo).port)
    : url;
  logger.info(
    {
      port,
      url,
      metricsUrl,
      natsQueue: config.service,
      subjectPrefix: config.nats.subjectPrefix || undefined,
    },
    `${config.service} ready`,
  );

  let closing: Promise<void> | undefined;
  return {
    app,
    port,
    url,
    metricsUrl,
    logger,
    close: () => {
      closing ??= (async () => {
        info.draining = true;
        logger.info(
          { inFlight: server.inFlightCount },
          'shutting down: no new work, finishing in-flight requests',
        );
        await app.close();
        await new Promise((resolve) => (metricsServer ? metricsServer.close(resolve) : resolve(undefined)));
        await stopOtlp?.();
      })();
      return closing;
    },
  };
}

/**
 * What `main.ts` calls: boots the service and wires SIGTERM/SIGINT to a graceful close, with a hard
 * deadline so a stuck dependency cannot keep a terminating pod alive forever.
 */
export async function runService(opts: BootstrapOptions): Promise<void> {
  let running: RunningService;
  try {
    running = await bootstrapService(opts);
  } catch (err) {
    process.stderr.write(`${opts.config.service}: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const stop = (signal: NodeJS.Signals | 'parent gone') => {
    running.logger.info({ signal }, 'signal received');
    const deadline = setTimeout(() => {
      running.logger.error('graceful shutdown took too long; exiting');
      process.exit(1);
    }, opts.config.shutdownGraceMs + 5_000);
    deadline.unref();
    running.close().then(
      () => process.exit(0),
      (err: unknown) => {
        running.logger.error({ err }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  // Started with an IPC channel (the test stack does; a deployment does not): when the parent is
  // gone, however it died, this service closes too, instead of running on unseen and loading the
  // machine for whatever runs next (a killed test run left a whole stack behind).
  if (process.channel) {
    process.channel.unref();
    if (process.connected) process.once('disconnect', () => stop('parent gone'));
    else stop('parent gone');
  }
}
