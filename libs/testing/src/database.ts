import { randomBytes } from 'node:crypto';
import { createScratchDatabase, type ScratchDatabase } from '@switchyard/server-db';

export const TEST_POSTGRES_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export type TestDatabase = ScratchDatabase;

/** A fresh, migrated database for one test file (and so one jest worker at a time). */
export function createTestDatabase(opts: { migrate?: boolean } = {}): Promise<TestDatabase> {
  return createScratchDatabase(TEST_POSTGRES_URL, {
    label: `t${process.env['JEST_WORKER_ID'] ?? '0'}`,
    ...opts,
  });
}

/** A NATS subject prefix / Redis key prefix no other test shares. */
export function uniquePrefix(label = 't'): string {
  return `${label}${randomBytes(4).toString('hex')}.`;
}
