import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ensureDatabase, migrate } from './migrate';

export interface ScratchDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * A new, uniquely named database on the server of `serverUrl` (migrated unless told otherwise):
 * one per test file, or for a throwaway benchmark run. `drop()` removes it, connections and all.
 */
export async function createScratchDatabase(
  serverUrl: string,
  opts: { label?: string; migrate?: boolean } = {},
): Promise<ScratchDatabase> {
  const name = `switchyard_${opts.label ?? 'scratch'}_${randomBytes(5).toString('hex')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  if (opts.migrate !== false) await migrate(url.toString());
  return {
    url: url.toString(),
    name,
    drop: async () => {
      const admin = new URL(serverUrl);
      admin.pathname = '/postgres';
      const client = new Client({ connectionString: admin.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
