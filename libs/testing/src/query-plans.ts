import type { PgPool as Pool } from '@switchyard/server-db';

/** pg's own conversion of a bound value to the text it sends (arrays as array literals, Dates, JSON). */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- pg ships no types for lib/utils
const { prepareValue } = require('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

/** A statement a repository sent through a pool, with the values it was bound to. */
export interface SentStatement {
  readonly name?: string;
  readonly text: string;
  readonly values: readonly unknown[];
}

/**
 * Records every statement sent through `pool.query` (as a config object or text and values) until
 * `stop` is called; the statements still run.
 */
export function recordStatements(pool: Pool): { sent: SentStatement[]; stop: () => void } {
  const sent: SentStatement[] = [];
  const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const recording = (...args: unknown[]) => {
    const [first, second] = args;
    if (typeof first === 'string') sent.push({ text: first, values: (second as unknown[]) ?? [] });
    else if (first && typeof first === 'object' && 'text' in first) {
      const c = first as { name?: string; text: string; values?: unknown[] };
      sent.push({ ...(c.name ? { name: c.name } : {}), text: c.text, values: c.values ?? [] });
    }
    return original(...args);
  };
  (pool as unknown as { query: unknown }).query = recording;
  return { sent, stop: () => ((pool as unknown as { query: unknown }).query = original) };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

function seqScansOf(node: PlanNode, out: string[]): string[] {
  if (node['Node Type'] === 'Seq Scan' && node['Relation Name']) out.push(node['Relation Name']);
  for (const child of node.Plans ?? []) seqScansOf(child, out);
  return out;
}

/**
 * The tables Postgres would read whole to run `statement`: with a plan made for its values (what an
 * unnamed statement always gets, and a named one for its first five executions) and, for a named
 * (prepared) statement, with the generic plan Postgres may switch it to after that (made without
 * knowing the values). Nothing is executed.
 */
export async function sequentialScans(
  pool: Pool,
  statement: SentStatement,
): Promise<{ custom: string[]; generic: string[] }> {
  const client = await pool.connect();
  try {
    // EXPLAIN takes no bound parameters: a prepared statement of SQL's own (PREPARE, apart from the
    // pool's protocol-level ones) is executed with the values written as literals (as pg sends them).
    const args = statement.values
      .map((v) => {
        const text = prepareValue(v) as string | null;
        return text === null ? 'NULL' : client.escapeLiteral(String(text));
      })
      .join(', ');
    const plan = async (mode: 'force_custom_plan' | 'force_generic_plan') => {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) EXECUTE switchyard_plan_check${args ? `(${args})` : ''}`,
      );
      return seqScansOf((rows[0]?.['QUERY PLAN'][0] as { Plan: PlanNode }).Plan, []);
    };
    await client.query(`PREPARE switchyard_plan_check AS ${statement.text}`);
    try {
      const custom = await plan('force_custom_plan');
      return { custom, generic: statement.name ? await plan('force_generic_plan') : [] };
    } finally {
      await client.query('RESET plan_cache_mode');
      await client.query('DEALLOCATE switchyard_plan_check');
    }
  } finally {
    client.release();
  }
}

/** A statement some plan of which reads a table whole, named by its name or its first words. */
export interface WholeRead {
  readonly statement: string;
  readonly custom: string[];
  readonly generic: string[];
}

/**
 * The distinct statements among `sent` (by text) and those of them some plan of which reads a table
 * whole (see sequentialScans).
 */
export async function wholeTableReads(
  pool: Pool,
  sent: readonly SentStatement[],
): Promise<{ distinct: number; readWhole: WholeRead[] }> {
  const distinct = new Map(sent.map((s) => [s.text, s]));
  const readWhole: WholeRead[] = [];
  for (const s of distinct.values()) {
    const scans = await sequentialScans(pool, s);
    if (scans.custom.length || scans.generic.length)
      readWhole.push({ statement: s.name ?? s.text.slice(0, 80), ...scans });
  }
  return { distinct: distinct.size, readWhole };
}
