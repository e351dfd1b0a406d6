import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import {
  SchedulesRepository,
  WebhooksRepository,
  type ClaimPlan,
  type ScheduleClaim,
  type ScheduleRow,
} from '@switchyard/server-db-tasks';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER } from '@switchyard/server-runtime';
import { CLOCK, type Clock } from '../clock';
import { TasksService } from '../tasks/tasks.service';
import { TriggerMetrics } from '../triggers/trigger-metrics';
import { TriggerPosture } from '../triggers/trigger-posture';
import { countBetween, nextAfter } from './calendar';
import { ruleOf } from './schedules.service';

const TICK_MS = 200;
/** Claims taken per transaction; a tick goes on until nothing is due. */
const BATCH = 250;
/** A claim (schedule or webhook) unsettled this long was caught in a crash window. */
export const CLAIM_GRACE_MS = 30_000;
const SWEEP_EVERY_MS = 5_000;
const FIRE_HISTORY_MS = 7 * 24 * 3600 * 1000;

/** How a due schedule moves on at `now`: the overdue occurrences coalesce into this fire. */
export function planClaim(row: ScheduleRow, now: Date): ClaimPlan {
  const rule = ruleOf(row);
  const due = row.nextFireAt ?? now;
  const coalesced = countBetween(rule, due, now);
  const next = nextAfter(rule, now.getTime() > due.getTime() ? now : due);
  if (next) return { nextFireAt: next, status: 'active', coalesced };
  return {
    nextFireAt: null,
    status: row.recurrence.type === 'interval' ? 'expired' : 'completed',
    coalesced,
  };
}

/**
 * Fires due schedules on every replica. Per tick: claim a batch of due occurrences (committed, the
 * schedules moved on, other replicas skip the locked rows), write their batch tasks in one statement
 * that re-checks each claim and its workflow, admit the tasks, settle the claims. A crash anywhere
 * leaves claims unsettled: the sweep reports them interrupted after CLAIM_GRACE_MS, never replays.
 */
@Injectable()
export class ScheduleFirer implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private lastSweep = 0;
  private stopped = false;

  constructor(
    private readonly repo: SchedulesRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly tasks: TasksService,
    private readonly metrics: TriggerMetrics,
    private readonly posture: TriggerPosture,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One pass (ticks never overlap on a replica). */
  tick(): Promise<void> {
    if (this.running || this.stopped) return this.running ?? Promise.resolve();
    this.running = this.pass()
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'schedule tick failed'))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async pass(): Promise<void> {
    const holdSandboxed = await this.posture.holdSandboxed();
    for (;;) {
      if (!(await this.repo.anyDue(this.clock.now(), { holdSandboxed }))) break;
      const claims = await this.repo.claimDue(this.clock.now(), BATCH, planClaim, randomUUID, {
        holdSandboxed,
      });
      if (!claims.length) break;
      await this.submit(claims);
      if (claims.length < BATCH || this.stopped) break;
    }
    const now = this.clock.now();
    if (now.getTime() - this.lastSweep >= SWEEP_EVERY_MS || now.getTime() < this.lastSweep) {
      this.lastSweep = now.getTime();
      await this.sweep(now);
    }
  }

  private async submit(claims: ScheduleClaim[]): Promise<void> {
    this.metrics.claimed('schedule', 'new', claims.length);
    this.metrics.missedFires(
      'coalesced',
      claims.reduce((n, c) => n + c.coalesced, 0),
    );
    const { written, refused } = await this.repo.writeTasks(
      claims.map((c) => ({ fireId: c.fireId, taskId: randomUUID() })),
    );
    const now = this.clock.now();
    if (refused.length) {
      await this.repo.failClaims(
        refused,
        'not submitted: its workflow is not published, or was deleted',
        now,
      );
      for (let i = 0; i < refused.length; i++) this.metrics.fired('skipped');
    }
    const admitted: string[] = [];
    await Promise.all(
      written.map(async (w) => {
        const refusal = await this.tasks.admitWritten({
          id: w.taskId,
          ownerId: w.ownerId,
          priority: w.priority,
          createdAt: w.createdAt,
        });
        if (refusal) {
          await this.repo.failClaims([w.fireId], `not submitted: ${refusal.message}`, this.clock.now());
          this.metrics.fired('refused');
        } else {
          admitted.push(w.fireId);
          this.metrics.fired('submitted', w.createdAt.getTime() - w.occurrenceAt.getTime());
        }
      }),
    );
    await this.repo.markSubmitted(admitted, this.clock.now());
  }

  private async sweep(now: Date): Promise<void> {
    const before = new Date(now.getTime() - CLAIM_GRACE_MS);
    const fires = await this.repo.interruptStale(before, now);
    const deliveries = await this.webhooks.interruptStale(before, now);
    this.metrics.missedFires('interrupted', fires);
    this.metrics.delivery('INTERRUPTED', deliveries);
    if (fires || deliveries)
      this.logger.warn(
        { fires, deliveries },
        'claims caught in a crash window were marked interrupted; they are not replayed',
      );
    await this.repo.pruneFires(new Date(now.getTime() - FIRE_HISTORY_MS));
    await this.webhooks.prune();
  }
}
