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

/**
 * What admission asks Postgres (the `foreground_active` function, see its migration): takes the
 * admission locks of the owners of `owners` (an SQL text[]) and of the deployment, as `limits` asks,
 * then counts what is active, each owner's and the deployment's (0 when it has no limit), with a
 * snapshot taken once the locks are held. Rows: one per distinct owner (`CountRow`).
 */
function activeQuery(owners: string, limits: ForegroundLimits): string {
  return `SELECT active_owner AS owner_id, owner_active AS owner, deployment_active AS deployment
     FROM foreground_active(${owners}, ${limits.owner > 0}, ${limits.deployment > 0})`;
}

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
  const admitted = (tx: AdmissionTx) => admitIn(tx, { ownerId, limits }, () => write(tx.query));
  const result = db.pool
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
 * The refusal `wanted` more active runs would meet now, or undefined when they fit. Outside an
 * admission's transaction (a batch's check before its runs start) it is advice that a concurrent
 * start may overtake: the locks it takes go with its own statement.
 */
export async function checkRoom(
  q: TxQuery,
  ownerId: string,
  limits: ForegroundLimits,
  wanted: number,
): Promise<AppError | undefined> {
  if (limits.owner <= 0 && limits.deployment <= 0) return undefined;
  const rows = await q<CountRow>(activeQuery('ARRAY[$1]::text[]', limits), [ownerId]);
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
 * The statement that writes the starts a batch admits, put after the admission's CTEs: `ctes` (CTE
 * definitions, comma-separated, that read the admitted starts' indices from `admitted (k)`) and the
 * `select` answering its rows. Its parameters are `values`, numbered from $4 (the admission's come
 * first); `name` names the prepared statement (one per kind of write).
 */
export interface AdmittedWrite {
  readonly name: string;
  readonly ctes: string;
  readonly select: string;
  readonly values: readonly unknown[];
}

/**
 * Admits several starts and writes those admitted in one prepared statement, so one round trip to
 * Postgres whatever the batch's size: `foreground_active` takes the locks and counts what is active
 * (after the locks are held), the statement decides which starts fit and writes them; it commits on
 * its own, which releases the locks. Starts fit as `admitIn` decides (in order, each counted against
 * its owner and the deployment with the ones admitted before it); the counts come back with the rows,
 * and the refusals are told from them here by that rule. A failing write leaves nothing written (the
 * caller may try the starts one by one). Every start of a batch has the same limits (the service's
 * configuration).
 */
export async function admitAndWrite<R>(
  pool: Pool,
  starts: readonly ForegroundStart[],
  write: AdmittedWrite,
): Promise<{ rows: R[]; admitted: number[]; refused: Map<number, AppError> }> {
  const limits = starts[0]?.limits ?? { owner: 0, deployment: 0 };
  if (starts.some((s) => s.limits.owner !== limits.owner || s.limits.deployment !== limits.deployment))
    throw new Error('the starts admitted together have one set of limits');
  const text = `WITH counted AS (
      SELECT * FROM foreground_active($1::text[], $2::int > 0, $3::int > 0)
    ), ranked AS (
      SELECT (s.k - 1)::int AS k, c.deployment_active AS deployment,
             ($2::int <= 0 OR c.owner_active + row_number() OVER (PARTITION BY s.o ORDER BY s.k) <= $2::int)
               AS owner_fits
      FROM unnest($1::text[]) WITH ORDINALITY AS s(o, k) JOIN counted c ON c.active_owner = s.o
    ), admitted AS (
      SELECT k FROM (
        SELECT k, owner_fits, deployment, count(*) FILTER (WHERE owner_fits) OVER (ORDER BY k) AS so_far
        FROM ranked
      ) x
      WHERE owner_fits AND ($3::int <= 0 OR deployment + so_far <= $3::int)
    ), ${write.ctes}
    SELECT (SELECT jsonb_agg(jsonb_build_object(
              'owner_id', active_owner, 'owner', owner_active, 'deployment', deployment_active))
            FROM counted) AS counts,
           (SELECT jsonb_agg(to_jsonb(w)) FROM (${write.select}) AS w) AS written`;
  const result = await pool.query<{ counts: CountRow[] | null; written: R[] | null }>({
    name: write.name,
    text,
    values: [starts.map((s) => s.ownerId), limits.owner, limits.deployment, ...write.values],
  });
  const row = result.rows[0];
  const { owners, deployment } = counts(row?.counts ?? []);
  const decided = decide(starts, owners, deployment);
  const rows = row?.written ?? [];
  // The statement and `decide` apply one rule: written rows that it did not admit would be runs told refused.
  if (rows.length !== decided.admitted.length)
    throw new Error(`admission wrote ${rows.length} starts where ${decided.admitted.length} fit`);
  return { rows, ...decided };
}

/**
 * Which starts fit, in their order, given what is active: each counted against its owner's and the
 * deployment's limit with the ones admitted before it; the others refused by the scope that is full.
 */
function decide(
  starts: readonly ForegroundStart[],
  owners: Map<string, number>,
  deployment: number,
): { admitted: number[]; refused: Map<number, AppError> } {
  const admitted: number[] = [];
  const refused = new Map<number, AppError>();
  for (const [i, s] of starts.entries()) {
    const owner = owners.get(s.ownerId) ?? 0;
    const refusal = roomFor(owner, deployment, s.limits, 1);
    if (refusal) {
      refused.set(i, refusal);
      continue;
    }
    admitted.push(i);
    owners.set(s.ownerId, owner + 1);
    deployment++;
  }
  return { admitted, refused };
}

/**
 * Inside a transaction: the admission locks and the count (`foreground_active`, with the BEGIN in
 * one message); then the start is written if it fits, or refused with the scope that is full.
 */
async function admitIn<T>(
  tx: AdmissionTx,
  start: ForegroundStart,
  write: () => Promise<T>,
): Promise<T | AppError> {
  const { limits } = start;
  const counted =
    limits.owner > 0 || limits.deployment > 0
      ? counts(await tx.script<CountRow>([activeQuery(ownersArray([start.ownerId]), limits)]))
      : { owners: new Map<string, number>(), deployment: 0 };
  const [refusal] = decide([start], counted.owners, counted.deployment).refused.values();
  return refusal ?? write();
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
