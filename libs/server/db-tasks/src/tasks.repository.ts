import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  type FinishTask,
  type Task,
  type TaskPriority,
  type TaskState,
} from '@switchyard/contracts';
import type { BgTask } from '@prisma/client';
import type { Pool } from 'pg';
import { TASKS_POOL } from './tasks-pool';

/** A task's row, as the repository returns it. */
export type BgTaskRow = BgTask;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Finished tasks kept per owner; older ones are pruned in batches (TasksRepository.prune). */
export const KEPT_FINISHED_TASKS = 100;

export interface NewTask {
  readonly id: string;
  readonly ownerId: string;
  readonly workflowId: string;
  readonly inputs: Record<string, unknown>;
  readonly priority: TaskPriority;
  readonly permissionMode: string;
  /** Set for a task started at once (a running slot was free and nothing waited): it is written running, naming its run. */
  readonly runId?: string;
}

export function toTask(r: BgTask, now = Date.now()): Task {
  const created = r.createdAt.getTime();
  const started = r.startedAt?.getTime();
  const finished = r.finishedAt?.getTime();
  return {
    id: r.id,
    ownerId: r.ownerId,
    workflowId: r.workflowId,
    priority: r.priority,
    state: r.state,
    queued: r.state === 'queued',
    runId: r.runId,
    createdAt: r.createdAt.toISOString(),
    queueWaitMs: Math.max(0, (started ?? finished ?? now) - created),
    startedAt: r.startedAt?.toISOString() ?? null,
    runDurationMs: started === undefined ? null : Math.max(0, (finished ?? now) - started),
    finishedAt: r.finishedAt?.toISOString() ?? null,
    output: (r.output as unknown) ?? null,
    outputTruncated: r.outputTruncated,
    error: r.error,
  };
}

/** A task row's columns as `BgTask` names them, of table alias `t` when given. */
function columns(t = ''): string {
  const c = t ? `${t}.` : '';
  return `${c}id, ${c}owner_id AS "ownerId", ${c}workflow_id AS "workflowId", ${c}inputs, ${c}priority,
  ${c}permission_mode AS "permissionMode", ${c}state, ${c}run_id AS "runId", ${c}output,
  ${c}output_truncated AS "outputTruncated", ${c}error, ${c}kill_requested AS "killRequested",
  ${c}created_at AS "createdAt", ${c}started_at AS "startedAt", ${c}finished_at AS "finishedAt"`;
}

const COLUMNS = columns();

/**
 * Whether a webhook delivery submitted task `t` (its audit follows the task). Asked in the statements
 * that move a task, so a transition tells its followers without a statement of their own: most tasks
 * come from no webhook, and the audit's update per transition was the scheduler's commonest statement.
 */
const FROM_WEBHOOK = `EXISTS (SELECT 1 FROM webhook_delivery d WHERE d.task_id = t.id) AS "fromWebhook"`;

/** A task row as a transition reports it: whether a webhook delivery submitted it. */
export type MovedTask = BgTask & { readonly fromWebhook: boolean };

const ENDED_SQL = `ARRAY['completed','failed','cancelled','interrupted']::"TaskState"[]`;

/** How a body ended, as the scheduler records it (the output already cut to what a task keeps). */
export interface TaskEnd {
  readonly id: string;
  readonly state: FinishTask['state'];
  readonly runId: string | null;
  readonly output: unknown;
  readonly outputTruncated: boolean;
  readonly error: string | null;
}

/**
 * Background tasks, written by the scheduler only. Postgres is their truth; Redis only carries them.
 * Raw pg with named (prepared) statements: the submit, claim, attach and end of every task go
 * through here, and Prisma compiled each of those queries anew (a third of the scheduler's CPU).
 */
@Injectable()
export class TasksRepository {
  constructor(@Inject(TASKS_POOL) private readonly pool: Pool) {}

  private async rows<T = BgTask>(name: string | undefined, text: string, values: unknown[]): Promise<T[]> {
    return (await this.pool.query({ ...(name ? { name } : {}), text, values })).rows as T[];
  }

