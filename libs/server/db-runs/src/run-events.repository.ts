import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, type RunEvent, type RunEventBody } from '@switchyard/contracts';
import { PRISMA, type PrismaClient } from '@switchyard/server-db';
import { RunEventsReader, toEvent, type EventRow } from '@switchyard/server-db-run-events';

/**
 * The audit log of runs. Each append reserves its sequence numbers by bumping the run's `next_seq`
 * in the same statement that inserts the events: the row lock orders concurrent appenders, and a
 * failed insert rolls the bump back, so every run's events are numbered 1, 2, 3… with no gap and no
 * duplicate. One round trip per batch. The executor writes through RunsRepository (the same statement
 * over a pg pool, with the run row's changes); this Prisma-only writer stands in for it in tests.
 */
@Injectable()
export class RunEventsRepository extends RunEventsReader {
  constructor(@Inject(PRISMA) private readonly db: PrismaClient) {
    super(db);
  }

  /** Creates a run row (the minimum its events need). */
  async createRun(ownerId: string, goal: string, config: Record<string, unknown> = {}): Promise<string> {
    const id = randomUUID();
    await this.db.run.create({ data: { id, ownerId, goal, config: config as object } });
    return id;
  }

  async append(runId: string, events: readonly RunEventBody[]): Promise<RunEvent[]> {
    if (!events.length) return [];
    const rows = await this.db.$queryRawUnsafe<EventRow[]>(
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
}
