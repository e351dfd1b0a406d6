import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Metrics } from '@switchyard/server-observability';
import { HealthService } from './health.service';
import { Public } from './public';
import { METRICS } from './tokens';

/** Kubernetes probes, on every service's HTTP port. */
@Public()
@Controller()
export class ProbesController {
  constructor(private readonly health: HealthService) {}

  /** Liveness: the event loop answers. Never checks dependencies (that would restart healthy pods). */
  @Get('healthz')
  alive(): { status: 'alive' } {
    return { status: 'alive' };
  }

  /** Readiness: this replica can do its work now (its dependencies answer, it is not shutting down). */
  @Get('readyz')
  async ready(@Res() res: Response): Promise<void> {
    const checks = await this.health.dependencies();
    const down = Object.entries(checks)
      .filter(([, c]) => c.status !== 'up')
      .map(([name]) => name);
    if (this.health.draining) down.push('shutting-down');
    res.status(down.length ? 503 : 200).json({ status: down.length ? 'not_ready' : 'ready', down, checks });
  }
}

/**
 * Prometheus scraping on the HTTP port of a service whose port is internal (every one but the
 * gateway). Deliberately not `@Public()`: the gateway serves metrics on METRICS_PORT instead and
 * does not mount this, and were it ever mounted there its guard would deny it.
 */
@Controller()
export class MetricsController {
  constructor(@Inject(METRICS) private readonly metrics: Metrics) {}

  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
