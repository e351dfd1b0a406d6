import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ensureDatabase, migrate } from '@switchyard/server-db';

export const BASE_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file (and so one jest worker at a time). */
export async function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const worker = process.env['JEST_WORKER_ID'] ?? '0';
  const name = `switchyard_t${worker}_${randomBytes(5).toString('hex')}`;
  const url = new URL(BASE_DATABASE_URL);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  if (opts.migrate !== false) await migrate(url.toString());
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const admin = new Client({ connectionString: BASE_DATABASE_URL });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A NATS subject prefix / Redis key prefix no other test shares. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}.`;
}
