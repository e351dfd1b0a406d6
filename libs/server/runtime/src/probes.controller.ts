import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Metrics } from '@switchyard/server-observability';
import { HealthService } from './health.service';
import { METRICS } from './tokens';

/** Kubernetes probes and Prometheus scraping, on every service's HTTP port. */
@Controller()
export class ProbesController {
  constructor(
    private readonly health: HealthService,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

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

  @Get('metrics')
  async scrape(@Res() res: Response): Promise<void> {
    res.type(this.metrics.registry.contentType).send(await this.metrics.registry.metrics());
  }
}
