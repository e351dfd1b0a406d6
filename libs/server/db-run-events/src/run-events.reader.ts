import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppError, type RunEvent, type RunEventBody } from '@switchyard/contracts';
import { PRISMA, type PgPool, type PrismaClient } from '@switchyard/server-db';
import { RUN_EVENTS_POOL } from './run-events-pool';

/**
 * A run_event row as the SQL of the run repositories returns it (`created_at AS at`). Every row was
 * parsed against the event catalog when it was written (RunWriter), so its type and data match.
 */
export type EventRow = RunEventBody & { seq: number; at: Date };

export function toEvent(runId: string, r: EventRow): RunEvent {
  return { ...r, runId, seq: Number(r.seq), at: new Date(r.at).toISOString() };
}

/**
 * The read-only face of the executor's run log, for the gateway's stream (replay after a sequence
 * number, visibility). It cannot write: runs and their events are the executor's (libs/server/db-runs).
 */
const OWNER_SQL = 'SELECT owner_id FROM run WHERE id = $1::uuid';
const AFTER_SQL =
  'SELECT seq, type, data, created_at AS at FROM run_event WHERE run_id = $1::uuid AND seq > $2 ORDER BY seq LIMIT $3';

/**
 * A statement on the pool (prepared once per connection), else through Prisma. A module function,
 * not a method: the reader's surface stays its two reads.
 */
async function query<T>(
  prisma: PrismaClient,
  pool: PgPool | undefined,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  if (pool) return (await pool.query({ name, text, values })).rows as T[];
  return prisma.$queryRawUnsafe<T[]>(text, ...values);
}

@Injectable()
export class RunEventsReader {
  /**
   * `pool`: raw pg for the gateway's streams (RUN_EVENTS_POOL_PROVIDERS), whose every open reads
   * here; through Prisma each read left kilobytes of garbage in the old space. Else Prisma.
   */
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Optional() @Inject(RUN_EVENTS_POOL) private readonly pool?: PgPool,
  ) {}

  /** The run's owner, or not_found; `ownerId` null is the admin path that may see any run. */
  async assertVisible(runId: string, ownerId: string | null): Promise<void> {
    const [run] = await query<{ owner_id: string }>(this.prisma, this.pool, 'run_events_owner', OWNER_SQL, [runId]);
    if (!run || (ownerId !== null && run.owner_id !== ownerId))
      throw new AppError('not_found', `run ${runId} does not exist`);
  }

  /** Events after `afterSeq` in order (replay for a reconnecting stream), at most `limit`. */
  async readAfter(runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
    const rows = await query<EventRow>(this.prisma, this.pool, 'run_events_after', AFTER_SQL, [runId, afterSeq, limit]);
    return rows.map((r) => toEvent(runId, r));
  }
}
