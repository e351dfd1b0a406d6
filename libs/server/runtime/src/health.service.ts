import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Dependency, DependencyCheck, FeatureCheck, ServiceHealth } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { pingPostgres, type PrismaClient } from '@switchyard/server-db';
import { pingRedis, type Redis } from '@switchyard/server-queue';
import { APP_CONFIG, BUS, PRISMA, REDIS, SERVICE_INFO, type ServiceInfo } from './tokens';

/** Runs one dependency probe under a deadline and reports how long it took. */
async function timed(probe: () => Promise<unknown>, timeoutMs: number): Promise<DependencyCheck> {
  const started = performance.now();
  try {
    await withTimeout(probe(), timeoutMs);
    return { status: 'up', latencyMs: roundMs(performance.now() - started) };
  } catch (err) {
    return { status: 'down', latencyMs: roundMs(performance.now() - started), error: (err as Error).message };
  }
}

/** Milliseconds to two decimals, as health reports show them. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/** Checks this process's own dependencies; used by /readyz and by `<service>.health.check`. */
@Injectable()
export class HealthService {
  private readonly features = new Map<string, () => FeatureCheck>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SERVICE_INFO) private readonly info: ServiceInfo,
    @Inject(BUS) private readonly bus: Bus,
    @Optional() @Inject(PRISMA) private readonly prisma?: PrismaClient,
    @Optional() @Inject(REDIS) private readonly redis?: Redis,
  ) {}

  async dependencies(): Promise<Partial<Record<Dependency, DependencyCheck>>> {
    const timeout = this.config.rpc.healthTimeoutMs;
    const prisma = this.prisma;
    const redis = this.redis;
    const [nats, postgres, redisCheck] = await Promise.all([
      timed(async () => {
        if (!this.bus.isConnected()) throw new Error('not connected');
        await this.bus.ping();
      }, timeout),
      prisma ? timed(() => pingPostgres(prisma), timeout) : undefined,
      redis ? timed(() => pingRedis(redis), timeout) : undefined,
    ]);
    return {
      nats,
      ...(postgres ? { postgres } : {}),
      ...(redisCheck ? { redis: redisCheck } : {}),
    };
  }

  /** A capability this service reports in its health (e.g. the command sandbox). */
  addFeature(name: string, check: () => FeatureCheck): void {
    this.features.set(name, check);
  }

  async check(): Promise<ServiceHealth> {
    const checks = await this.dependencies();
    const allUp = Object.values(checks).every((c) => c.status === 'up');
    const features = Object.fromEntries([...this.features].map(([name, check]) => [name, check()]));
    return {
      ...(this.features.size ? { features } : {}),
      service: this.config.service,
      status: allUp ? 'up' : 'degraded',
      instanceId: this.info.instanceId,
      version: this.config.version,
      uptimeSeconds: Math.round((Date.now() - this.info.startedAt) / 1000),
      checks,
    };
  }

  get draining(): boolean {
    return this.info.draining;
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
