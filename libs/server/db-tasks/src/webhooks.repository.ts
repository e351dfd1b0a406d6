import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AppError,
  DeliveryState,
  KEPT_DELIVERIES_PER_TRIGGER,
  PermissionMode,
  type Delivery,
  type SandboxPosture,
  type TaskPriority,
} from '@switchyard/contracts';
import type { PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';
import type { Pool } from 'pg';
import { TASKS_POOL } from './tasks-pool';

export interface TriggerRow {
  readonly id: string;
  readonly ownerId: string;
  readonly workflowId: string;
  readonly status: 'active' | 'disabled';
  readonly inputs: Record<string, unknown>;
  readonly permissionMode: PermissionMode;
  readonly requireSignature: boolean;
  readonly secretDigest: string;
  readonly createdAt: Date;
  readonly rotatedAt: Date | null;
  /** The plugin sandbox posture it was created under (null: not known). */
  readonly sandboxPosture: SandboxPosture | null;
}

/** A trigger as a delivery needs it: with the input schema of its workflow's published version. */
export interface DeliveryTarget extends TriggerRow {
  /** null: the workflow is gone or not published. */
  readonly inputSchema: Record<string, unknown> | null;
}

interface TriggerDbRow {
  id: string;
  owner_id: string;
  workflow_id: string;
  status: string;
  inputs: Record<string, unknown>;
  permission_mode: string;
  require_signature: boolean;
  secret_digest: string;
  created_at: Date;
  rotated_at: Date | null;
  sandbox_posture: SandboxPosture | null;
  input_schema?: Record<string, unknown> | null;
}

interface DeliveryDbRow {
  id: string;
  trigger_id: string;
  state: string;
  idempotency_key: boolean;
  task_id: string | null;
  error: string | null;
  accepted_at: Date;
  completed_at: Date | null;
}

const COLUMNS = `id, owner_id, workflow_id, status, inputs, permission_mode, require_signature, secret_digest,
  created_at, rotated_at, sandbox_posture`;
const T_COLUMNS = COLUMNS.split(',')
  .map((c) => `t.${c.trim()}`)
  .join(', ');
const D_COLUMNS = 'id, trigger_id, state, idempotency_key, task_id, error, accepted_at, completed_at';

function toTrigger(r: TriggerDbRow): TriggerRow {
  return {
    id: r.id,
    ownerId: r.owner_id,
    workflowId: r.workflow_id,
    status: r.status === 'active' ? 'active' : 'disabled',
    inputs: r.inputs,
    permissionMode: PermissionMode.parse(r.permission_mode),
    requireSignature: r.require_signature,
    secretDigest: r.secret_digest.trim(),
    createdAt: new Date(r.created_at),
    rotatedAt: r.rotated_at && new Date(r.rotated_at),
    sandboxPosture: r.sandbox_posture,
  };
}

function toDelivery(r: DeliveryDbRow): Delivery {
  const accepted = new Date(r.accepted_at);
  const completed = r.completed_at && new Date(r.completed_at);
  return {
    id: r.id,
    triggerId: r.trigger_id,
    state: DeliveryState.parse(r.state),
    acceptedAt: accepted.toISOString(),
    completedAt: completed ? completed.toISOString() : null,
    durationMs: completed ? Math.max(0, completed.getTime() - accepted.getTime()) : null,
    taskId: r.task_id,
    idempotencyKey: r.idempotency_key,
    error: r.error,
  };
}

export function triggerNotFound(id: string): AppError {
  return new AppError('not_found', `webhook trigger ${id} does not exist`);
}

/** The claim of an event id (or of a call without one), before its task exists. */
export type DeliveryClaim =
  | { readonly claimed: true; readonly deliveryId: string }
  | {
      readonly claimed: false;
      readonly deliveryId: string;
      readonly state: DeliveryState;
      readonly taskId: string | null;
    };

/**
 * Webhook triggers and their delivery audit, written by the scheduler. A delivery's row is its
 * claim: with an event id, the unique (trigger, event digest) makes the first claim win and every
 * retry find it; the task row is written by the statement that moves the claim on.
 */
@Injectable()
export class WebhooksRepository {
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Optional() @Inject(TASKS_POOL) private readonly pool?: Pool,
  ) {}

  private query<T>(text: string, ...values: unknown[]): Promise<T[]> {
    return this.prisma.$queryRawUnsafe<T[]>(text, ...values);
  }

  async create(t: {
    id: string;
    ownerId: string;
    workflowId: string;
    inputs: Record<string, unknown>;
    permissionMode: PermissionMode;
    requireSignature: boolean;
    secretDigest: string;
    sandboxPosture: SandboxPosture | null;
  }): Promise<TriggerRow> {
    const [row] = await this.query<TriggerDbRow>(
      `INSERT INTO webhook_trigger (id, owner_id, workflow_id, inputs, permission_mode, require_signature, secret_digest,
         sandbox_posture)
       VALUES ($1::uuid, $2::uuid, $3::uuid, $4::jsonb, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      t.id,
      t.ownerId,
      t.workflowId,
      JSON.stringify(t.inputs),
      t.permissionMode,
      t.requireSignature,
      t.secretDigest,
      t.sandboxPosture,
    );
    return toTrigger(row as TriggerDbRow);
  }

  async list(ownerId: string): Promise<TriggerRow[]> {
    const rows = await this.query<TriggerDbRow>(
      `SELECT ${COLUMNS} FROM webhook_trigger WHERE owner_id = $1::uuid ORDER BY created_at DESC, id DESC`,
      ownerId,
    );
    return rows.map(toTrigger);
  }

  async get(ownerId: string, id: string): Promise<TriggerRow> {
    const [row] = await this.query<TriggerDbRow>(
      `SELECT ${COLUMNS} FROM webhook_trigger WHERE id = $1::uuid AND owner_id = $2::uuid`,
      id,
      ownerId,
    );
    if (!row) throw triggerNotFound(id);
    return toTrigger(row);
  }

  /** The new digest replaces the old one in one statement: the old secret fails from then on. */
  async rotate(ownerId: string, id: string, secretDigest: string): Promise<TriggerRow> {
    const [row] = await this.query<TriggerDbRow>(
      `UPDATE webhook_trigger SET secret_digest = $3, rotated_at = now()
       WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING ${COLUMNS}`,
      id,
      ownerId,
      secretDigest,
    );
    if (!row) throw triggerNotFound(id);
    return toTrigger(row);
  }

  async delete(ownerId: string, id: string): Promise<TriggerRow> {
    const [row] = await this.query<TriggerDbRow>(
      `DELETE FROM webhook_trigger WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING ${COLUMNS}`,
      id,
      ownerId,
    );
    if (!row) throw triggerNotFound(id);
    return toTrigger(row);
  }

  /** The trigger of a delivery (any owner: the secret authenticates), with its workflow's input schema. */
  async target(id: string): Promise<DeliveryTarget | undefined> {
    const [row] = await this.query<TriggerDbRow>(
      `SELECT ${T_COLUMNS}, v.input_schema
       FROM webhook_trigger t
       LEFT JOIN workflow w ON w.id = t.workflow_id
       LEFT JOIN workflow_version v ON v.workflow_id = w.id AND v.version = w.published_version
       WHERE t.id = $1::uuid`,
      id,
    );
    return row ? { ...toTrigger(row), inputSchema: row.input_schema ?? null } : undefined;
  }

  /** Claims a delivery: a new row, or (same event id) the row of the delivery that claimed it first. */
  async claim(
    deliveryId: string,
    triggerId: string,
    eventDigest: string | null,
    at: Date,
  ): Promise<DeliveryClaim> {
    const [mine] = await this.query<{ id: string }>(
      `INSERT INTO webhook_delivery (id, trigger_id, event_digest, idempotency_key, accepted_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5)
       ON CONFLICT (trigger_id, event_digest) DO NOTHING RETURNING id`,
      deliveryId,
      triggerId,
      eventDigest,
      eventDigest !== null,
      at,
    );
    if (mine) return { claimed: true, deliveryId: mine.id };
    const [first] = await this.query<DeliveryDbRow>(
      `SELECT ${D_COLUMNS} FROM webhook_delivery WHERE trigger_id = $1::uuid AND event_digest = $2`,
      triggerId,
      eventDigest,
    );
    // Released between the insert and the read (its submission was refused): claim again.
    if (!first) return this.claim(deliveryId, triggerId, eventDigest, at);
    return {
      claimed: false,
      deliveryId: first.id,
      state: DeliveryState.parse(first.state),
      taskId: first.task_id,
    };
  }

  /** Where a claimed delivery stands now (a retry waiting for the first one's task). */
  async state(deliveryId: string): Promise<{ state: DeliveryState; taskId: string | null } | undefined> {
    const [row] = await this.query<DeliveryDbRow>(
      `SELECT ${D_COLUMNS} FROM webhook_delivery WHERE id = $1::uuid`,
      deliveryId,
    );
    return row ? { state: DeliveryState.parse(row.state), taskId: row.task_id } : undefined;
  }

  /**
   * Writes the interactive task of a claim and records its id on the claim, in one statement: only
   * for a claim still CLAIMED without a task (not swept as interrupted), of an active trigger whose
   * workflow exists and is published (share-locked against a concurrent delete). The claim stays
   * CLAIMED until the task is admitted (`markQueued`). Undefined: nothing was written.
   */
  async submit(
    deliveryId: string,
    taskId: string,
    inputs: Record<string, unknown>,
  ): Promise<{ taskId: string; ownerId: string; priority: TaskPriority; createdAt: Date } | undefined> {
    const [row] = await this.query<{
      id: string;
      owner_id: string;
      priority: TaskPriority;
      created_at: Date;
    }>(
      `WITH live AS (
         SELECT t.owner_id, t.workflow_id, t.permission_mode
         FROM webhook_delivery d
         JOIN webhook_trigger t ON t.id = d.trigger_id AND t.status = 'active'
         JOIN workflow w ON w.id = t.workflow_id AND w.published_version IS NOT NULL
         WHERE d.id = $1::uuid AND d.state = 'CLAIMED' AND d.task_id IS NULL
         FOR KEY SHARE OF w
       ), moved AS (
         UPDATE webhook_delivery SET task_id = $2::uuid
         WHERE id = $1::uuid AND state = 'CLAIMED' AND task_id IS NULL AND EXISTS (SELECT 1 FROM live)
         RETURNING id
       )
       INSERT INTO bg_task (id, owner_id, workflow_id, inputs, priority, permission_mode)
       SELECT $2::uuid, live.owner_id, live.workflow_id, $3::jsonb, 'interactive', live.permission_mode
       FROM live, moved
       RETURNING id, owner_id, priority, created_at`,
      deliveryId,
      taskId,
      JSON.stringify(inputs),
    );
    return row
      ? { taskId: row.id, ownerId: row.owner_id, priority: row.priority, createdAt: new Date(row.created_at) }
      : undefined;
  }

  /** Its task was admitted: retries waiting on this claim may answer its task id now. */
  async markQueued(deliveryId: string): Promise<boolean> {
    const n = await this.prisma.$executeRawUnsafe(
      `UPDATE webhook_delivery SET state = 'QUEUED' WHERE id = $1::uuid AND state = 'CLAIMED'`,
      deliveryId,
    );
    return n > 0;
  }

  /** A delivery refused before admission gives its claim back: a later retry of the event may run. */
  async release(deliveryId: string): Promise<void> {
    await this.prisma.$executeRawUnsafe(`DELETE FROM webhook_delivery WHERE id = $1::uuid`, deliveryId);
  }

  /** A delivery that submitted nothing ends with the reason (kept in the audit). */
  async fail(deliveryId: string, error: string, at: Date): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `UPDATE webhook_delivery SET state = 'FAILED', error = $2, completed_at = $3
       WHERE id = $1::uuid AND state = 'CLAIMED'`,
      deliveryId,
      error,
      at,
    );
  }

  /** The audit follows its task: started → SUBMITTED, ended → its end. */
  async followTask(taskId: string, state: DeliveryState, error: string | null, at: Date): Promise<void> {
    await this.followTasks([{ taskId, state, error }], at);
  }

  /**
   * Moves the deliveries that submitted these tasks to the states given (one statement for all;
   * a task no delivery submitted, most of them, changes nothing). The last entry of a task wins.
   */
  async followTasks(
    follows: ReadonlyArray<{ taskId: string; state: DeliveryState; error: string | null }>,
    at: Date,
  ): Promise<void> {
    if (!follows.length) return;
    const last = new Map(follows.map((f) => [f.taskId, f]));
    const values = [
      JSON.stringify(
        [...last.values()].map((f) => ({
          task_id: f.taskId,
          state: f.state,
          error: f.error,
          terminal: !['CLAIMED', 'QUEUED', 'SUBMITTED'].includes(f.state),
        })),
      ),
      at,
    ];
    const text = `UPDATE webhook_delivery d SET state = f.state, error = COALESCE(f.error, d.error),
              completed_at = CASE WHEN f.terminal THEN $2 ELSE d.completed_at END
       FROM jsonb_to_recordset($1::jsonb) AS f(task_id uuid, state text, error text, terminal boolean)
       WHERE d.task_id = f.task_id AND d.state IN ('CLAIMED', 'QUEUED', 'SUBMITTED')`;
    // Twice for every task (it starts, it ends): prepared, not a query Prisma compiles each time.
    if (this.pool) await this.pool.query({ name: 'delivery_follow_tasks', text, values });
    else await this.prisma.$executeRawUnsafe(text, ...values);
  }

  /** Claims that never got their task (the scheduler stopped in between): INTERRUPTED, not replayed. */
  async interruptStale(before: Date, at: Date): Promise<number> {
    const [r] = await this.query<{ n: number }>(
      `WITH d AS (
         UPDATE webhook_delivery SET state = 'INTERRUPTED', completed_at = $2,
                error = 'claimed, then the scheduler stopped before submitting; not replayed'
         WHERE state = 'CLAIMED' AND accepted_at < $1 RETURNING id, task_id
       ), t AS (
         UPDATE bg_task SET state = 'interrupted', finished_at = $2,
                error = 'its webhook delivery was interrupted before submission; not started'
         WHERE id IN (SELECT task_id FROM d WHERE task_id IS NOT NULL) AND state = 'queued'
       ) SELECT count(*)::int AS n FROM d`,
      before,
      at,
    );
    return r?.n ?? 0;
  }

  /** Keeps the newest rows of each trigger (event-id claims older than those are forgotten too). */
  async prune(): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `DELETE FROM webhook_delivery d USING (
         SELECT id FROM (
           SELECT id, row_number() OVER (PARTITION BY trigger_id ORDER BY accepted_at DESC, id DESC) AS n
           FROM webhook_delivery
         ) ranked WHERE n > $1
       ) old WHERE d.id = old.id`,
      KEPT_DELIVERIES_PER_TRIGGER,
    );
  }

  /** The audit, newest first, for the trigger's owner. */
  async page(
    ownerId: string,
    triggerId: string,
    q: { limit: number; cursor?: string | undefined },
  ): Promise<{ items: Delivery[]; nextCursor: string | null }> {
    await this.get(ownerId, triggerId);
    let before: { at: Date; id: string } | undefined;
    if (q.cursor) {
      const [at, id] = q.cursor.split('|');
      if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id))
        throw new AppError('validation_failed', 'cursor is not one this API returned');
      before = { at: new Date(at), id };
    }
    const rows = await this.query<DeliveryDbRow>(
      `SELECT ${D_COLUMNS} FROM webhook_delivery
       WHERE trigger_id = $1::uuid AND ($2::timestamptz IS NULL OR (accepted_at, id) < ($2::timestamptz, $3::uuid))
       ORDER BY accepted_at DESC, id DESC LIMIT $4`,
      triggerId,
      before?.at ?? null,
      before?.id ?? null,
      q.limit + 1,
    );
    const items = rows.slice(0, q.limit).map(toDelivery);
    const last = items[items.length - 1];
    return { items, nextCursor: rows.length > q.limit && last ? `${last.acceptedAt}|${last.id}` : null };
  }
}
