import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  Rpc,
  Routes,
  SERVICE_NAMES,
  type PlatformHealth,
  type ServiceHealth,
  type ServiceName,
  type ServiceStatus,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { APP_CONFIG, BUS, HealthService, roundMs } from '@switchyard/server-runtime';
import { callContext, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

@Controller()
export class HealthController {
  constructor(
    private readonly health: HealthService,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Asks every service over NATS (each with HEALTH_TIMEOUT_MS) while checking NATS/Postgres/Redis. */
  @Endpoint(Routes.health)
  async platform(@Req() req: GatewayRequest, @Res() res: Response): Promise<void> {
    const ctx = callContext(undefined, req.correlationId);
    const others = SERVICE_NAMES.filter((s) => s !== 'gateway');
    const [own, deps, ...answers] = await Promise.all([
      this.health.check(),
      this.health.dependencies(),
      ...others.map((s) => this.askService(s, ctx)),
    ]);
    const services = { gateway: statusOf(own, 0) } as Record<ServiceName, ServiceStatus>;
    others.forEach((s, i) => (services[s] = answers[i] as ServiceStatus));
    const dependencies = {
      nats: deps.nats ?? { status: 'down' as const, latencyMs: 0, error: 'not checked' },
      postgres: deps.postgres ?? { status: 'down' as const, latencyMs: 0, error: 'not checked' },
      redis: deps.redis ?? { status: 'down' as const, latencyMs: 0, error: 'not checked' },
    };
    const down = [
      ...Object.entries(services)
        .filter(([, s]) => s.status === 'down')
        .map(([n]) => n),
      ...Object.entries(dependencies)
        .filter(([, d]) => d.status !== 'up')
        .map(([n]) => n),
    ];
    const features = Object.assign({}, ...answers.map((a) => a.features ?? {})) as PlatformHealth['features'];
    const body: PlatformHealth = {
      status: down.length ? 'down' : 'up',
      down,
      services,
      dependencies,
      features,
      checkedAt: new Date().toISOString(),
    };
    res.status(down.length ? 503 : 200).json(body);
  }

  @Endpoint(Routes.service)
  async service(
    @In() input: Input<typeof Routes.service>,
    @Req() req: GatewayRequest,
  ): Promise<ServiceHealth> {
    const name = input.params.name;
    if (name === 'gateway') return this.health.check();
    return this.bus.call(
      Rpc.health[name],
      {},
      {
        timeoutMs: this.config.rpc.healthTimeoutMs,
        ctx: callContext(req.principal, req.correlationId),
      },
    );
  }

  private async askService(
    service: Exclude<ServiceName, 'gateway'>,
    ctx: ReturnType<typeof callContext>,
  ): Promise<ServiceStatus & Pick<ServiceHealth, 'features'>> {
    const started = performance.now();
    try {
      const h = await this.bus.call(
        Rpc.health[service],
        {},
        { timeoutMs: this.config.rpc.healthTimeoutMs, ctx },
      );
      return { ...statusOf(h, performance.now() - started), ...(h.features ? { features: h.features } : {}) };
    } catch (err) {
      return {
        status: 'down',
        latencyMs: roundMs(performance.now() - started),
        error: (err as Error).message,
      };
    }
  }
}

function statusOf(h: ServiceHealth, latencyMs: number): ServiceStatus {
  return {
    status: h.status,
    latencyMs: roundMs(latencyMs),
    instanceId: h.instanceId,
    version: h.version,
    uptimeSeconds: h.uptimeSeconds,
  };
}
