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
  const admitted = (q: TxQuery) => admitIn(q, [{ ownerId, limits }], () => write(q));
  const [result] = db.pool
    ? await inTransaction(db.pool, admitted)
    : await db.prisma.$transaction((tx) =>
        admitted(<R>(text: string, values: unknown[]) => tx.$queryRawUnsafe<R[]>(text, ...values)),
      );
  if (result instanceof AppError) throw result;
  return result as T;
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
  const { owners, deployment } = await countActive(q, [ownerId], limits.deployment > 0);
  return roomFor(owners.get(ownerId) ?? 0, deployment, limits, wanted);
}

/** The refusal `wanted` more would meet with `owner` and `deployment` active, or undefined. */
function roomFor(
  owner: number,
  deployment: number,
  limits: ForegroundLimits,
  wanted: number,
): AppError | undefined {
  if (limits.owner > 0 && owner + wanted > limits.owner) return refusal('owner', owner, limits.owner, wanted);
  if (limits.deployment > 0 && deployment + wanted > limits.deployment)
    return refusal('deployment', deployment, limits.deployment, wanted);
  return undefined;
}

/** Active foreground runs and turns of each of `owners`, and of the deployment when asked (else 0). */
async function countActive(
  q: TxQuery,
  owners: readonly string[],
  withDeployment: boolean,
): Promise<{ owners: Map<string, number>; deployment: number }> {
  const rows = await q<{ owner_id: string; owner: number; deployment: number }>(
    `SELECT o AS owner_id,
            (SELECT count(*) FROM run WHERE owner_id = o::uuid AND ${ACTIVE_RUN})
          + (SELECT count(*) FROM chat_session WHERE owner_id = o::uuid AND ${ACTIVE_TURN}) AS owner,
            CASE WHEN $2::boolean THEN (SELECT count(*) FROM run WHERE ${ACTIVE_RUN})
                            + (SELECT count(*) FROM chat_session WHERE ${ACTIVE_TURN}) ELSE 0 END AS deployment
     FROM unnest($1::text[]) AS o`,
    [owners, withDeployment],
  );
  return {
    owners: new Map(rows.map((r) => [r.owner_id, Number(r.owner)])),
    deployment: Number(rows[0]?.deployment ?? 0),
  };
}

/** A start waiting for admission in a batch. */
export interface ForegroundStart {
  readonly ownerId: string;
  readonly limits: ForegroundLimits;
}

/**
 * Admits several starts in one transaction (group commit): see `admitIn`. A batch of n starts costs
 * n + 5 statements instead of 6n, and holds the deployment's lock once. Answers, in order, what each
 * `write` returned or its refusal. A failing write fails the whole transaction (the caller may try
 * the starts one by one).
 */
export function admitForegroundMany<T>(
  pool: Pool,
  starts: readonly ForegroundStart[],
  write: (q: TxQuery, index: number) => Promise<T>,
): Promise<Array<T | AppError>> {
  return inTransaction(pool, (q) => admitIn(q, starts, (i) => write(q, i)));
}

/**
 * Inside a transaction: the owners' locks (taken in one order, so two transactions never wait on
 * each other in a circle), then the deployment's, one count for all, then each start in its order is
 * written while it fits (the counts growing with each one written) or refused with the scope that is
 * full.
 */
async function admitIn<T>(
  q: TxQuery,
  starts: readonly ForegroundStart[],
  write: (index: number) => Promise<T>,
): Promise<Array<T | AppError>> {
  const locked = [...new Set(starts.filter((s) => s.limits.owner > 0).map((s) => s.ownerId))].sort();
  if (locked.length)
    await q(
      `SELECT pg_advisory_xact_lock($1::int, hashtext(o))::text AS locked FROM unnest($2::text[]) AS o`,
      [OWNER_LOCK, locked],
    );
  const anyDeployment = starts.some((s) => s.limits.deployment > 0);
  if (anyDeployment) await q(`SELECT pg_advisory_xact_lock($1::int, 0)::text AS locked`, [DEPLOYMENT_LOCK]);
  const limited = starts.some((s) => s.limits.owner > 0 || s.limits.deployment > 0);
  const counted = limited
    ? await countActive(q, [...new Set(starts.map((s) => s.ownerId))], anyDeployment)
    : { owners: new Map<string, number>(), deployment: 0 };
  let deployment = counted.deployment;
  const out: Array<T | AppError> = [];
  for (const [i, s] of starts.entries()) {
    const owner = counted.owners.get(s.ownerId) ?? 0;
    const refused = roomFor(owner, deployment, s.limits, 1);
    if (refused) {
      out.push(refused);
      continue;
    }
    out.push(await write(i));
    counted.owners.set(s.ownerId, owner + 1);
    deployment++;
  }
  return out;
}

/** `body` in a transaction on one of the pool's connections: committed if it returns, else rolled back. */
async function inTransaction<T>(pool: Pool, body: (q: TxQuery) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await body(
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