  async insert(t: NewTask): Promise<BgTask> {
    return (await this.insertAll([t]))[0] as BgTask;
  }

  /** Writes new tasks in one statement; their rows in the order given. */
  async insertAll(tasks: readonly NewTask[]): Promise<BgTask[]> {
    const rows = await this.rows(
      'task_insert',
      `INSERT INTO bg_task (id, owner_id, workflow_id, inputs, priority, permission_mode, state, run_id, started_at)
       SELECT id, owner_id, workflow_id, inputs, priority::"TaskPriority", permission_mode,
              CASE WHEN run_id IS NULL THEN 'queued' ELSE 'running' END::"TaskState", run_id,
              CASE WHEN run_id IS NULL THEN NULL ELSE now() END
       FROM jsonb_to_recordset($1::jsonb)
         AS x(id uuid, owner_id uuid, workflow_id uuid, inputs jsonb, priority text, permission_mode text,
              run_id uuid)
       RETURNING ${COLUMNS}`,
      [
        JSON.stringify(
          tasks.map((t) => ({
            id: t.id,
            owner_id: t.ownerId,
            workflow_id: t.workflowId,
            inputs: t.inputs,
            priority: t.priority,
            permission_mode: t.permissionMode,
            run_id: t.runId ?? null,
          })),
        ),
      ],
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    return tasks.map((t) => byId.get(t.id) as BgTask);
  }

  /** A submit that was refused after its row was written leaves nothing behind. */
  async discard(id: string): Promise<void> {
    await this.rows('task_discard', `DELETE FROM bg_task WHERE id = $1::uuid AND state = 'queued'`, [id]);
  }

  async get(id: string): Promise<BgTask | null> {
    if (!UUID.test(id)) return null;
    const [row] = await this.rows('task_get', `SELECT ${COLUMNS} FROM bg_task WHERE id = $1::uuid`, [id]);
    return row ?? null;
  }

  async getVisible(id: string, ownerId: string): Promise<BgTask> {
    const row = await this.get(id);
    if (!row || row.ownerId !== ownerId) throw new AppError('not_found', `task ${id} does not exist`);
    return row;
  }

  async list(
    ownerId: string,
    q: { limit: number; cursor?: string; state?: TaskState },
  ): Promise<{ items: BgTask[]; nextCursor: string | null }> {
    const values: unknown[] = [ownerId, q.limit + 1];
    const where = ['owner_id = $1::uuid'];
    if (q.state) {
      values.push(q.state);
      where.push(`state = $${values.length}::"TaskState"`);
    }
    if (q.cursor) {
      const [at, id] = q.cursor.split('|');
      if (!at || !id || Number.isNaN(Date.parse(at)) || !UUID.test(id))
        throw new AppError('validation_failed', 'cursor is not one this API returned');
      values.push(new Date(at), id);
      where.push(`(created_at, id) < ($${values.length - 1}::timestamptz, $${values.length}::uuid)`);
    }
    const rows = await this.rows(
      `task_list${q.state ? '_state' : ''}${q.cursor ? '_after' : ''}`,
      `SELECT ${COLUMNS} FROM bg_task WHERE ${where.join(' AND ')}
       ORDER BY created_at DESC, id DESC LIMIT $2`,
      values,
    );
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return {
      items,
      nextCursor: rows.length > q.limit && last ? `${last.createdAt.toISOString()}|${last.id}` : null,
    };
  }

  /**
   * queued → running for each of `ids` not killed meanwhile, in one statement: the rows claimed.
   * `runIds[i]`, when given, is recorded as the run of `ids[i]` (a task named twice keeps its first).
   */
  async claimAll(ids: readonly string[], runIds?: readonly string[]): Promise<MovedTask[]> {
    return this.rows<MovedTask>(
      'task_claim',
      `UPDATE bg_task t SET state = 'running', started_at = now(), run_id = c.run_id
       FROM (SELECT DISTINCT ON (id) id, run_id
             FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS x(id, run_id, n) ORDER BY id, n) c
       WHERE t.id = c.id AND t.state = 'queued' AND NOT t.kill_requested
       RETURNING ${columns('t')}, ${FROM_WEBHOOK}`,
      [ids, runIds ?? ids.map(() => null)],
    );
  }

  /**
   * Of these tasks, the running ones no body has started: moved to running as they were dispatched,
   * and the run they name was never written (an executor writes a body's run before it calls any
   * tool). Reads the runs' table, which the executor owns: only the reconciliation asks, for tasks
   * whose BullMQ job is gone.
   */
  async notStarted(ids: readonly string[], runningForMs: number): Promise<BgTask[]> {
    if (!ids.length) return [];
    return this.rows(
      'task_not_started',
      `SELECT ${columns('t')} FROM bg_task t
       WHERE t.id = ANY($1::uuid[]) AND t.state = 'running'
         AND t.started_at < now() - make_interval(secs => $2::double precision / 1000)
         AND NOT EXISTS (SELECT 1 FROM run r WHERE r.id = t.run_id)`,
      [ids, runningForMs],
    );
  }

  /**
   * Of these tasks, the running ones whose body ended but whose end was never recorded: their run
   * finished over `endedForMs` ago (the body's report was given up, or its job failed after stalling).
   * They end `interrupted` here, in the same statement, saying how the run ended; the run keeps what
   * happened. Reads the runs' table, which the executor owns: only the reconciliation asks, for tasks
   * whose BullMQ job is gone (a body's job lasts until its end is recorded).
   */
  async endUnreported(ids: readonly string[], endedForMs: number): Promise<MovedTask[]> {
    if (!ids.length) return [];
    return this.rows<MovedTask>(
      'task_end_unreported',
      `UPDATE bg_task t SET state = 'interrupted', finished_at = now(),
              error = 'its run ended ' || r.status || ', and the end was never reported to the scheduler; the run has what happened'
       FROM run r
       WHERE t.id = ANY($1::uuid[]) AND t.state = 'running' AND r.id = t.run_id
         AND r.finished_at < now() - make_interval(secs => $2::double precision / 1000)
       RETURNING ${columns('t')}, ${FROM_WEBHOOK}`,
      [ids, endedForMs],
    );
  }

  /**
   * A task no body has started ends cancelled by its kill: queued, or running with its job taken back
   * (or never taken). Null when it is no longer in `state`.
   */
  async cancelBeforeStart(id: string, state: 'queued' | 'running'): Promise<BgTask | null> {
    const [row] = await this.rows(
      'task_cancel_before_start',
      `UPDATE bg_task SET state = 'cancelled', kill_requested = true, finished_at = now(),
              error = 'killed before it started'
       WHERE id = $1::uuid AND state = $2::"TaskState"
       RETURNING ${COLUMNS}`,
      [id, state],
    );
    return row ?? null;
  }

  /** Records the runs of running tasks in one statement: whether a kill was asked, by task. */
  async attachAll(
    runs: ReadonlyArray<{ id: string; runId: string }>,
  ): Promise<Map<string, { killRequested: boolean }>> {
    const rows = await this.rows<{ id: string; killRequested: boolean }>(
      'task_attach',
      `UPDATE bg_task t SET run_id = a.run_id
       FROM (SELECT DISTINCT ON (id) * FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, run_id uuid)) a
       WHERE t.id = ANY($2::uuid[]) AND t.id = a.id AND t.state = 'running'
       RETURNING t.id, t.kill_requested AS "killRequested"`,
      [JSON.stringify(runs.map((r) => ({ id: r.id, run_id: r.runId }))), runs.map((r) => r.id)],
    );
    return new Map(rows.map((r) => [r.id, { killRequested: r.killRequested }]));
  }

  /**
   * running → its end, once, for every end given, in one statement. Returns the tasks that ended
   * here (an end reported again, or of a task no longer running, changes nothing). An end without a
   * run clears the run named at the dispatch (it was never written), but for an interruption: a body
   * handed on does not know which run its first body wrote, so the one recorded stays.
   */
  async finish(
    ends: readonly TaskEnd[],
  ): Promise<Array<{ id: string; ownerId: string; fromWebhook: boolean }>> {
    if (!ends.length) return [];
    return this.rows<{ id: string; ownerId: string; fromWebhook: boolean }>(
      'task_finish',
      `UPDATE bg_task t SET state = e.state::"TaskState",
              run_id = CASE WHEN e.run_id IS NULL AND e.state = 'interrupted' THEN t.run_id ELSE e.run_id END,
              output = e.output, output_truncated = e.truncated, error = e.error, finished_at = now()
       FROM (SELECT DISTINCT ON (id) * FROM jsonb_to_recordset($1::jsonb)
               AS x(id uuid, state text, run_id uuid, output jsonb, truncated boolean, error text)) e
       WHERE t.id = ANY($2::uuid[]) AND t.id = e.id AND t.state = 'running'
       RETURNING t.id, t.owner_id AS "ownerId", ${FROM_WEBHOOK}`,
      [
        JSON.stringify(
          ends.map((e) => ({
            id: e.id,
            state: e.state,
            run_id: e.runId,
            output: e.output ?? null,
            truncated: e.outputTruncated,
            error: e.error,
          })),
        ),
        ends.map((e) => e.id),
      ],
    );
  }

  /** Kill: a queued task is cancelled at once; a running one is flagged (its executor cancels it). */
  async kill(id: string, ownerId: string): Promise<BgTask> {
    const row = await this.getVisible(id, ownerId);
    if (row.state === 'queued') {
      const cancelled = await this.cancelBeforeStart(id, 'queued');
      if (cancelled) return cancelled;
    }
    const [flagged] = await this.rows(
      'task_kill_flag',
      `UPDATE bg_task SET kill_requested = true
       WHERE id = $1::uuid AND state IN ('queued', 'running')
       RETURNING ${COLUMNS}`,
      [id],
    );
    return flagged ?? (await this.getVisible(id, ownerId));
  }

  /** Tasks the queues must hold (rebuild after Redis lost its data). */
  async active(): Promise<BgTask[]> {
    return this.rows(
      'task_active',
      `SELECT ${COLUMNS} FROM bg_task WHERE state IN ('queued', 'running') ORDER BY created_at, id`,
      [],
    );
  }

  /** Running tasks whose body is gone are an explicit failure, never replayed. */
  async interrupt(id: string, reason: string): Promise<BgTask | null> {
    const [row] = await this.rows(
      'task_interrupt',
      `UPDATE bg_task SET state = 'interrupted', error = $2, finished_at = now()
       WHERE id = $1::uuid AND state = 'running'
       RETURNING ${COLUMNS}`,
      [id, reason],
    );
    return row ?? null;
  }

  /**
   * Deletes the finished tasks of these owners beyond the newest KEPT_FINISHED_TASKS of each, in one
   * statement (the scheduler calls it on a timer for the owners whose tasks ended meanwhile, not on
   * every end). Returns how many went. Not a prepared statement: planned for the owners given (a
   * generic plan, not knowing how many, reads the whole table), and it runs about once a second.
   */
  async prune(ownerIds: readonly string[]): Promise<number> {
    if (!ownerIds.length) return 0;
    const rows = await this.rows<{ n: number }>(
      undefined,
      `WITH old AS (
         SELECT id FROM (
           SELECT id, row_number() OVER (PARTITION BY owner_id ORDER BY finished_at DESC NULLS LAST, id DESC) AS k
           FROM bg_task WHERE owner_id = ANY($1::uuid[]) AND state = ANY(${ENDED_SQL})
         ) ranked WHERE k > $2
       ), gone AS (DELETE FROM bg_task t USING old WHERE t.id = old.id RETURNING 1)
       SELECT count(*)::int AS n FROM gone`,
      [ownerIds, KEPT_FINISHED_TASKS],
    );
    return rows[0]?.n ?? 0;
  }
}
