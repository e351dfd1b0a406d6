import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import {
  AppError,
  WEBHOOK_SIGNATURE_TOLERANCE_SECONDS,
  type CreatedTrigger,
  type DeliverRequest,
  type DeliveryAccepted,
  type DeliveryListQuery,
  type DeliveryPage,
  type DeliveryState,
  type TaskState,
  type Trigger,
  type TriggerBody,
} from '@switchyard/contracts';
import { WebhooksRepository, type TriggerRow } from '@switchyard/server-db-tasks';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { Coalescer, LOGGER } from '@switchyard/server-runtime';
import { CLOCK, type Clock } from '../clock';
import { TasksService } from '../tasks/tasks.service';
import { TaskTransitions } from '../tasks/task-transitions';
import { TriggerMetrics } from '../triggers/trigger-metrics';
import { TriggerPosture } from '../triggers/trigger-posture';
import { checkUnattendedInputs, UnattendedCheck } from '../triggers/unattended-check';

/** A retry of an event id whose first delivery is still being submitted waits this long at most. */
const REPEAT_WAIT_MS = 10_000;
const REPEAT_POLL_MS = 15;

const FOLLOWS: Record<TaskState, DeliveryState> = {
  queued: 'QUEUED',
  running: 'SUBMITTED',
  completed: 'COMPLETED',
  failed: 'FAILED',
  cancelled: 'CANCELLED',
  interrupted: 'INTERRUPTED',
};

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

function unauthenticated(why: string): AppError {
  return new AppError('unauthenticated', why);
}

export function toTrigger(row: TriggerRow, heldReason: string | null = null): Trigger {
  return {
    id: row.id,
    ownerId: row.ownerId,
    workflowId: row.workflowId,
    status: row.status,
    inputs: row.inputs,
    permissionMode: row.permissionMode,
    requireSignature: row.requireSignature,
    url: `/api/workflow-hooks/${row.id}`,
    sandboxPosture: row.sandboxPosture,
    heldReason,
    createdAt: row.createdAt.toISOString(),
    rotatedAt: row.rotatedAt?.toISOString() ?? null,
  };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Webhook triggers and their deliveries. A delivery is authenticated by its trigger's secret (only
 * the digest is kept), claimed in Postgres before its task exists (with an event id, the first claim
 * wins and retries answer its task), then written and admitted as an interactive task.
 */
@Injectable()
export class WebhooksService implements OnModuleInit {
  /** Task transitions heard while the previous ones are being followed go in one statement. */
  private readonly follows = new Coalescer<
    { taskId: string; state: DeliveryState; error: string | null },
    undefined
  >(async (items) => {
    await this.repo.followTasks(items, this.clock.now());
    return items.map(() => undefined);
  });

