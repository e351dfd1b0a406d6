import { Inject, Injectable, Optional } from '@nestjs/common';
import {
  AppError,
  MAX_ACTIVE_SCHEDULES,
  PermissionMode,
  Recurrence,
  ScheduleStatus,
  type SandboxPosture,
  type TaskPriority,
} from '@switchyard/contracts';
import type { Prisma, PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';
import type { Pool } from 'pg';
import { TASKS_POOL } from './tasks-pool';

export interface ScheduleRow {
  readonly id: string;
  readonly ownerId: string;
  readonly workflowId: string;
  readonly status: ScheduleStatus;
  readonly inputs: Record<string, unknown>;
  readonly permissionMode: PermissionMode;
  readonly timeZone: string;
  readonly recurrence: Recurrence;
  readonly anchorAt: Date;
  readonly nextFireAt: Date | null;
  readonly expiresAt: Date | null;
  readonly triggerCount: number;
  readonly missedFires: number;
  readonly lastError: string | null;
  readonly lastFiredAt: Date | null;
  readonly lastTaskId: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** The plugin sandbox posture it was created under (null: not known). */
  readonly sandboxPosture: SandboxPosture | null;
}

/** What a create or an update stores; the counts are the schedule's own. */
export interface ScheduleDefinition {
  readonly workflowId: string;
  readonly inputs: Record<string, unknown>;
  readonly permissionMode: PermissionMode;
  readonly timeZone: string;
  readonly recurrence: Recurrence;
  readonly anchorAt: Date;
  readonly nextFireAt: Date | null;
  readonly expiresAt: Date | null;
  /** The current plugin sandbox posture; an update keeps a recorded one. */
  readonly sandboxPosture: SandboxPosture | null;
}

/** How one due schedule moves on when its occurrence is claimed (computed by the calendar). */
export interface ClaimPlan {
  /** The next occurrence after now, or null: the schedule ends with `status`. */
  readonly nextFireAt: Date | null;
  readonly status: ScheduleStatus;
  /** Overdue occurrences folded into this one (downtime): added to missedFires. */
  readonly coalesced: number;
}

/** An occurrence claimed (committed) and not yet submitted. */
export interface ScheduleClaim {
  readonly fireId: string;
  readonly scheduleId: string;
  readonly ownerId: string;
  readonly occurrenceAt: Date;
  readonly coalesced: number;
}

/** A task row written together with its claim's settlement, ready for admission. */
export interface ClaimedTask {
  readonly fireId: string;
  readonly scheduleId: string;
  readonly taskId: string;
  readonly ownerId: string;
  readonly priority: TaskPriority;
  readonly createdAt: Date;
  readonly occurrenceAt: Date;
}

interface ScheduleDbRow {
  id: string;
  owner_id: string;
  workflow_id: string;
  status: string;
  inputs: Record<string, unknown>;
  permission_mode: string;
  time_zone: string;
  recurrence: unknown;
  anchor_at: Date;
  next_fire_at: Date | null;
  expires_at: Date | null;
  trigger_count: number;
  missed_fires: number;
  last_error: string | null;
  last_fired_at: Date | null;
  last_task_id: string | null;
  created_at: Date;
  updated_at: Date;
  sandbox_posture: SandboxPosture | null;
}

const COLUMNS = `id, owner_id, workflow_id, status, inputs, permission_mode, time_zone, recurrence, anchor_at,
  next_fire_at, expires_at, trigger_count, missed_fires, last_error, last_fired_at, last_task_id, created_at, updated_at,
  sandbox_posture`;

function toRow(r: ScheduleDbRow): ScheduleRow {
  return {
    id: r.id,
    ownerId: r.owner_id,
    workflowId: r.workflow_id,
    status: ScheduleStatus.parse(r.status),
    inputs: r.inputs,
    permissionMode: PermissionMode.parse(r.permission_mode),
    timeZone: r.time_zone,
    recurrence: Recurrence.parse(r.recurrence),
    anchorAt: new Date(r.anchor_at),
    nextFireAt: r.next_fire_at && new Date(r.next_fire_at),
    expiresAt: r.expires_at && new Date(r.expires_at),
    triggerCount: r.trigger_count,
    missedFires: r.missed_fires,
    lastError: r.last_error,
    lastFiredAt: r.last_fired_at && new Date(r.last_fired_at),
    lastTaskId: r.last_task_id,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    sandboxPosture: r.sandbox_posture,
  };
}

export function scheduleNotFound(id: string): AppError {
  return new AppError('not_found', `schedule ${id} does not exist`);
}

type Sql = Pick<PrismaClient, '$queryRawUnsafe'> | Prisma.TransactionClient;

function query<T>(db: Sql, text: string, ...values: unknown[]): Promise<T[]> {
  return db.$queryRawUnsafe<T[]>(text, ...values);
}

/**
 * Schedules and the claims of their occurrences, written by the scheduler. The claim of an
 * occurrence is committed before its task exists, and the task row is written by the statement that
 * settles the claim, so an occurrence submits at most one task whatever crashes or races.
 */
/** $3–$11 of the insert and the update, in their order. */
function definitionParams(def: ScheduleDefinition): unknown[] {
  return [
    def.workflowId,
    JSON.stringify(def.inputs),
    def.permissionMode,
    def.timeZone,
    JSON.stringify(def.recurrence),
    def.anchorAt,
    def.nextFireAt,
    def.expiresAt,
    def.sandboxPosture,
  ];
}

@Injectable()
export class SchedulesRepository {
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Optional() @Inject(TASKS_POOL) private readonly pool?: Pool,
  ) {}

  /**
   * Whether a schedule is due (held ones aside): one look at the due index, as a prepared statement,
   * so the firer's idle passes (five a second) cost no transaction.
   */
  async anyDue(now: Date, opts: { readonly holdSandboxed?: boolean } = {}): Promise<boolean> {
    const text = `SELECT EXISTS (SELECT 1 FROM workflow_schedule
       WHERE status = 'active' AND next_fire_at <= $1
         AND ($2::boolean = false OR sandbox_posture IS DISTINCT FROM 'sandboxed')) AS due`;
    const values = [now, opts.holdSandboxed ?? false];
    const rows = this.pool
      ? (await this.pool.query<{ due: boolean }>({ name: 'schedule_any_due', text, values })).rows
      : await this.prisma.$queryRawUnsafe<Array<{ due: boolean }>>(text, ...values);
    return rows[0]?.due === true;
  }

  /** Inserts a schedule unless the owner already has the maximum of active ones (checked under a lock). */
  async create(id: string, ownerId: string, def: ScheduleDefinition): Promise<ScheduleRow> {
    return this.prisma.$transaction(async (tx) => {
      await this.limitActive(tx, ownerId, undefined);
      const [row] = await query<ScheduleDbRow>(
        tx,
        `INSERT INTO workflow_schedule (id, owner_id, workflow_id, inputs, permission_mode, time_zone, recurrence,
           anchor_at, next_fire_at, expires_at, sandbox_posture)
         VALUES ($1::uuid, $2::uuid, $3::uuid, $4::jsonb, $5, $6, $7::jsonb, $8, $9, $10, $11)
         RETURNING ${COLUMNS}`,
        id,
        ownerId,
        ...definitionParams(def),
      );
      return toRow(row as ScheduleDbRow);
    });
  }

  /** Replaces the definition (the schedule becomes active again); its counts stay. */
  async update(ownerId: string, id: string, def: ScheduleDefinition): Promise<ScheduleRow> {
    return this.prisma.$transaction(async (tx) => {
      await this.limitActive(tx, ownerId, id);
      const [row] = await query<ScheduleDbRow>(
        tx,
        `UPDATE workflow_schedule SET workflow_id = $3::uuid, inputs = $4::jsonb, permission_mode = $5, time_zone = $6,
           recurrence = $7::jsonb, anchor_at = $8, next_fire_at = $9, expires_at = $10, status = 'active',
           sandbox_posture = COALESCE(sandbox_posture, $11),
           last_error = NULL, updated_at = now()
         WHERE id = $1::uuid AND owner_id = $2::uuid
         RETURNING ${COLUMNS}`,
        id,
        ownerId,
        ...definitionParams(def),
      );
      if (!row) throw scheduleNotFound(id);
      return toRow(row);
    });
  }

  private async limitActive(tx: Prisma.TransactionClient, ownerId: string, except: string | undefined) {
    // Serialises the owner's creates, so two racing ones cannot both take the 50th place.
    await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(hashtext('schedules:' || $1))`, ownerId);
    const [count] = await query<{ n: number }>(
      tx,
      `SELECT count(*)::int AS n FROM workflow_schedule
       WHERE owner_id = $1::uuid AND status = 'active' AND ($2::uuid IS NULL OR id <> $2::uuid)`,
      ownerId,
      except ?? null,
    );
    if ((count?.n ?? 0) >= MAX_ACTIVE_SCHEDULES)
      throw new AppError(
        'conflict',
        `you have ${MAX_ACTIVE_SCHEDULES} active schedules, the most allowed; delete one first`,
        { details: { limit: MAX_ACTIVE_SCHEDULES } },
      );
  }

  async list(ownerId: string): Promise<ScheduleRow[]> {
    const rows = await query<ScheduleDbRow>(
      this.prisma,
      `SELECT ${COLUMNS} FROM workflow_schedule WHERE owner_id = $1::uuid ORDER BY created_at DESC, id DESC`,
      ownerId,
    );
    return rows.map(toRow);
  }

  async get(ownerId: string, id: string): Promise<ScheduleRow> {
    const [row] = await query<ScheduleDbRow>(
      this.prisma,
      `SELECT ${COLUMNS} FROM workflow_schedule WHERE id = $1::uuid AND owner_id = $2::uuid`,
      id,
      ownerId,
    );
    if (!row) throw scheduleNotFound(id);
    return toRow(row);
  }

  /** Deletes the schedule and its claims; tasks it submitted are not touched. */
  async delete(ownerId: string, id: string): Promise<ScheduleRow> {
    const [row] = await query<ScheduleDbRow>(
      this.prisma,
      `DELETE FROM workflow_schedule WHERE id = $1::uuid AND owner_id = $2::uuid RETURNING ${COLUMNS}`,
      id,
      ownerId,
    );
    if (!row) throw scheduleNotFound(id);
    return toRow(row);
  }

  /**
   * Claims the occurrences due at `now`: locks up to `limit` due schedules (skipping those another
   * replica holds), asks `plan` how each moves on, and in the same transaction advances them and
   * records one claim per occurrence. Committed before any task is submitted.
   */
  async claimDue(
    now: Date,
    limit: number,
    plan: (row: ScheduleRow, now: Date) => ClaimPlan,
    newId: () => string,
    opts: { readonly holdSandboxed?: boolean } = {},
  ): Promise<ScheduleClaim[]> {
    return this.prisma.$transaction(async (tx) => {
      // Held: schedules created sandboxed, while plugins run unsandboxed. They stay due (their
      // next_fire_at in the past) and fire once, coalesced, when the sandbox is back.
      const due = await query<ScheduleDbRow>(
        tx,
        `SELECT ${COLUMNS} FROM workflow_schedule
         WHERE status = 'active' AND next_fire_at <= $1
           AND ($3::boolean = false OR sandbox_posture IS DISTINCT FROM 'sandboxed')
         ORDER BY next_fire_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        now,
        limit,
        opts.holdSandboxed ?? false,
      );
      if (!due.length) return [];
      const claims: ScheduleClaim[] = [];
      const moves: Array<{ id: string; next: Date | null; status: string; coalesced: number }> = [];
      for (const r of due) {
        const row = toRow(r);
        const p = plan(row, now);
        moves.push({ id: row.id, next: p.nextFireAt, status: p.status, coalesced: p.coalesced });
        claims.push({
          fireId: newId(),
          scheduleId: row.id,
          ownerId: row.ownerId,
          occurrenceAt: row.nextFireAt ?? now,
          coalesced: p.coalesced,
        });
      }
      await tx.$executeRawUnsafe(
        `UPDATE workflow_schedule s SET next_fire_at = m.next, status = m.status,
           missed_fires = s.missed_fires + m.coalesced, updated_at = $5
         FROM unnest($1::uuid[], $2::timestamptz[], $3::text[], $4::int[]) AS m(id, next, status, coalesced)
         WHERE s.id = m.id`,
        moves.map((m) => m.id),
        moves.map((m) => m.next),
        moves.map((m) => m.status),
        moves.map((m) => m.coalesced),
        now,
      );
      await tx.$executeRawUnsafe(
        `INSERT INTO schedule_fire (id, schedule_id, occurrence_at, coalesced, claimed_at)
         SELECT * , $5::timestamptz FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::int[])`,
        claims.map((c) => c.fireId),
        claims.map((c) => c.scheduleId),
        claims.map((c) => c.occurrenceAt),
        claims.map((c) => c.coalesced),
        now,
      );
      return claims;
    });
  }

  /**
   * Writes the batch tasks of claims, in one statement with the claims' task ids: only for claims
   * still `claimed` (not swept as interrupted) without a task, of schedules whose workflow exists and
   * is published. The workflow row is share-locked, so a concurrent delete either waits for this or
   * wins before it (and then nothing is written). Claims that got no task are answered as refused.
   * The claim stays `claimed` until its task is admitted (`markSubmitted`).
   */
  async writeTasks(
    claims: ReadonlyArray<{ fireId: string; taskId: string }>,
  ): Promise<{ written: ClaimedTask[]; refused: string[] }> {
    if (!claims.length) return { written: [], refused: [] };
    const rows = await query<{
      fire_id: string;
      schedule_id: string;
      id: string;
      owner_id: string;
      priority: TaskPriority;
      created_at: Date;
      occurrence_at: Date;
    }>(
      this.prisma,
      `WITH input AS (
         SELECT * FROM unnest($1::uuid[], $2::uuid[]) AS i(fire_id, task_id)
       ), live AS (
         SELECT i.fire_id, i.task_id, s.id AS schedule_id, s.owner_id, s.workflow_id, s.inputs, s.permission_mode,
                f.occurrence_at
         FROM input i
         JOIN schedule_fire f ON f.id = i.fire_id AND f.state = 'claimed' AND f.task_id IS NULL
         JOIN workflow_schedule s ON s.id = f.schedule_id AND s.status <> 'cancelled'
         JOIN workflow w ON w.id = s.workflow_id AND w.published_version IS NOT NULL
         FOR KEY SHARE OF w
       ), fired AS (
         UPDATE schedule_fire f SET task_id = l.task_id
         FROM live l WHERE f.id = l.fire_id AND f.state = 'claimed' AND f.task_id IS NULL
         RETURNING l.*
       ), task AS (
         INSERT INTO bg_task (id, owner_id, workflow_id, inputs, priority, permission_mode)
         SELECT task_id, owner_id, workflow_id, inputs, 'batch', permission_mode FROM fired
         RETURNING id, owner_id, priority, created_at
       )
       SELECT fired.fire_id, fired.schedule_id, fired.occurrence_at, task.*
       FROM task JOIN fired ON fired.task_id = task.id`,
      claims.map((c) => c.fireId),
      claims.map((c) => c.taskId),
    );
    const written = rows.map((r) => ({
      fireId: r.fire_id,
      scheduleId: r.schedule_id,
      taskId: r.id,
      ownerId: r.owner_id,
      priority: r.priority,
      createdAt: new Date(r.created_at),
      occurrenceAt: new Date(r.occurrence_at),
    }));
    const wrote = new Set(written.map((w) => w.fireId));
    return { written, refused: claims.filter((c) => !wrote.has(c.fireId)).map((c) => c.fireId) };
  }

  /** Claims whose task was admitted: settled as submitted and counted on their schedule. */
  async markSubmitted(fireIds: readonly string[], at: Date): Promise<void> {
    if (!fireIds.length) return;
    await this.prisma.$executeRawUnsafe(
      `WITH f AS (
         UPDATE schedule_fire SET state = 'submitted', settled_at = $2
         WHERE id = ANY($1::uuid[]) AND state = 'claimed'
         RETURNING schedule_id, task_id
       )
       UPDATE workflow_schedule s SET trigger_count = s.trigger_count + 1, last_task_id = f.task_id,
              last_fired_at = $2, last_error = NULL
       FROM f WHERE s.id = f.schedule_id`,
      [...fireIds],
      at,
    );
  }

  /** Claims that submitted nothing: the occurrence is over, and the schedule says why. */
  async failClaims(fireIds: readonly string[], error: string, at: Date): Promise<void> {
    if (!fireIds.length) return;
    await this.prisma.$executeRawUnsafe(
      `WITH f AS (
         UPDATE schedule_fire SET state = 'failed', error = $2, settled_at = $3, task_id = NULL
         WHERE id = ANY($1::uuid[]) AND state = 'claimed'
         RETURNING schedule_id
       )
       UPDATE workflow_schedule s SET last_error = $2 FROM f WHERE s.id = f.schedule_id`,
      [...fireIds],
      error,
      at,
    );
  }

  /**
   * Claims older than `before` that never settled were caught in a crash window: marked
   * interrupted and counted as missed; a task written for one is interrupted before any executor
   * can start it. Never replayed (their schedule already moved on).
   */
  async interruptStale(before: Date, at: Date): Promise<number> {
    const [r] = await query<{ n: number }>(
      this.prisma,
      `WITH f AS (
         UPDATE schedule_fire SET state = 'interrupted', settled_at = $2,
                error = 'claimed, then the scheduler stopped before submitting; not replayed'
         WHERE state = 'claimed' AND claimed_at < $1
         RETURNING schedule_id, task_id
       ), t AS (
         UPDATE bg_task SET state = 'interrupted', finished_at = $2,
                error = 'its schedule occurrence was interrupted before submission; not started'
         WHERE id IN (SELECT task_id FROM f WHERE task_id IS NOT NULL) AND state = 'queued'
       ), s AS (
         UPDATE workflow_schedule s SET missed_fires = s.missed_fires + c.n,
                last_error = 'an occurrence was interrupted between its claim and its submission; it is not replayed'
         FROM (SELECT schedule_id, count(*)::int AS n FROM f GROUP BY schedule_id) c WHERE s.id = c.schedule_id
       )
       SELECT count(*)::int AS n FROM f`,
      before,
      at,
    );
    return r?.n ?? 0;
  }

  /** Settled claims kept for a week (the history of what fired); older ones are dropped. */
  async pruneFires(before: Date): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `DELETE FROM schedule_fire WHERE state <> 'claimed' AND settled_at < $1`,
      before,
    );
  }

  /** Claims of a schedule, oldest first (tests and diagnostics). */
  async fires(
    scheduleId: string,
  ): Promise<Array<{ occurrenceAt: Date; state: string; taskId: string | null; coalesced: number }>> {
    const rows = await query<{
      occurrence_at: Date;
      state: string;
      task_id: string | null;
      coalesced: number;
    }>(
      this.prisma,
      `SELECT occurrence_at, state, task_id, coalesced FROM schedule_fire WHERE schedule_id = $1::uuid
       ORDER BY occurrence_at`,
      scheduleId,
    );
    return rows.map((r) => ({
      occurrenceAt: new Date(r.occurrence_at),
      state: r.state,
      taskId: r.task_id,
      coalesced: r.coalesced,
    }));
  }
}
