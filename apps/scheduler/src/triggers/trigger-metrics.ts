import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram } from 'prom-client';
import type { DeliveryState } from '@switchyard/contracts';
import type { Metrics } from '@switchyard/server-observability';
import { METRICS } from '@switchyard/server-runtime';

/** Schedule fires and webhook deliveries, on the scheduler's /metrics. */
@Injectable()
export class TriggerMetrics {
  private readonly claims: Counter<'source' | 'outcome'>;
  private readonly fires: Counter<'outcome'>;
  private readonly missed: Counter<'reason'>;
  private readonly lateness: Histogram;
  private readonly deliveries: Counter<'state'>;

  constructor(@Inject(METRICS) metrics: Metrics) {
    const registers = [metrics.registry];
    this.claims = new Counter({
      name: 'switchyard_trigger_claims_total',
      help: 'At-most-once claims committed before submission, by source (schedule, webhook) and outcome (new, repeat)',
      labelNames: ['source', 'outcome'],
      registers,
    });
    this.fires = new Counter({
      name: 'switchyard_schedule_fires_total',
      help: 'Schedule occurrences, by outcome: submitted, refused (capacity), skipped (workflow gone or unpublished)',
      labelNames: ['outcome'],
      registers,
    });
    this.missed = new Counter({
      name: 'switchyard_schedule_missed_fires_total',
      help: 'Occurrences that did not run: coalesced after downtime, or interrupted in a crash window',
      labelNames: ['reason'],
      registers,
    });
    this.lateness = new Histogram({
      name: 'switchyard_schedule_fire_lateness_seconds',
      help: 'From an occurrence due time to its task accepted',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 60],
      registers,
    });
    this.deliveries = new Counter({
      name: 'switchyard_webhook_deliveries_total',
      help: 'Webhook delivery audit transitions, by the state entered',
      labelNames: ['state'],
      registers,
    });
  }

  claimed(source: 'schedule' | 'webhook', outcome: 'new' | 'repeat', n = 1): void {
    this.claims.inc({ source, outcome }, n);
  }

  fired(outcome: 'submitted' | 'refused' | 'skipped', latenessMs?: number): void {
    this.fires.inc({ outcome });
    if (latenessMs !== undefined) this.lateness.observe(Math.max(0, latenessMs) / 1000);
  }

  missedFires(reason: 'coalesced' | 'interrupted', n: number): void {
    if (n > 0) this.missed.inc({ reason }, n);
  }

  delivery(state: DeliveryState, n = 1): void {
    if (n > 0) this.deliveries.inc({ state }, n);
  }
}
