import { mkdtempSync, mkdirSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';
import { findMigrationsDir, migrate, readMigrations } from './migrate';

describe('migration runner (real Postgres)', () => {
  let db: ScratchDatabase;

  beforeEach(async () => {
    db = await createScratchDatabase(SERVER, { label: 'mig', migrate: false });
  });

  afterEach(async () => {
    await db.drop();
  });

  async function count(sql: string): Promise<number> {
    const c = new Client({ connectionString: db.url });
    await c.connect();
    try {
      const r = await c.query<{ n: string }>(sql);
      return Number(r.rows[0]?.n);
    } finally {
      await c.end();
    }
  }

  it('applies every migration once when several replicas start at the same time', async () => {
    const expected = readMigrations(findMigrationsDir()).map((m) => m.name);
    const results = await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url), migrate(db.url)]);
    const appliedEverywhere = results.flatMap((r) => r.applied);
    expect(appliedEverywhere.sort()).toEqual([...expected].sort());
    for (const r of results) expect([...r.applied, ...r.alreadyApplied].sort()).toEqual([...expected].sort());
    expect(await count('SELECT count(*) AS n FROM _switchyard_migrations')).toBe(expected.length);
    expect(
      await count(
        "SELECT count(*) AS n FROM information_schema.tables WHERE table_name IN ('owner','api_token')",
      ),
    ).toBe(2);
  });

  it('is a no-op the second time', async () => {
    await migrate(db.url);
    const again = await migrate(db.url);
    expect(again.applied).toEqual([]);
    expect(again.alreadyApplied.length).toBeGreaterThan(0);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-mig-'));
    cpSync(findMigrationsDir(), dir, { recursive: true });
    await migrate(db.url, { dir });
    const first = readMigrations(dir)[0];
    if (!first) throw new Error('no migrations found');
    writeFileSync(join(dir, first.name, 'migration.sql'), first.sql + '\n-- edited\n');
    await expect(migrate(db.url, { dir })).rejects.toThrow(/was edited after it was applied/);
  });

  it('rolls back a failing migration completely and records nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sy-mig-'));
    mkdirSync(join(dir, '001_ok'));
    writeFileSync(join(dir, '001_ok', 'migration.sql'), 'CREATE TABLE t_ok (id int);');
    mkdirSync(join(dir, '002_bad'));
    writeFileSync(
      join(dir, '002_bad', 'migration.sql'),
      'CREATE TABLE t_half (id int); SELECT * FROM does_not_exist;',
    );
    await expect(migrate(db.url, { dir })).rejects.toThrow(
      /migration 002_bad failed: relation "does_not_exist" does not exist/,
    );
    expect(
      await count("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 't_half'"),
    ).toBe(0);
    expect(await count("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 't_ok'")).toBe(
      1,
    );
    expect(await count("SELECT count(*) AS n FROM _switchyard_migrations WHERE name = '002_bad'")).toBe(0);
  });
});
