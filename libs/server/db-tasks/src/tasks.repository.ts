import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  type FinishTask,
  type Task,
  type TaskPriority,
  type TaskState,
} from '@switchyard/contracts';
import type { BgTask, PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

/** Finished tasks kept per owner; older ones are pruned when a task finishes. */
export const KEPT_FINISHED_TASKS = 100;
/**
 * An owner's finished tasks are pruned at most this often per scheduler replica: a DELETE with a
 * sort over the owner's finished rows on every finish was a fifth of the scheduler's database work
 * per one-step task. Between prunes an owner may briefly hold more than KEPT_FINISHED_TASKS.
 */
export const PRUNE_INTERVAL_MS = 1_000;

export interface NewTask {
  readonly id: string;
  readonly ownerId: string;
  readonly workflowId: string;
  readonly inputs: Record<string, unknown>;
  readonly priority: TaskPriority;
  readonly permissionMode: string;
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

/** Background tasks, written by the scheduler only. Postgres is their truth; Redis only carries them. */
@Injectable()
export class TasksRepository {
  /** When each owner's finished tasks were last pruned by this replica (ms). */
  private readonly prunedAt = new Map<string, number>();

  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async insert(t: NewTask): Promise<BgTask> {
    return this.prisma.bgTask.create({
      data: {
        id: t.id,
        ownerId: t.ownerId,
        workflowId: t.workflowId,
        inputs: t.inputs as object,
        priority: t.priority,
        permissionMode: t.permissionMode,
      },
    });
  }

  /** A submit that was refused after its row was written leaves nothing behind. */
  async discard(id: string): Promise<void> {
    await this.prisma.bgTask.deleteMany({ where: { id, state: 'queued' } });
  }

  async get(id: string): Promise<BgTask | null> {
    return this.prisma.bgTask.findUnique({ where: { id } });
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
    let before: { createdAt: Date; id: string } | undefined;
    if (q.cursor) {
      const [at, id] = q.cursor.split('|');
      if (!at || !id || Number.isNaN(Date.parse(at)) || !/^[0-9a-f-]{36}$/.test(id))
        throw new AppError('validation_failed', 'cursor is not one this API returned');
      before = { createdAt: new Date(at), id };
    }
    const rows = await this.prisma.bgTask.findMany({
      where: {
        ownerId,
        ...(q.state ? { state: q.state } : {}),
        ...(before
          ? {
              OR: [
                { createdAt: { lt: before.createdAt } },
                { createdAt: before.createdAt, id: { lt: before.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: q.limit + 1,
    });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return {
      items,
      nextCursor: rows.length > q.limit && last ? `${last.createdAt.toISOString()}|${last.id}` : null,
    };
  }

  /** queued → running, unless it was killed meanwhile. */
  async claim(id: string): Promise<BgTask | null> {
    const rows = await this.prisma.bgTask.updateManyAndReturn({
      where: { id, state: 'queued', killRequested: false },
      data: { state: 'running', startedAt: new Date() },
    });
    return rows[0] ?? null;
  }

  async attach(id: string, runId: string): Promise<BgTask | null> {
    const rows = await this.prisma.bgTask.updateManyAndReturn({
      where: { id, state: 'running' },
      data: { runId },
    });
    return rows[0] ?? null;
  }

  /** running → its end (once); prunes the owner's finished tasks beyond the kept number. */
  async finish(f: FinishTask, output: { value: unknown; truncated: boolean }): Promise<BgTask | null> {
    const rows = await this.prisma.bgTask.updateManyAndReturn({
      where: { id: f.id, state: 'running' },
      data: {
        state: f.state,
        ...(f.runId ? { runId: f.runId } : {}),
        output: output.value === undefined ? undefined : (output.value as object),
        outputTruncated: output.truncated,
        error: f.error,
        finishedAt: new Date(),
      },
    });
    const row = rows[0] ?? null;
    if (row) await this.prune(row.ownerId);
    return row;
  }

  /** Kill: a queued task is cancelled at once; a running one is flagged (its executor cancels it). */
  async kill(id: string, ownerId: string): Promise<BgTask> {
    const row = await this.getVisible(id, ownerId);
    if (row.state === 'queued') {
      const rows = await this.prisma.bgTask.updateManyAndReturn({
        where: { id, state: 'queued' },
        data: {
          state: 'cancelled',
          killRequested: true,
          finishedAt: new Date(),
          error: 'killed before it started',
        },
      });
      if (rows[0]) {
        await this.prune(ownerId);
        return rows[0];
      }
    }
    const rows = await this.prisma.bgTask.updateManyAndReturn({
      where: { id, state: { in: ['queued', 'running'] } },
      data: { killRequested: true },
    });
    return rows[0] ?? (await this.getVisible(id, ownerId));
  }

  /** Tasks the queues must hold (rebuild after Redis lost its data). */
  async active(): Promise<BgTask[]> {
    return this.prisma.bgTask.findMany({
      where: { state: { in: ['queued', 'running'] } },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  /** Running tasks whose body is gone are an explicit failure, never replayed. */
  async interrupt(id: string, reason: string): Promise<BgTask | null> {
    const rows = await this.prisma.bgTask.updateManyAndReturn({
      where: { id, state: 'running' },
      data: { state: 'interrupted', error: reason, finishedAt: new Date() },
    });
    return rows[0] ?? null;
  }

  private async prune(ownerId: string): Promise<void> {
    const now = Date.now();
    if (now - (this.prunedAt.get(ownerId) ?? 0) < PRUNE_INTERVAL_MS) return;
    this.prunedAt.set(ownerId, now);
    if (this.prunedAt.size > 10_000) this.prunedAt.clear(); // a bound, not a cache to keep
    await this.prisma.$executeRawUnsafe(
      `DELETE FROM bg_task WHERE id IN (
         SELECT id FROM bg_task WHERE owner_id = $1::uuid AND state IN ('completed','failed','cancelled','interrupted')
         ORDER BY finished_at DESC NULLS LAST, id DESC OFFSET $2)`,
      ownerId,
      KEPT_FINISHED_TASKS,
    );
  }
}
