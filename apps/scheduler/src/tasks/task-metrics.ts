import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { TaskPriority } from '@switchyard/contracts';
import type { Metrics } from '@switchyard/server-observability';
import { METRICS } from '@switchyard/server-runtime';

const PRIORITIES: readonly TaskPriority[] = ['interactive', 'normal', 'batch'];

/** The seed's background-task metrics, on the service's /metrics. */
@Injectable()
export class TaskMetrics {
  private readonly dispatchedTotal: Counter<'priority'>;
  private readonly rejectedTotal: Counter<'priority' | 'scope'>;
  private readonly queueWait: Histogram<'outcome'>;
  private readonly inQueue: Gauge<'priority'>;
  private readonly oldestWait: Gauge<'priority'>;

  constructor(@Inject(METRICS) metrics: Metrics) {
    const registers = [metrics.registry];
    this.dispatchedTotal = new Counter({
      name: 'switchyard_bg_tasks_dispatched_total',
      help: 'Background tasks handed to an executor, by priority',
      labelNames: ['priority'],
      registers,
    });
    this.rejectedTotal = new Counter({
      name: 'switchyard_bg_tasks_rejected_total',
      help: 'Background task submissions refused for capacity, by priority and scope',
      labelNames: ['priority', 'scope'],
      registers,
    });
    this.queueWait = new Histogram({
      name: 'switchyard_bg_task_queue_wait_seconds',
      help: 'Time a background task waited in the queue, by outcome (executed or cancelled)',
      labelNames: ['outcome'],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
      registers,
    });
    this.inQueue = new Gauge({
      name: 'switchyard_bg_queue_inqueue',
      help: 'Background tasks waiting, by priority',
      labelNames: ['priority'],
      registers,
    });
    this.oldestWait = new Gauge({
      name: 'switchyard_bg_queue_oldest_wait_ms',
      help: 'How long the oldest waiting background task has waited, by priority',
      labelNames: ['priority'],
      registers,
    });
  }

  dispatched(priority: TaskPriority, waitedMs: number): void {
    this.dispatchedTotal.inc({ priority });
    this.queueWait.observe({ outcome: 'executed' }, waitedMs / 1000);
  }

  cancelledWhileQueued(waitedMs: number): void {
    this.queueWait.observe({ outcome: 'cancelled' }, waitedMs / 1000);
  }

  rejected(priority: TaskPriority, scope: string): void {
    this.rejectedTotal.inc({ priority, scope });
  }

  async observeQueues(c: {
    queuedByPriority: Record<TaskPriority, number>;
    oldestWaitMs: Record<TaskPriority, number | null>;
  }): Promise<void> {
    for (const p of PRIORITIES) {
      this.inQueue.set({ priority: p }, c.queuedByPriority[p]);
      this.oldestWait.set({ priority: p }, c.oldestWaitMs[p] ?? 0);
    }
  }
}
