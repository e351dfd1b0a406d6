import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppError, type RunEvent, type RunEventBody } from '@switchyard/contracts';
import { pgPoolProviders, PRISMA, type PgPool, type PrismaClient } from '@switchyard/server-db';

/**
 * A plain pg pool for the reader (the gateway's): each stream a client opens asks who owns the run
 * and what it holds, and through Prisma those two reads were a quarter of a gateway's CPU when
 * thousands of short runs were followed at once. Without it the reader goes through Prisma.
 */
export const RUN_EVENTS_READ_POOL = Symbol('RUN_EVENTS_READ_POOL');

const VISIBLE = 'SELECT owner_id FROM run WHERE id = $1::uuid';
/**
 * A timestamp expression as epoch milliseconds (a float8): a number for the driver to read, where a
 * timestamp is a date string it parses with a regular expression.
 */
export function epochMs(timestamp: string): string {
  return `(extract(epoch FROM ${timestamp}) * 1000)::float8`;
}

/** An event row's time (`created_at`, kept to the millisecond) as epoch milliseconds, named `at`. */
export const EVENT_AT_MS = `${epochMs('created_at')} AS at`;

const AFTER = `SELECT seq, type, data, ${EVENT_AT_MS} FROM run_event WHERE run_id = $1::uuid AND seq > $2 ORDER BY seq LIMIT $3`;

/**
 * A run_event row as the SQL of the run repositories returns it (`created_at AS at`, or epoch
 * milliseconds with EVENT_AT_MS). Every row was parsed against the event catalog when it was
 * written (RunWriter), so its type and data match.
 */
export type EventRow = RunEventBody & { seq: number; at: Date | number };

export function toEvent(runId: string, r: EventRow): RunEvent {
  return storedEvent(runId, r, Number(r.seq), new Date(r.at).toISOString());
}

/**
 * A stored event built as one literal, so every event has the same hidden class: spreading the body
 * (`{...body, runId, seq, at}`) took V8's slow path, about 3 µs an event, 7 times this.
 */
export function storedEvent(runId: string, body: RunEventBody, seq: number, at: string): RunEvent {
  return { type: body.type, data: body.data, seq, at, runId } as RunEvent;
}

/**
 * The read-only face of the executor's run log, for the gateway's stream (replay after a sequence
 * number, visibility). It cannot write: runs and their events are the executor's (libs/server/db-runs).
 */
@Injectable()
export class RunEventsReader {
  constructor(
    @Inject(PRISMA) private readonly prisma: PrismaClient,
    @Optional() @Inject(RUN_EVENTS_READ_POOL) private readonly pool?: PgPool,
  ) {}

  /** The run's owner, or not_found; `ownerId` null is the admin path that may see any run. */
  async assertVisible(runId: string, ownerId: string | null): Promise<void> {
    const [run] = await rowsOf<{ owner_id: string }>(this.prisma, this.pool, 'run_visible', VISIBLE, [runId]);
    if (!run || (ownerId !== null && run.owner_id !== ownerId))
      throw new AppError('not_found', `run ${runId} does not exist`);
  }

  /** Events after `afterSeq` in order (replay for a reconnecting stream), at most `limit`. */
  async readAfter(runId: string, afterSeq: number, limit = 500): Promise<RunEvent[]> {
    const rows = await rowsOf<EventRow>(this.prisma, this.pool, 'run_events_after', AFTER, [
      runId,
      afterSeq,
      limit,
    ]);
    return rows.map((r) => toEvent(runId, r));
  }
}

/** On the pool as a named (prepared) statement; else through Prisma. */
async function rowsOf<T>(
  prisma: PrismaClient,
  pool: PgPool | undefined,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  if (pool) return (await pool.query<T & object>({ name, text, values })).rows;
  return prisma.$queryRawUnsafe<T[]>(text, ...values);
}

/** The reader's pool and its closer: providers of the gateway's module. */
export const RUN_EVENTS_READ_POOL_PROVIDERS = pgPoolProviders(RUN_EVENTS_READ_POOL, 'run-events');
