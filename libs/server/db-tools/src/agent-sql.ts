import { Client, DatabaseError, Pool, type QueryConfig, type QueryResult } from 'pg';

export interface AgentSqlOptions {
  /** A postgres:// URL, ideally for a role that can only SELECT the tables the agent may read. */
  readonly url: string;
  /** statement_timeout inside each read-only transaction; default 30 s. */
  readonly statementTimeoutMs?: number;
  /** Pool size; default 4. */
  readonly maxConnections?: number;
  /** search_path for each transaction (a set_config value); default `public`. */
  readonly searchPath?: string;
  readonly applicationName?: string;
}

export interface AgentSqlField {
  readonly name: string;
  readonly dataTypeID: number;
}

export interface AgentSqlResult<R> {
  readonly rows: R[];
  readonly fields: AgentSqlField[];
}

export interface AgentSqlQuery {
  readonly values?: readonly unknown[];
  /** `array`: each row is an array in field order (keeps duplicate column names apart). */
  readonly rowMode?: 'array';
  /** Aborting cancels the running statement on the server. */
  readonly signal?: AbortSignal;
}

/** The statement ran past the statement_timeout and Postgres cancelled it. */
export class AgentSqlTimeoutError extends Error {
  override readonly name = 'AgentSqlTimeoutError';
  constructor(readonly timeoutMs: number) {
    super(`canceling statement due to statement timeout (${timeoutMs} ms)`);
  }
}

/** The caller's signal aborted and the statement was cancelled on the server. */
export class AgentSqlCancelledError extends Error {
  override readonly name = 'AgentSqlCancelledError';
  constructor() {
    super('the statement was cancelled');
  }
}

const QUERY_CANCELED = '57014';
const CANCEL_ATTEMPTS = 20;
const CANCEL_RETRY_MS = 100;

/**
 * A small pool for queries written by an agent. Every query runs alone in its own
 * `BEGIN TRANSACTION READ ONLY` with a local statement_timeout and search_path, over the extended
 * protocol (so the text can hold one statement only), and is always rolled back. The sessions are
 * also opened with default_transaction_read_only=on. The role behind the URL should still be a
 * read-only one: this is a second line, not the first.
 */
export class AgentSqlConnection {
  readonly statementTimeoutMs: number;
  private readonly pool: Pool;
  private readonly searchPath: string;
  private closed = false;

  constructor(private readonly opts: AgentSqlOptions) {
    this.statementTimeoutMs = opts.statementTimeoutMs ?? 30_000;
    if (!Number.isInteger(this.statementTimeoutMs) || this.statementTimeoutMs < 1)
      throw new Error('statementTimeoutMs must be a positive integer');
    this.searchPath = opts.searchPath ?? 'public';
    this.pool = new Pool({
      connectionString: opts.url,
      max: opts.maxConnections ?? 4,
      application_name: opts.applicationName ?? 'switchyard-agent-sql',
      connectionTimeoutMillis: 5_000,
      idleTimeoutMillis: 10_000,
      options: '-c default_transaction_read_only=on',
    });
    // An idle connection that dies (server restart) must not crash the process; the next
    // checkout simply opens a new one.
    this.pool.on('error', () => undefined);
  }

  /** Runs `text` (one statement) in a read-only transaction that is rolled back afterwards. */
  async query<R = Record<string, unknown>>(text: string, q: AgentSqlQuery = {}): Promise<AgentSqlResult<R>> {
    if (this.closed) throw new Error('the agent SQL connection is closed');
    if (q.signal?.aborted) throw new AgentSqlCancelledError();
    const client = await this.pool.connect();
    let broken: Error | undefined;
    let cancelled = false;
    let settled = false;
    let pid: number | undefined;
    const onAbort = () => {
      cancelled = true;
      // A cancel request that lands between protocol messages is ignored by the server, so it is
      // repeated until the statement has ended.
      void (async () => {
        for (let i = 0; i < CANCEL_ATTEMPTS && !settled && pid !== undefined; i++) {
          await this.cancelBackend(pid);
          await new Promise((r) => setTimeout(r, CANCEL_RETRY_MS));
        }
      })();
    };
    try {
      await client.query('BEGIN TRANSACTION READ ONLY');
      const setup = await client.query<{ pid: number }>(
        "SELECT pg_backend_pid() AS pid, set_config('statement_timeout', $1, true), set_config('search_path', $2, true)",
        [String(this.statementTimeoutMs), this.searchPath],
      );
      pid = setup.rows[0]?.pid;
      q.signal?.addEventListener('abort', onAbort, { once: true });
      if (q.signal?.aborted) throw new AgentSqlCancelledError();
      // queryMode 'extended' (not in @types/pg): Parse/Bind/Execute even without values, so a
      // second statement in the text is a server error instead of being run.
      const config = { text, values: [...(q.values ?? [])], queryMode: 'extended', rowMode: q.rowMode };
      const res = (await client.query(config as QueryConfig)) as QueryResult;
      return {
        rows: res.rows as R[],
        fields: res.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
      };
    } catch (err) {
      if (err instanceof DatabaseError && err.code === QUERY_CANCELED) {
        throw cancelled ? new AgentSqlCancelledError() : new AgentSqlTimeoutError(this.statementTimeoutMs);
      }
      throw err;
    } finally {
      settled = true;
      q.signal?.removeEventListener('abort', onAbort);
      try {
        await client.query('ROLLBACK');
      } catch (err) {
        broken = err as Error;
      }
      // A connection whose rollback failed, or that a late cancel request could still reach, is
      // discarded rather than reused.
      client.release(broken ?? (cancelled ? new AgentSqlCancelledError() : undefined));
    }
  }

  /** Asks the server to cancel what `pid` runs, over a separate short-lived connection. */
  private async cancelBackend(pid: number): Promise<void> {
    const client = new Client({
      connectionString: this.opts.url,
      application_name: `${this.opts.applicationName ?? 'switchyard-agent-sql'}-cancel`,
      connectionTimeoutMillis: 5_000,
    });
    try {
      await client.connect();
      await client.query('SELECT pg_cancel_backend($1)', [pid]);
    } catch {
      // best effort: the statement_timeout still bounds the query
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
