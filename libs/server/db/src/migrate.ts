import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from 'pg';
import type { DatabaseSettings } from '@switchyard/server-config';
import { pgSslOptions } from './prisma';

/*
 * Our own migration runner. Prisma's `migrate deploy` runs through the WASM engine here and fails on
 * PostgreSQL 15 (prisma/orm#27403), so we apply the checked-in SQL ourselves: in name order, each
 * migration in its own transaction, recorded with a checksum, under an advisory lock so replicas
 * starting together apply each migration exactly once.
 */

export interface Migration {
  readonly name: string;
  readonly sql: string;
  readonly checksum: string;
}

export interface MigrationResult {
  readonly applied: string[];
  readonly alreadyApplied: string[];
}

const LOCK_KEY = 7_302_951_117; // arbitrary, stable: "switchyard migrations"
const TABLE = '_switchyard_migrations';

/** Finds libs/server/db/prisma/migrations from source, from dist/, or from a container's /app. */
export function findMigrationsDir(start = __dirname): string {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'libs', 'server', 'db', 'prisma', 'migrations');
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`cannot find libs/server/db/prisma/migrations above ${start}`);
    dir = parent;
  }
}

export function readMigrations(dir: string): Migration[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
    .map((name) => {
      const sql = readFileSync(join(dir, name, 'migration.sql'), 'utf8');
      return { name, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    });
}

/** Creates the database named in `url` when it does not exist yet (needs CREATEDB on the server). */
export async function ensureDatabase(url: string, ssl?: DatabaseSettings['ssl']): Promise<boolean> {
  const target = new URL(url);
  const dbName = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!dbName) throw new Error('DATABASE_URL names no database');
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString(), ssl: pgSslOptions(ssl) });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE "${dbName.replace(/"/g, '""')}"`);
      return true;
    } catch (err) {
      // Another process created it between our check and our CREATE.
      if ((err as { code?: string }).code === '42P04' || (err as { code?: string }).code === '23505')
        return false;
      throw err;
    }
  } finally {
    await client.end();
  }
}

export async function migrate(
  url: string,
  opts: { dir?: string; log?: (line: string) => void; ssl?: DatabaseSettings['ssl'] } = {},
): Promise<MigrationResult> {
  const migrations = readMigrations(opts.dir ?? findMigrationsDir());
  const log = opts.log ?? (() => undefined);
  const client = new Client({
    connectionString: url,
    application_name: 'switchyard-migrate',
    ssl: pgSslOptions(opts.ssl),
  });
  await client.connect();
  const applied: string[] = [];
  const alreadyApplied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${TABLE} (
         name text PRIMARY KEY,
         checksum char(64) NOT NULL,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const rows = await client.query<{ name: string; checksum: string }>(
      `SELECT name, checksum FROM ${TABLE}`,
    );
    const done = new Map(rows.rows.map((r) => [r.name, r.checksum]));
    for (const m of migrations) {
      const previous = done.get(m.name);
      if (previous !== undefined) {
        if (previous !== m.checksum) {
          throw new Error(
            `migration ${m.name} was edited after it was applied (checksum differs); add a new migration instead`,
          );
        }
        alreadyApplied.push(m.name);
        continue;
      }
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query(`INSERT INTO ${TABLE} (name, checksum) VALUES ($1, $2)`, [m.name, m.checksum]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${m.name} failed: ${(err as Error).message}`, { cause: err });
      }
      applied.push(m.name);
      log(`applied migration ${m.name}`);
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
  return { applied, alreadyApplied };
}
