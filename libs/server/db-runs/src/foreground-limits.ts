import type { PrismaClient } from '@prisma/client';
import type { Pool } from 'pg';
import { AppError } from '@switchyard/contracts';

/**
 * How much foreground work (runs people start, chat turns) may be active at once: per owner, and
 * for the whole deployment. 0: no limit. Background tasks have their own fair queue in the scheduler;
 * their runs, and runs of a workflow called as a tool, ride on the slot that started them.
 */
export interface ForegroundLimits {
  readonly owner: number;
  readonly deployment: number;
}

export type ForegroundScope = 'owner' | 'deployment';

/** Runs and turns that count: a replica drives them, or is about to. */
const ACTIVE_RUN = `NOT background AND status IN ('planning','awaiting_plan_approval','running','awaiting_step_approval')`;
const ACTIVE_TURN = `status IN ('running','awaiting_approval')`;

// Advisory lock keys (two-int form): one per owner, one for the deployment. Always taken in that
// order, by runs and turns alike, so two admissions never wait on each other in a circle.
const OWNER_LOCK = 0x5359_0f01;
const DEPLOYMENT_LOCK = 0x5359_0f02;

/** One statement inside an admission's transaction. */
export type TxQuery = <T>(text: string, values: unknown[]) => Promise<T[]>;

/**
 * Runs `write` (the statement that makes the run or turn active) in a transaction that first holds
 * the owner's and the deployment's admission locks and counts what is active: a count taken under
 * the lock sees every earlier admission committed, so concurrent starts on any replica cannot
 * overshoot. Refused: `capacity_exceeded` with the scope whose limit is full. Counting the rows
 * themselves (rather than keeping counters) frees a slot the moment a run ends, is interrupted by the
 * lease sweep after its replica died, or its turn closes: nothing to release, nothing to leak.
 */
export async function admitForeground<T>(
  db: { pool?: Pool | undefined; prisma: PrismaClient },
  ownerId: string,
  limits: ForegroundLimits,
  write: (q: TxQuery) => Promise<T>,
): Promise<T> {
  const checked = async (q: TxQuery): Promise<T> => {
    if (limits.owner > 0)
      await q(`SELECT pg_advisory_xact_lock($1::int, hashtext($2::text))::text AS locked`, [
        OWNER_LOCK,
        ownerId,
      ]);
    if (limits.deployment > 0)
      await q(`SELECT pg_advisory_xact_lock($1::int, 0)::text AS locked`, [DEPLOYMENT_LOCK]);
    const refused = await checkRoom(q, ownerId, limits, 1);
    if (refused) throw refused;
    return write(q);
  };
  if (db.pool) {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await checked(
        async <R>(text: string, values: unknown[]) => (await client.query(text, values)).rows as R[],
      );
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
  return db.prisma.$transaction((tx) =>
    checked(<R>(text: string, values: unknown[]) => tx.$queryRawUnsafe<R[]>(text, ...values)),
  );
}

/**
 * The refusal `wanted` more active runs would meet now, or undefined when they fit. Under the
 * admission locks this decides; without them (a batch's check before its runs start) it is advice
 * that a concurrent start may overtake.
 */
export async function checkRoom(
  q: TxQuery,
  ownerId: string,
  limits: ForegroundLimits,
  wanted: number,
): Promise<AppError | undefined> {
  if (limits.owner <= 0 && limits.deployment <= 0) return undefined;
  const [c] = await q<{ owner: number; deployment: number }>(
    `SELECT (SELECT count(*) FROM run WHERE owner_id = $1::uuid AND ${ACTIVE_RUN})
          + (SELECT count(*) FROM chat_session WHERE owner_id = $1::uuid AND ${ACTIVE_TURN}) AS owner,
            CASE WHEN $2::boolean THEN (SELECT count(*) FROM run WHERE ${ACTIVE_RUN})
                            + (SELECT count(*) FROM chat_session WHERE ${ACTIVE_TURN}) ELSE 0 END AS deployment`,
    [ownerId, limits.deployment > 0],
  );
  const owner = Number(c?.owner ?? 0);
  const deployment = Number(c?.deployment ?? 0);
  if (limits.owner > 0 && owner + wanted > limits.owner) return refusal('owner', owner, limits.owner, wanted);
  if (limits.deployment > 0 && deployment + wanted > limits.deployment)
    return refusal('deployment', deployment, limits.deployment, wanted);
  return undefined;
}

function refusal(scope: ForegroundScope, active: number, limit: number, wanted: number): AppError {
  const who = scope === 'owner' ? 'you have' : 'the deployment has';
  const more = wanted > 1 ? ` (${wanted} more asked for)` : '';
  return new AppError(
    'capacity_exceeded',
    `${who} ${active} runs and chat turns active${more}, the ${scope} limit is ${limit}; try again when one ends`,
    {
      details: {
        retryable: true,
        retryAfterSeconds: RETRY_AFTER_SECONDS,
        capacityScope: scope,
        active,
        limit,
      },
    },
  );
}

/** What a refused start is told to wait: runs end at any time, so a short, fixed hint. */
const RETRY_AFTER_SECONDS = 2;
