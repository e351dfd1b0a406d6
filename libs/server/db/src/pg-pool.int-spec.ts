import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { APP_CONFIG } from '@switchyard/server-config';
import { Client, type Pool } from 'pg';
import { pgPoolProviders } from './pg-pool-providers';
import { createPgPool, POOL_IDLE_MS } from './prisma';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database';

const SERVER = 'postgresql://postgres@127.0.0.1:5432/postgres';

describe('createPgPool (real Postgres)', () => {
  let db: ScratchDatabase;

  beforeAll(async () => {
    db = await createScratchDatabase(SERVER, { label: 'pgpool', migrate: false });
  });

  afterAll(async () => {
    await db.drop();
  });

  it('survives the server dropping its idle connections, reports it, and serves the next query', async () => {
    const dropped: string[] = [];
    const pool = createPgPool({
      url: db.url,
      poolSize: 3,
      applicationName: 'pgpool-test',
      onIdleError: (err) => dropped.push((err as Error & { code?: string }).code ?? err.message),
    });
    try {
      // Three connections, all idle in the pool afterwards.
      await Promise.all([1, 2, 3].map(() => pool.query('SELECT pg_sleep(0.05)')));
      expect(pool.idleCount).toBe(3);

      const admin = new Client({ connectionString: db.url });
      await admin.connect();
      try {
        const killed = await admin.query<{ ok: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
            WHERE application_name = 'pgpool-test' AND pid <> pg_backend_pid()`,
        );
        expect(killed.rows).toHaveLength(3);
      } finally {
        await admin.end();
      }
      // Each terminated idle client is reported (57P01: admin shutdown), none crashes the process.
      // (libs/testing imports this lib, so no waitFor here; the bound only guards a hang.)
      for (const deadline = Date.now() + 60_000; dropped.length < 3 && Date.now() < deadline;)
        await new Promise((r) => setTimeout(r, 10));
      expect(dropped).toEqual(['57P01', '57P01', '57P01']);
      const r = await pool.query<{ one: number }>('SELECT 1 AS one');
      expect(r.rows[0]?.one).toBe(1);
    } finally {
      await pool.end();
    }
  });

  it('keeps an idle connection for minutes, not the driver’s 10 s (a new one is a cold backend)', async () => {
    const pool = createPgPool({ url: db.url, poolSize: 2, applicationName: 'pgpool-idle' });
    try {
      await Promise.all([1, 2].map(() => pool.query('SELECT pg_sleep(0.02)')));
      expect(pool.idleCount).toBe(2);
      expect((pool as unknown as { options: { idleTimeoutMillis: number } }).options.idleTimeoutMillis).toBe(
        POOL_IDLE_MS,
      );
      expect(POOL_IDLE_MS).toBeGreaterThanOrEqual(60_000);
    } finally {
      await pool.end();
    }
  });

  it('as providers: a pool named after the service and its purpose, ended when the service stops', async () => {
    const POOL = Symbol('POOL');
    const config = { service: 'probe', database: { url: db.url, poolSize: 2 } };
    @Module({ providers: [{ provide: APP_CONFIG, useValue: config }, ...pgPoolProviders(POOL, 'things')] })
    class ProbeModule {}
    const app = await NestFactory.createApplicationContext(ProbeModule, { logger: false });
    const pool = app.get<Pool>(POOL);
    const [row] = (
      await pool.query<{ name: string }>('SELECT current_setting($1) AS name', ['application_name'])
    ).rows;
    expect(row?.name).toBe('probe-things');
    expect(pool.ended).toBe(false);
    await app.close();
    expect(pool.ended).toBe(true);
  });
});
