import { randomUUID } from 'node:crypto';
import { AppError, type RunEvent, type RunEventBody } from '@switchyard/contracts';
import type { PrismaClient } from '@prisma/client';

/**
 * A run_event row as the SQL of both run repositories returns it (`created_at AS at`). Every row was
 * parsed against the event catalog when it was written (RunWriter), so its type and data match.
 */
export type EventRow = RunEventBody & { seq: number; at: Date };

export function toEvent(runId: string, r: EventRow): RunEvent {
  return { ...r, runId, seq: Number(r.seq), at: new Date(r.at).toISOString() };
}

/**
 * The audit log of runs. Each append reserves its sequence numbers by bumping the run's `next_seq`
 * in the same statement that inserts the events: the row lock orders concurrent appenders, and a
 * failed insert rolls the bump back, so every run's events are numbered 1, 2, 3… with no gap and no
 * duplicate. One round trip per batch (raw SQL: this is the hot path of every run).
 */
export class RunEventsRepository {
  constructor(private readonly prisma: PrismaClient) {}

  /** Creates a run row (the minimum its events need). */
  async createRun(ownerId: string, goal: string, config: Record<string, unknown> = {}): Promise<string> {
    const id = randomUUID();
    await this.prisma.run.create({ data: { id, ownerId, goal, config: config as object } });
    return id;
  }

  /** The run's owner, or not_found; `ownerId` null is the admin path that may see any run. */
  async assertVisible(runId: string, ownerId: string | null): Promise<void> {
    const run = await this.prisma.run.findUnique({ where: { id: runId }, select: { ownerId: true } });
    if (!run || (ownerId !== null && run.ownerId !== ownerId))
      throw new AppError('not_found', `run ${runId} does not exist`);
  }

  async append(runId: string, events: readonly RunEventBody[]): Promise<RunEvent[]> {
    if (!events.length) return [];
    const rows = await this.prisma.$queryRawUnsafe<EventRow[]>(
      `WITH bumped AS (
         UPDATE run SET next_seq = next_seq + $2, updated_at = now() WHERE id = $1::uuid
         RETURNING next_seq - $2 AS first_seq
       )
       INSERT INTO run_event (run_id, seq, type, data)
       SELECT $1::uuid, bumped.first_seq + e.ord - 1, e.type, COALESCE(e.data, '{}'::jsonb)
       FROM bumped, ROWS FROM (jsonb_to_recordset($3::jsonb) AS (type text, data jsonb)) WITH ORDINALITY AS e(type, data, ord)
       RETURNING seq, type, data, created_at AS at`,
      runId,
      events.length,
      JSON.stringify(events),
    );
    if (!rows.length) throw new AppError('not_found', `run ${runId} does not exist`);
    return rows.map((r) => toEvent(runId, r)).sort((a, b) => a.seq - b.seq);
  }

  /** Events after `afterSeq` in order (replay for a reconnecting stream), at most `limit`. */
  async readAfter(runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
    const rows = await this.prisma.$queryRawUnsafe<EventRow[]>(
      'SELECT seq, type, data, created_at AS at FROM run_event WHERE run_id = $1::uuid AND seq > $2 ORDER BY seq LIMIT $3',
      runId,
      afterSeq,
      limit,
    );
    return rows.map((r) => toEvent(runId, r));
  }
}
