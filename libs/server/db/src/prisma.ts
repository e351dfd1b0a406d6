import { PrismaClient } from '@prisma/client';
import { PrismaPg } from '@prisma/adapter-pg';
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';
import { Pool } from 'pg';
import type { DatabaseSettings } from '@switchyard/server-config';

export { Prisma, PrismaClient } from '@prisma/client';
export type {
  Owner as OwnerRow,
  ApiToken as ApiTokenRow,
  Role as RoleRow,
  McpTool as McpToolModel,
} from '@prisma/client';

export interface DbOptions {
  readonly url: string;
  readonly poolSize: number;
  readonly applicationName: string;
  /** TLS as configured (DATABASE_SSL_MODE and friends); undefined: plain. */
  readonly ssl?: DatabaseSettings['ssl'];
}

/**
 * node-postgres' `ssl` option with libpq's meanings: verify `full` checks the chain and the host
 * name, `ca` the chain only, `none` encrypts without checking. Certificate files are read here, at
 * pool creation; a pool's new connections reuse them.
 */
export function pgSslOptions(ssl: DatabaseSettings['ssl']): ConnectionOptions | false {
  if (!ssl) return false;
  const read = (f: string | undefined) => (f ? readFileSync(f, 'utf8') : undefined);
  return {
    rejectUnauthorized: ssl.verify !== 'none',
    ...(ssl.caFile ? { ca: read(ssl.caFile) } : {}),
    ...(ssl.certFile ? { cert: read(ssl.certFile), key: read(ssl.keyFile) } : {}),
    ...(ssl.verify === 'ca' ? { checkServerIdentity: () => undefined } : {}),
  };
}

/**
 * How long a pool keeps a connection nobody uses (node-postgres's default is 10 s). A connection
 * opened again costs a cold backend (its catalog caches empty, every prepared statement parsed and
 * planned anew): after ten quiet seconds the next burst paid that on every connection it needed
 * (1,000 parallel steps after a sequential phase: 300–550 ms against ~200 with warm ones). Each
 * service holds at most `poolSize` of them.
 */
export const POOL_IDLE_MS = 5 * 60_000;

/** Prisma over node-postgres (Rust-free client, driver adapter). */
export function createPrisma(opts: DbOptions): PrismaClient {
  const adapter = new PrismaPg({
    connectionString: opts.url,
    max: opts.poolSize,
    application_name: opts.applicationName,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: POOL_IDLE_MS,
    ssl: pgSslOptions(opts.ssl),
  });
  // Prisma's defaults (2 s to start an interactive transaction, 5 s to finish it) fail work that a
  // busy machine only delays: transactions that wait on a lock by design (foreground admissions, a
  // schedule's claim) refused some of 20 concurrent starts with P2028 in CI. A hung one still ends.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 10_000, timeout: 30_000 } });
}

/** One round trip to Postgres (readiness); the caller bounds and times it. */
export async function pingPostgres(prisma: PrismaClient): Promise<void> {
  await prisma.$queryRawUnsafe('SELECT 1');
}

export type { Pool as PgPool } from 'pg';

/**
 * A plain node-postgres pool for hot paths that Prisma's per-query overhead would dominate (run
 * events: measured 1.8 ms per append through Prisma against 0.6 ms as a prepared statement here).
 *
 * An idle connection that the server drops (a Postgres restart, an admin's `pg_terminate_backend`)
 * makes the pool emit `error`; unheard, that event would kill the process. The pool has already
 * discarded that connection and opens a fresh one on the next query, so the error is only reported
 * (`onIdleError`, by default one line on stderr). Prisma's own pool does the same.
 */
export function createPgPool(opts: DbOptions & { onIdleError?: (err: Error) => void }): Pool {
  const pool = new Pool({
    connectionString: opts.url,
    max: opts.poolSize,
    application_name: opts.applicationName,
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: POOL_IDLE_MS,
    ssl: pgSslOptions(opts.ssl),
  });
  pool.on(
    'error',
    opts.onIdleError ??
      ((err) =>
        process.stderr.write(`${opts.applicationName}: idle Postgres connection dropped: ${err.message}\n`)),
  );
  return pool;
}