  constructor(
    private readonly repo: WebhooksRepository,
    private readonly check: UnattendedCheck,
    private readonly tasks: TasksService,
    private readonly transitions: TaskTransitions,
    private readonly metrics: TriggerMetrics,
    private readonly posture: TriggerPosture,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The trigger as shown, with why deliveries are refused now if the sandbox posture holds it. */
  private async view(row: TriggerRow): Promise<Trigger> {
    return toTrigger(row, await this.posture.heldReason(row.sandboxPosture, `webhook trigger ${row.id}`));
  }

  onModuleInit(): void {
    // The audit follows the task a delivery submitted.
    this.transitions.on(async (t) => {
      if (t.fromWebhook === false) return; // known to come from no delivery: nothing to follow
      try {
        await this.follows.call({ taskId: t.taskId, state: FOLLOWS[t.state], error: t.error });
      } catch (err) {
        this.logger.warn({ err: (err as Error).message, taskId: t.taskId }, 'delivery audit not updated');
      }
    });
  }

  // ── the owner's side ────────────────────────────────────────────────────────────────────────

  async create(body: TriggerBody, ctx: CallContext): Promise<CreatedTrigger> {
    const ownerId = requireOwner(ctx, 'webhook triggers');
    await this.check.check({ ...body, complete: false }, ctx);
    const secret = newSecret();
    const row = await this.repo.create({
      id: randomUUID(),
      ownerId,
      workflowId: body.workflowId,
      inputs: body.inputs,
      permissionMode: body.permissionMode,
      requireSignature: body.requireSignature,
      secretDigest: sha256(secret),
      sandboxPosture: await this.posture.forNew(),
    });
    return { ...(await this.view(row)), secret };
  }

  async rotate(id: string, ctx: CallContext): Promise<{ secret: string }> {
    const secret = newSecret();
    await this.repo.rotate(requireOwner(ctx, 'webhook triggers'), id, sha256(secret));
    return { secret };
  }

  async list(ctx: CallContext): Promise<{ items: Trigger[] }> {
    const rows = await this.repo.list(requireOwner(ctx, 'webhook triggers'));
    return { items: await Promise.all(rows.map((r) => this.view(r))) };
  }

  async delete(id: string, ctx: CallContext): Promise<Trigger> {
    return toTrigger(await this.repo.delete(requireOwner(ctx, 'webhook triggers'), id));
  }

  deliveries(id: string, q: DeliveryListQuery, ctx: CallContext): Promise<DeliveryPage> {
    return this.repo.page(requireOwner(ctx, 'webhook triggers'), id, q);
  }

  // ── deliveries ──────────────────────────────────────────────────────────────────────────────

  async deliver(req: DeliverRequest): Promise<DeliveryAccepted> {
    const t = await this.repo.target(req.triggerId);
    // An unknown trigger and a wrong secret look the same to the caller.
    if (!t || !sameDigest(sha256(req.secret), t.secretDigest))
      throw unauthenticated('wrong or missing X-Switchyard-Webhook-Secret for this trigger');
    if (t.requireSignature) this.checkSignature(req.signature);
    if (t.status !== 'active')
      throw new AppError('conflict', `webhook trigger ${t.id} is disabled: its workflow was deleted`);
    await this.posture.assertNotHeld(t.sandboxPosture, `webhook trigger ${t.id}`);
    if (!t.inputSchema)
      throw new AppError(
        'conflict',
        `workflow ${t.workflowId} is not published; this trigger cannot start it`,
      );
    const inputs = { ...t.inputs, ...req.body };
    checkUnattendedInputs(t.inputSchema, req.body, { complete: false });
    checkUnattendedInputs(t.inputSchema, inputs, { complete: true });
    const eventDigest = req.eventId === undefined ? null : sha256(`${t.id}\n${req.eventId}`);
    for (;;) {
      const claim = await this.repo.claim(randomUUID(), t.id, eventDigest, this.clock.now());
      if (claim.claimed) {
        this.metrics.claimed('webhook', 'new');
        this.metrics.delivery('CLAIMED');
        return this.submit(claim.deliveryId, inputs);
      }
      this.metrics.claimed('webhook', 'repeat');
      const first = await this.awaitFirst(claim.deliveryId);
      if (first) return first;
      // The first delivery was refused and gave its claim back: this retry may claim it.
    }
  }

  private checkSignature(sig: DeliverRequest['signature']): void {
    if (!sig)
      throw unauthenticated(
        'this trigger requires X-Switchyard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">',
      );
    if (!sig.valid) throw unauthenticated('X-Switchyard-Signature does not match the body');
    const skew = Math.abs(this.clock.now().getTime() / 1000 - sig.timestamp);
    if (skew > WEBHOOK_SIGNATURE_TOLERANCE_SECONDS)
      throw unauthenticated(
        `the signature timestamp is ${Math.round(skew)} s from now; at most ${WEBHOOK_SIGNATURE_TOLERANCE_SECONDS} s is accepted`,
      );
  }

  private async submit(deliveryId: string, inputs: Record<string, unknown>): Promise<DeliveryAccepted> {
    const written = await this.repo.submit(deliveryId, randomUUID(), inputs);
    if (!written) {
      await this.repo.fail(
        deliveryId,
        'its workflow is not published any more, or was deleted',
        this.clock.now(),
      );
      this.metrics.delivery('FAILED');
      throw new AppError(
        'conflict',
        'the workflow of this trigger is not published any more, or was deleted',
      );
    }
    const refused = await this.tasks.admitWritten({
      id: written.taskId,
      ownerId: written.ownerId,
      priority: written.priority,
      createdAt: written.createdAt,
    });
    if (refused) {
      await this.repo.release(deliveryId);
      throw refused;
    }
    if (await this.repo.markQueued(deliveryId)) this.metrics.delivery('QUEUED');
    return { taskId: written.taskId, deliveryId };
  }

  /**
   * A retry of an event id another delivery claimed: its task once admitted; undefined when that
   * delivery gave its claim back (refused); a conflict when it ended without a task.
   */
  private async awaitFirst(deliveryId: string): Promise<DeliveryAccepted | undefined> {
    const deadline = Date.now() + REPEAT_WAIT_MS;
    for (;;) {
      const now = await this.repo.state(deliveryId);
      if (!now) return undefined;
      if (now.taskId && now.state !== 'CLAIMED') return { taskId: now.taskId, deliveryId };
      if (now.state !== 'CLAIMED')
        throw new AppError(
          'conflict',
          `the first delivery of this event id ended ${now.state} without a task; it is not replayed: send a new event id`,
        );
      if (Date.now() > deadline)
        throw new AppError(
          'unavailable',
          'the first delivery of this event id is still being submitted; retry',
        );
      await pause(REPEAT_POLL_MS);
    }
  }
}
