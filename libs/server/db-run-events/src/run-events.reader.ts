import { Inject, Injectable } from '@nestjs/common';
import { AppError, type RunEvent, type RunEventBody } from '@switchyard/contracts';
import { PRISMA, type PrismaClient } from '@switchyard/server-db';

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
@Injectable()
export class RunEventsReader {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  /** The run's owner, or not_found; `ownerId` null is the admin path that may see any run. */
  async assertVisible(runId: string, ownerId: string | null): Promise<void> {
    const run = await this.prisma.run.findUnique({ where: { id: runId }, select: { ownerId: true } });
    if (!run || (ownerId !== null && run.ownerId !== ownerId))
      throw new AppError('not_found', `run ${runId} does not exist`);
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
