import {
  Controller,
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  type OnApplicationShutdown,
  Optional,
  type Provider,
  type Type,
} from '@nestjs/common';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Rpc, type ServiceHealth } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { Bus } from '@switchyard/server-bus';
import { createPrisma, type PrismaClient } from '@switchyard/server-db';
import { createRedis, type Redis } from '@switchyard/server-queue';
import { ContextStore, createLogger, Metrics, type Logger } from '@switchyard/server-observability';
import { HealthService } from './health.service';
import { MetricsController, ProbesController } from './probes.controller';
import { RpcHandler, RpcPayload } from './rpc';
import {
  APP_CONFIG,
  BUS,
  CONTEXT,
  LOGGER,
  METRICS,
  PRISMA,
  REDIS,
  SERVICE_INFO,
  type ServiceInfo,
} from './tokens';

export interface ServiceKitOptions {
  readonly config: AppConfig;
  readonly uses: { readonly postgres: boolean; readonly redis: boolean };
  /** Tests pass a stream to capture log lines. */
  readonly logDestination?: Parameters<typeof createLogger>[0]['destination'];
}

/** `<service>.health.check` answered by whichever replica of the queue group gets it. */
function healthRpcController(config: AppConfig): Type<unknown> {
  const contract = Rpc.health[config.service];
  @Controller()
  class HealthRpcController {
    constructor(private readonly health: HealthService) {}

    @RpcHandler(contract)
    check(@RpcPayload(contract) _: unknown): Promise<ServiceHealth> {
      return this.health.check();
    }
  }
  return HealthRpcController;
}

/** Closes the shared connections after Nest has stopped the NATS server and the HTTP listener. */
@Injectable()
class ConnectionCloser implements OnApplicationShutdown {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(SERVICE_INFO) private readonly info: ServiceInfo,
    @Optional() @Inject(PRISMA) private readonly prisma?: PrismaClient,
    @Optional() @Inject(REDIS) private readonly redis?: Redis,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([
      this.bus.close(),
      this.prisma?.$disconnect(),
      this.redis ? this.redis.quit().catch(() => this.redis?.disconnect()) : undefined,
    ]);
    this.logger.info(
      { uptimeSeconds: Math.round((Date.now() - this.info.startedAt) / 1000) },
      'connections closed',
    );
    this.logger.flush();
  }
}

/**
 * Shared infrastructure for one service process: config, logs, metrics, NATS client, and Postgres
 * and Redis when the service uses them; plus the probes and the health RPC.
 */
@Global()
@Module({})
export class ServiceKitModule {
  static forRoot(opts: ServiceKitOptions): DynamicModule {
    const { config } = opts;
    const info: ServiceInfo = {
      instanceId: `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`,
      startedAt: Date.now(),
      uses: opts.uses,
      draining: false,
    };
    const context = new ContextStore();
    const logger = createLogger({
      service: config.service,
      level: config.log.level,
      instanceId: info.instanceId,
      context,
      ...(opts.logDestination ? { destination: opts.logDestination } : {}),
    });
    const providers: Provider[] = [
      { provide: APP_CONFIG, useValue: config },
      { provide: SERVICE_INFO, useValue: info },
      { provide: CONTEXT, useValue: context },
      { provide: LOGGER, useValue: logger },
      { provide: METRICS, useValue: new Metrics(config.service) },
      {
        provide: BUS,
        useFactory: () =>
          Bus.connect({
            ...config.nats,
            name: `${config.service}-client-${info.instanceId}`,
            subjectPrefix: config.nats.subjectPrefix,
            defaultTimeoutMs: config.rpc.timeoutMs,
            validateReplies: config.env === 'test',
            validateEvents: config.env !== 'production',
          }),
      },
      HealthService,
    ];
    if (opts.uses.postgres) {
      providers.push({
        provide: PRISMA,
        useFactory: () =>
          createPrisma({
            url: config.database.url,
            ssl: config.database.ssl,
            poolSize: config.database.poolSize,
            applicationName: `switchyard-${config.service}`,
          }),
      });
    }
    if (opts.uses.redis) {
      providers.push({
        provide: REDIS,
        useFactory: async () => {
          const redis = createRedis({ ...config.redis, name: `switchyard-${config.service}` });
          // Connect now so a missing Redis shows in logs at boot, but do not refuse to start:
          // readiness reports it and ioredis keeps reconnecting.
          await redis
            .connect()
            .catch((err: Error) => logger.warn({ err: err.message }, 'redis not reachable yet'));
          return redis;
        },
      });
    }
    providers.push(ConnectionCloser);
    return {
      module: ServiceKitModule,
      controllers: [
        ProbesController,
        ...(config.http.metricsPort === undefined ? [MetricsController] : []),
        healthRpcController(config),
      ],
      providers,
      exports: [
        APP_CONFIG,
        SERVICE_INFO,
        CONTEXT,
        LOGGER,
        METRICS,
        BUS,
        HealthService,
        ...(opts.uses.postgres ? [PRISMA] : []),
        ...(opts.uses.redis ? [REDIS] : []),
      ],
    };
  }
}
