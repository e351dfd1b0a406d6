import type { PrismaClient } from '@prisma/client';
import { escapeLiteral, type Pool, type QueryResult } from 'pg';
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
 * An admission's transaction: `script` runs statements without parameters one after the other
 * (each with its own snapshot) and answers the last one's rows; on a pg connection they travel in
 * one message, with the BEGIN, so the locks and the count cost one round trip, not four.
 */
interface AdmissionTx {
  readonly script: <T>(statements: readonly string[]) => Promise<T[]>;
  readonly query: TxQuery;
}

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
  const admitted = (tx: AdmissionTx) =>
    admitIn(tx, [{ ownerId, limits }], async () => [await write(tx.query)]);
  const [result] = db.pool
    ? await inTransaction(db.pool, admitted)
    : await db.prisma.$transaction((tx) => {
        const query = <R>(text: string, values: unknown[]) => tx.$queryRawUnsafe<R[]>(text, ...values);
        return admitted({
          query,
          script: async <R>(statements: readonly string[]) => {
            let rows: R[] = [];
            for (const text of statements) rows = await query<R>(text, []);
            return rows;
          },
        });
      });
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
  const rows = await q<CountRow>(countActive([ownerId], limits.deployment > 0), []);
  const { owners, deployment } = counts(rows);
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

interface CountRow {
  owner_id: string;
  owner: number | string;
  deployment: number | string;
}

/** Owner ids as a text[] literal: the admission's statements carry no parameters (see AdmissionTx). */
function ownersArray(owners: readonly string[]): string {
  return `ARRAY[${owners.map((o) => escapeLiteral(o)).join(',')}]::text[]`;
}

/**
 * The statement counting the active foreground runs and turns of each of `owners` (a row each), and
 * of the deployment when asked (else 0).
 */
function countActive(owners: readonly string[], withDeployment: boolean): string {
  return `SELECT o AS owner_id,
            (SELECT count(*) FROM run WHERE owner_id = o::uuid AND ${ACTIVE_RUN})
          + (SELECT count(*) FROM chat_session WHERE owner_id = o::uuid AND ${ACTIVE_TURN}) AS owner,
            ${
              withDeployment
                ? `(SELECT count(*) FROM run WHERE ${ACTIVE_RUN}) + (SELECT count(*) FROM chat_session WHERE ${ACTIVE_TURN})`
                : '0'
            } AS deployment
     FROM unnest(${ownersArray(owners)}) AS o`;
}

function counts(rows: readonly CountRow[]): { owners: Map<string, number>; deployment: number } {
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
 * Admits several starts in one transaction (group commit): see `admitIn`. Whatever the batch's
 * size, that is three round trips: the locks and the count, one `write` of the starts admitted (by
 * their indices; it answers one result each, in that order), the commit. Answers, in order, what
 * `write` returned for each start or its refusal. A failing write fails the whole transaction (the
 * caller may try the starts one by one).
 */
export function admitForegroundMany<T>(
  pool: Pool,
  starts: readonly ForegroundStart[],
  write: (q: TxQuery, admitted: readonly number[]) => Promise<readonly T[]>,
): Promise<Array<T | AppError>> {
  return inTransaction(pool, (tx) => admitIn(tx, starts, (admitted) => write(tx.query, admitted)));
}

/**
 * Inside a transaction: the owners' locks (taken in one order, so two transactions never wait on
 * each other in a circle), then the deployment's, one count for all; then each start in its order
 * is admitted while it fits (the counts growing with each one admitted) or refused with the scope
 * that is full, and the admitted ones are written together.
 */
async function admitIn<T>(
  tx: AdmissionTx,
  starts: readonly ForegroundStart[],
  write: (admitted: readonly number[]) => Promise<readonly T[]>,
): Promise<Array<T | AppError>> {
  const locked = [...new Set(starts.filter((s) => s.limits.owner > 0).map((s) => s.ownerId))].sort();
  const anyDeployment = starts.some((s) => s.limits.deployment > 0);
  const limited = starts.some((s) => s.limits.owner > 0 || s.limits.deployment > 0);
  const statements = [
    ...(locked.length
      ? [
          `SELECT pg_advisory_xact_lock(${OWNER_LOCK}, hashtext(o))::text AS locked FROM unnest(${ownersArray(locked)}) AS o`,
        ]
      : []),
    ...(anyDeployment ? [`SELECT pg_advisory_xact_lock(${DEPLOYMENT_LOCK}, 0)::text AS locked`] : []),
    ...(limited ? [countActive([...new Set(starts.map((s) => s.ownerId))], anyDeployment)] : []),
  ];
  const counted = limited
    ? counts(await tx.script<CountRow>(statements))
    : { owners: new Map<string, number>(), deployment: 0 };
  let deployment = counted.deployment;
  const out: Array<T | AppError> = [];
  const admitted: number[] = [];
  for (const [i, s] of starts.entries()) {
    const owner = counted.owners.get(s.ownerId) ?? 0;
    const refused = roomFor(owner, deployment, s.limits, 1);
    if (refused) {
      out[i] = refused;
      continue;
    }
    admitted.push(i);
    counted.owners.set(s.ownerId, owner + 1);
    deployment++;
  }
  if (admitted.length) {
    const written = await write(admitted);
    admitted.forEach((i, j) => (out[i] = written[j] as T));
  }
  return out;
}

/**
 * `body` in a transaction on one of the pool's connections: committed if it returns, else rolled
 * back. The BEGIN goes with the body's first statements.
 */
async function inTransaction<T>(pool: Pool, body: (tx: AdmissionTx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let begun = false;
  const begin = async () => {
    if (begun) return;
    begun = true;
    await client.query('BEGIN');
  };
  try {
    const result = await body({
      script: async <R>(statements: readonly string[]) => {
        const sent = begun ? statements : ['BEGIN', ...statements];
        begun = true;
        const results = (await client.query(sent.join(';\n'))) as unknown as QueryResult | QueryResult[];
        const last = Array.isArray(results) ? results[results.length - 1] : results;
        return (last?.rows ?? []) as R[];
      },
      query: async <R>(text: string, values: unknown[]) => {
        await begin();
        return (await client.query(text, values)).rows as R[];
      },
    });
    if (begun) await client.query('COMMIT');
    return result;
  } catch (err) {
    if (begun) await client.query('ROLLBACK').catch(() => undefined);
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
