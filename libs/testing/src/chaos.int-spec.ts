import { createPgPool } from '@switchyard/server-db';
import { connect } from 'node:net';
import { OwnPostgres, OwnServer } from './chaos';

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });

/** The fault suites' own servers: they really go down and come back on the same port. */
describe('own servers for fault tests', () => {
  it.each([
    ['nats-server', () => OwnServer.nats()],
    ['redis-server', () => OwnServer.redis()],
  ])('%s stops, refuses connections, and starts again on its port', async (_name, make) => {
    const server = await make();
    try {
      expect(server.port).not.toBe(4222);
      expect(server.port).not.toBe(6379);
      await server.stop();
      expect(await refused(server.port)).toBe(true);
      await server.start();
      expect(await refused(server.port)).toBe(false);
    } finally {
      await server.stop();
    }
  });

  it('a Postgres instance of its own restarts and keeps what was committed', async () => {
    const pg = await OwnPostgres.start();
    if (!pg) throw new Error('PostgreSQL server binaries (initdb, pg_ctl) are not installed');
    try {
      expect(pg.port).not.toBe(5432);
      const c = createPgPool({ url: pg.url, poolSize: 1, applicationName: 'own-pg-test' });
      await c.query('CREATE TABLE kept (v int); INSERT INTO kept VALUES (7)');
      await c.end();
      await pg.restart();
      const again = createPgPool({ url: pg.url, poolSize: 1, applicationName: 'own-pg-test' });
      expect((await again.query('SELECT v FROM kept')).rows).toEqual([{ v: 7 }]);
      await again.end();
    } finally {
      await pg.destroy();
    }
  });
});
