import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { AppError, type ToolResult } from '@switchyard/contracts';
import { resultValue } from '@switchyard/plan';
import {
  createPrisma,
  createScratchDatabase,
  type PrismaClient,
  type ScratchDatabase,
} from '@switchyard/server-db';
import { AgentSqlConnection } from '@switchyard/server-db-tools';
import { TEST_POSTGRES_URL, testConfig, waitFor } from '@switchyard/testing';
import { BUILTIN_TOOL, type BuiltinToolSpec } from '../builtin-tool';
import {
  ExecuteSqlQueryTool,
  NOT_CONFIGURED,
  QueryAllTablesTool,
  QueryTableSchemaTool,
  type SqlToolOptions,
} from './sql.tools';

/**
 * The SQL tools against a real Postgres: a scratch database with allowlisted tables (orders,
 * customers) and others that must stay out of reach (secrets, orders_archive, other.orders), read
 * through a role that may only SELECT the allowlisted two.
 */
describe('SQL tools (real Postgres)', () => {
  const role = `sy_agent_ro_${randomBytes(4).toString('hex')}`;
  const copyTarget = `/tmp/sy-sql-copy-${randomBytes(4).toString('hex')}`;
  let db: ScratchDatabase;
  let admin: PrismaClient;
  let readOnlyUrl: string;
  const made: { onModuleDestroy(): Promise<void> }[] = [];

  const ctx = (signal = new AbortController().signal) => ({ signal, caller: { correlationId: 'test' } });
  const config = (env: Record<string, string>) =>
    testConfig('tool-registry', { AGENT_ALLOWED_TABLES: 'orders,customers', ...env });
  function tools(env: Record<string, string> = {}, options?: SqlToolOptions) {
    const c = config({ AGENT_DATABASE_URL: readOnlyUrl, ...env });
    const t = {
      all: new QueryAllTablesTool(c, options),
      schema: new QueryTableSchemaTool(c, options),
      exec: new ExecuteSqlQueryTool(c, options),
    };
    made.push(t.all, t.schema, t.exec);
    return t;
  }
  const textOf = (r: ToolResult) => r.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  const jsonOf = <T>(r: ToolResult): T => {
    const block = r.content.find((b) => b.type === 'json');
    if (!block || block.type !== 'json') throw new Error('no json block');
    return block.json as T;
  };
  const adminCount = async (sql: string): Promise<number> => {
    const rows = await admin.$queryRawUnsafe<{ n: bigint | number }[]>(sql);
    return Number(rows[0]?.n);
  };

  beforeAll(async () => {
    db = await createScratchDatabase(TEST_POSTGRES_URL, { label: 'sql', migrate: false });
    admin = createPrisma({ url: db.url, poolSize: 1, applicationName: 'sql-tools-test' });
    for (const statement of [
      `CREATE TABLE customers (
         id int PRIMARY KEY,
         name text NOT NULL,
         email text,
         created_at timestamptz NOT NULL DEFAULT now())`,
      `COMMENT ON TABLE customers IS 'People who place orders'`,
      `CREATE TABLE orders (
         id serial PRIMARY KEY,
         customer_id int NOT NULL REFERENCES customers(id),
         total numeric(10,2) NOT NULL CHECK (total >= 0),
         status text NOT NULL DEFAULT 'new',
         placed_at timestamptz NOT NULL DEFAULT now(),
         note text)`,
      `COMMENT ON COLUMN orders.note IS 'Free text from the customer'`,
      `CREATE INDEX orders_placed_at_idx ON orders (placed_at)`,
      `INSERT INTO customers (id, name, email) VALUES (1, 'Ada', 'ada@example.com'), (2, 'Brian', NULL), (3, 'Chen', 'chen@example.com')`,
      `INSERT INTO orders (customer_id, total, status, placed_at)
         SELECT 1 + (g % 3), g, CASE WHEN g % 2 = 0 THEN 'paid' ELSE 'new' END, '2024-01-01T00:00:00Z'::timestamptz + g * interval '1 hour'
           FROM generate_series(1, 1200) AS g`,
      `CREATE TABLE secrets (id int PRIMARY KEY, secret text NOT NULL)`,
      `INSERT INTO secrets VALUES (1, 'the launch codes')`,
      `CREATE TABLE orders_archive (id int PRIMARY KEY, total numeric)`,
      `INSERT INTO orders_archive VALUES (1, 99)`,
      `CREATE TABLE "ORDERS" (id int PRIMARY KEY, secret text)`,
      `INSERT INTO "ORDERS" VALUES (1, 'shadow')`,
      `CREATE SCHEMA other`,
      `CREATE TABLE other.orders (id int PRIMARY KEY, secret text)`,
      `INSERT INTO other.orders VALUES (1, 'elsewhere')`,
      `ANALYZE`,
      // Defense in depth: the agent's role can read the allowlisted tables and nothing else.
      `CREATE ROLE ${role} LOGIN`,
      `GRANT SELECT ON public.orders, public.customers TO ${role}`,
    ]) {
      await admin.$executeRawUnsafe(statement);
    }
    const url = new URL(db.url);
    url.username = role; // trust auth: no password
    readOnlyUrl = url.toString();
  });

  afterAll(async () => {
    await Promise.all(made.map((t) => t.onModuleDestroy()));
    await admin?.$disconnect();
    await db?.drop();
    const server = createPrisma({ url: TEST_POSTGRES_URL, poolSize: 1, applicationName: 'sql-tools-test' });
    try {
      await server.$executeRawUnsafe(`DROP ROLE IF EXISTS ${role}`);
    } finally {
      await server.$disconnect();
    }
  });

  describe('AgentSqlConnection', () => {
    // The superuser on purpose: the transaction itself must stop writes.
    const connect = () =>
      new AgentSqlConnection({ url: db.url, maxConnections: 1, statementTimeoutMs: 2_000 });

    it('runs every statement in a read-only transaction', async () => {
      const c = connect();
      try {
        await expect(c.query('CREATE TABLE sneaky (id int)')).rejects.toThrow(/read-only transaction/);
        await expect(c.query('DELETE FROM secrets')).rejects.toThrow(/read-only transaction/);
        expect(await adminCount("SELECT count(*) AS n FROM pg_class WHERE relname = 'sneaky'")).toBe(0);
        expect(await adminCount('SELECT count(*) AS n FROM secrets')).toBe(1);
      } finally {
        await c.close();
      }
    });

    it('runs one statement only, even without parameters', async () => {
      const c = connect();
      try {
        await expect(c.query('SELECT 1; SELECT 2')).rejects.toThrow(/multiple commands/);
      } finally {
        await c.close();
      }
    });

    it('rolls back, so nothing a query sets outlives it', async () => {
      const c = connect();
      try {
        await c.query(
          "SELECT set_config('search_path', 'other', false), set_config('statement_timeout', '0', false)",
        );
        const r = await c.query<{ path: string; timeout: string; ro: string }>(
          "SELECT current_setting('search_path') AS path, current_setting('statement_timeout') AS timeout, current_setting('transaction_read_only') AS ro",
        );
        expect(r.rows).toEqual([{ path: 'public', timeout: '2s', ro: 'on' }]);
      } finally {
        await c.close();
      }
    });
  });

  describe('query_all_tables', () => {
    it('lists exactly the allowlisted tables, with comment, approximate rows and column count', async () => {
      const r = await tools().all.run({}, ctx());
      expect(r.isError).toBe(false);
      const { tables, missing } = jsonOf<{
        tables: {
          schema: string;
          table: string;
          comment: string | null;
          approxRows: number;
          columns: number;
        }[];
        missing: string[];
      }>(r);
      expect(tables.map((t) => `${t.schema}.${t.table}`)).toEqual(['public.customers', 'public.orders']);
      expect(tables[0]).toMatchObject({ comment: 'People who place orders', approxRows: 3, columns: 4 });
      expect(tables[1]).toMatchObject({ comment: null, approxRows: 1200, columns: 6 });
      expect(missing).toEqual([]);
      const out = textOf(r);
      expect(out).toContain('- public.customers: ~3 rows, 4 columns — People who place orders');
      expect(out).toContain('- public.orders: ~1200 rows, 6 columns');
      expect(out).not.toMatch(/secrets|archive|other\./);
    });

    it('names allowlisted tables that do not exist', async () => {
      const r = await tools({ AGENT_ALLOWED_TABLES: 'orders,ghost' }).all.run({}, ctx());
      expect(jsonOf<{ missing: string[] }>(r).missing).toEqual(['public.ghost']);
      expect(textOf(r)).toContain('Allowlisted but not found: public.ghost.');
    });
  });

  describe('output schemas', () => {
    const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
    const fits = (tool: object, r: ToolResult) => {
      const spec = Reflect.getMetadata(BUILTIN_TOOL, tool.constructor) as BuiltinToolSpec;
      const validate = ajv.compile(spec.outputSchema ?? { not: {} });
      return { valid: validate(resultValue(r)), errors: validate.errors ?? null };
    };

    it('a query stands for its rows in references, as execute_sql_query declares', async () => {
      const t = tools();
      const r = await t.exec.run({ sql: 'SELECT id, total FROM orders ORDER BY id LIMIT 2' }, ctx());
      expect(resultValue(r)).toEqual({
        columns: ['id', 'total'],
        rows: [
          [1, expect.any(String)],
          [2, expect.any(String)],
        ],
        rowCount: 2,
        truncated: false,
      });
      expect(fits(t.exec, r)).toEqual({ valid: true, errors: null });
      // The declared schema is not a formality: the text rendering alone does not fit it.
      expect(fits(t.exec, { ...r, value: textOf(r) })).toMatchObject({ valid: false });
    });

    it('the table list stands for its tables, as query_all_tables declares, allowlist or not', async () => {
      const t = tools({ AGENT_ALLOWED_TABLES: 'orders,ghost' });
      const r = await t.all.run({}, ctx());
      expect(resultValue(r)).toMatchObject({ missing: ['public.ghost'], tables: [{ table: 'orders' }] });
      expect(fits(t.all, r)).toEqual({ valid: true, errors: null });
      const none = tools({ AGENT_ALLOWED_TABLES: '' });
      const empty = await none.all.run({}, ctx());
      expect(resultValue(empty)).toEqual({ tables: [], missing: [] });
      expect(fits(none.all, empty)).toEqual({ valid: true, errors: null });
    });
  });

  describe('query_table_schema', () => {
    it('rebuilds the DDL: columns, defaults, primary key, foreign key, check, index, comments', async () => {
      const r = await tools().schema.run({ tableName: 'orders' }, ctx());
      expect(r.isError).toBe(false);
      const ddl = textOf(r);
      expect(ddl).toContain('CREATE TABLE public.orders (\n');
      expect(ddl).toContain("  id integer DEFAULT nextval('orders_id_seq'::regclass) NOT NULL,\n");
      expect(ddl).toContain('  total numeric(10,2) NOT NULL,\n');
      expect(ddl).toContain("  status text DEFAULT 'new'::text NOT NULL,\n");
      expect(ddl).toContain('  note text,\n');
      expect(ddl).toContain('  CONSTRAINT orders_pkey PRIMARY KEY (id)');
      expect(ddl).toContain(
        '  CONSTRAINT orders_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customers(id)',
      );
      expect(ddl).toMatch(/ {2}CONSTRAINT orders_total_check CHECK \(total >= 0(::numeric)?\)/);
      expect(ddl).toContain('CREATE INDEX orders_placed_at_idx ON public.orders USING btree (placed_at);');
      expect(ddl).toContain("COMMENT ON COLUMN public.orders.note IS 'Free text from the customer';");
      // The primary key's own index is part of the constraint, not listed twice.
      expect(ddl).not.toContain('CREATE UNIQUE INDEX orders_pkey');
    });

    it('accepts a schema-qualified name and includes the table comment', async () => {
      const ddl = textOf(await tools().schema.run({ tableName: 'public.customers' }, ctx()));
      expect(ddl).toContain('CREATE TABLE public.customers (');
      expect(ddl).toContain('  created_at timestamp with time zone DEFAULT now() NOT NULL');
      expect(ddl).toContain("COMMENT ON TABLE public.customers IS 'People who place orders';");
    });

    it.each([
      ['a table off the allowlist', 'secrets', 'forbidden', /public\.secrets is not on the allowlist/],
      ['the same, qualified', 'public.secrets', 'forbidden', /public\.secrets is not on the allowlist/],
      ['an allowed name plus a suffix', 'orders_archive', 'forbidden', /orders_archive/],
      ['another schema', 'other.orders', 'forbidden', /other\.orders is not on the allowlist/],
      ['a differently cased name', 'ORDERS', 'forbidden', /public\.ORDERS is not on the allowlist/],
      ['a system catalog', 'pg_catalog.pg_authid', 'forbidden', /pg_catalog\.pg_authid/],
      ['SQL in the name', 'orders; drop table x', 'validation_failed', /tableName must be/],
      ['a quoted name', '"orders"', 'validation_failed', /tableName must be/],
    ])('refuses %s', async (_, tableName, code, message) => {
      await expect(tools().schema.run({ tableName }, ctx())).rejects.toMatchObject({
        code,
        message: expect.stringMatching(message),
      });
    });

    it('reports an allowlisted table that does not exist', async () => {
      await expect(
        tools({ AGENT_ALLOWED_TABLES: 'orders,ghost' }).schema.run({ tableName: 'ghost' }, ctx()),
      ).rejects.toMatchObject({ code: 'not_found', message: expect.stringContaining('does not exist') });
    });
  });

  describe('execute_sql_query', () => {
    it('runs a query with a CTE, a JOIN, aggregates and a subquery', async () => {
      const r = await tools().exec.run(
        {
          sql: `WITH per_customer AS (
                  SELECT customer_id, count(*) AS n, sum(total) AS spent FROM orders GROUP BY customer_id
                )
                SELECT c.name, p.n, p.spent
                  FROM per_customer p
                  JOIN customers c ON c.id = p.customer_id
                 WHERE p.customer_id IN (SELECT id FROM customers WHERE email IS NOT NULL)
                 ORDER BY c.name;`,
        },
        ctx(),
      );
      expect(r.isError).toBe(false);
      expect(r.truncated).toBe(false);
      // customer_id = 1 + g % 3 over g = 1..1200: 400 orders each; Brian (2) has no email.
      expect(jsonOf(r)).toEqual({
        columns: ['name', 'n', 'spent'],
        rows: [
          ['Ada', '400', '240600.00'],
          ['Chen', '400', '240200.00'],
        ],
        rowCount: 2,
        truncated: false,
      });
      const out = textOf(r);
      expect(out).toContain('2 rows, 3 columns.');
      expect(out).toMatch(
        /name +\| n +\| spent\n-+-\+-+-\+-+\nAda +\| 400 \| 240600\.00\nChen +\| 400 \| 240200\.00/,
      );
      expect(out).not.toContain('Showing');
    });

    it('keeps 1,000 rows of more and says so', async () => {
      const r = await tools().exec.run({ sql: 'SELECT id FROM orders ORDER BY id' }, ctx());
      const json = jsonOf<{ rows: number[][]; rowCount: number; truncated: boolean }>(r);
      expect(json.rowCount).toBe(1000);
      expect(json.truncated).toBe(true);
      expect(json.rows).toHaveLength(1000);
      expect(json.rows[0]).toEqual([1]);
      expect(json.rows[999]).toEqual([1000]);
      expect(r.truncated).toBe(true);
      const out = textOf(r);
      expect(out).toContain(
        '1000 rows kept: more than 1000 rows matched and only the first 1000 were fetched, 1 column.',
      );
      expect(out).toContain('Showing 10 of 1000 rows and 1 of 1 columns.');
    });

    it("keeps the query's own ORDER BY and LIMIT", async () => {
      const r = await tools().exec.run({ sql: 'SELECT id FROM orders ORDER BY id DESC LIMIT 3' }, ctx());
      expect(jsonOf<{ rows: number[][] }>(r).rows).toEqual([[1200], [1199], [1198]]);
    });

    it('shows 10 rows and 8 columns as text and names the hidden columns', async () => {
      const r = await tools().exec.run(
        {
          sql: `SELECT id, customer_id, total, status, placed_at, note, id AS c7, id AS c8, id AS c9, id AS c10
                  FROM orders ORDER BY id LIMIT 25`,
        },
        ctx(),
      );
      const out = textOf(r);
      expect(out).toContain('25 rows, 10 columns.');
      expect(out).toContain('Showing 10 of 25 rows and 8 of 10 columns; hidden columns: c9, c10.');
      const lines = out.split('\n');
      const header = lines[1] as string;
      expect(header.split(' | ').map((h) => h.trim())).toEqual([
        'id',
        'customer_id',
        'total',
        'status',
        'placed_at',
        'note',
        'c7',
        'c8',
      ]);
      expect(lines[3]).toMatch(
        /^1 +\| 2 +\| 1\.00 +\| new +\| 2024-01-01T01:00:00\.000Z \| NULL \| 1 +\| 1$/,
      );
      expect(lines.filter((l) => /^\d+ +\|/.test(l))).toHaveLength(10);
      // The json block has everything that was kept.
      const json = jsonOf<{ columns: string[]; rows: unknown[][] }>(r);
      expect(json.columns).toHaveLength(10);
      expect(json.rows).toHaveLength(25);
    });

    it('keeps columns of the same name apart', async () => {
      const r = await tools().exec.run(
        {
          sql: 'SELECT o.id, c.id FROM orders o JOIN customers c ON c.id = o.customer_id ORDER BY o.id LIMIT 1',
        },
        ctx(),
      );
      expect(jsonOf(r)).toMatchObject({ columns: ['id', 'id'], rows: [[1, 2]] });
    });

    it("returns Postgres's error as an error result", async () => {
      const r = await tools().exec.run({ sql: 'SELECT nosuchcolumn FROM orders' }, ctx());
      expect(r.isError).toBe(true);
      expect(textOf(r)).toBe('query failed: column "nosuchcolumn" does not exist (SQLSTATE 42703)');
    });

    it('is backed by the role: an allowlisted table the role cannot read is still refused by Postgres', async () => {
      const r = await tools({ AGENT_ALLOWED_TABLES: 'orders,customers,secrets' }).exec.run(
        { sql: 'SELECT secret FROM secrets' },
        ctx(),
      );
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('permission denied for table secrets');
    });

    it('reports a statement timeout as a clear error result and stays usable', async () => {
      const { exec } = tools({}, { statementTimeoutMs: 500 });
      // 1.7 billion rows: an answer that names the statement timeout is the timeout's, not the query's end.
      const r = await exec.run({ sql: 'SELECT count(*) FROM orders a, orders b, orders c' }, ctx());
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/^query cancelled: it ran longer than the statement timeout \(500 ms\)/);
      const after = await exec.run({ sql: 'SELECT count(*) AS n FROM orders' }, ctx());
      expect(jsonOf(after)).toMatchObject({ rows: [['1200']] });
    });

    it('cancels the running statement when the call is aborted', async () => {
      const { exec } = tools();
      const controller = new AbortController();
      const running = exec.run(
        { sql: 'SELECT count(*) FROM orders a, orders b, orders c' },
        ctx(controller.signal),
      );
      await waitFor(
        async () =>
          (await adminCount(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE usename = '${role}' AND state = 'active'`,
          )) > 0,
        60_000,
        20,
      );
      controller.abort('cancelled');
      await expect(running).rejects.toMatchObject({
        code: 'timeout',
        message: expect.stringContaining('cancelled'),
      });
      await waitFor(
        async () =>
          (await adminCount(
            `SELECT count(*) AS n FROM pg_stat_activity WHERE usename = '${role}' AND state = 'active'`,
          )) === 0,
        60_000,
        20,
      );
    });

    it('says when the agent database cannot be reached', async () => {
      const url = new URL(db.url);
      url.pathname = '/switchyard_sql_no_such_database';
      await expect(
        tools({ AGENT_DATABASE_URL: url.toString() }).exec.run({ sql: 'SELECT 1' }, ctx()),
      ).rejects.toMatchObject({ code: 'unavailable' });
    });
  });

  /**
   * Every entry must be refused by the guard before any SQL reaches Postgres. The tool here uses the
   * superuser connection on purpose: only the guard stands between these and the database.
   */
  describe('attack corpus', () => {
    let spy: jest.SpiedFunction<AgentSqlConnection['query']>;
    let exec: ExecuteSqlQueryTool;

    beforeAll(() => {
      // Calls through: it only records whether any SQL was sent.
      spy = jest.spyOn(AgentSqlConnection.prototype, 'query');
      exec = tools({ AGENT_DATABASE_URL: db.url }).exec;
    });
    beforeEach(() => spy.mockClear());
    afterAll(() => spy.mockRestore());

    it.each([
      ['a second statement', 'SELECT 1; DROP TABLE orders'],
      ['DROP', 'DROP TABLE orders'],
      ['INSERT', 'INSERT INTO orders (customer_id, total) VALUES (1, 1)'],
      ['UPDATE', 'UPDATE orders SET total = 0'],
      ['DELETE', 'DELETE FROM orders'],
      ['a writable CTE', 'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d'],
      ['SELECT INTO', 'SELECT * INTO newtab FROM orders'],
      ['FOR UPDATE', 'SELECT * FROM orders FOR UPDATE'],
      ['FOR SHARE', 'SELECT * FROM orders FOR SHARE'],
      ['COPY', `COPY orders TO '${copyTarget}'`],
      ['pg_sleep', 'SELECT pg_sleep(10)'],
      ['pg_read_file', "SELECT pg_read_file('/etc/passwd')"],
      ['dblink', "SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(x int)"],
      // The host's files and other databases, by every door Postgres has.
      ['COPY FROM a file', `COPY orders FROM '/etc/passwd'`],
      ['COPY FROM PROGRAM', `COPY orders FROM PROGRAM 'cat /etc/passwd'`],
      ['pg_read_binary_file', "SELECT pg_read_binary_file('/etc/passwd')"],
      ['pg_ls_dir', "SELECT pg_ls_dir('.')"],
      ['pg_stat_file', "SELECT pg_stat_file('postgresql.conf')"],
      ['lo_import', "SELECT lo_import('/etc/passwd')"],
      ['lo_get', 'SELECT lo_get(1)'],
      ['pg_largeobject', 'SELECT * FROM pg_largeobject'],
      ['current_setting', "SELECT current_setting('data_directory')"],
      ['query_to_xml running a string', "SELECT query_to_xml('SELECT * FROM secrets', true, true, '')"],
      ['a TABLE statement', 'TABLE secrets'],
      ['pg_stat_activity (other sessions)', 'SELECT query FROM pg_stat_activity'],
      ['postgres_fdw', 'SELECT * FROM postgres_fdw_get_connections()'],
      ['set_config', "SELECT set_config('statement_timeout', '0', false)"],
      ['pg_authid', 'SELECT * FROM pg_catalog.pg_authid'],
      ['pg_shadow', 'SELECT * FROM pg_shadow'],
      ['information_schema', 'SELECT * FROM information_schema.tables'],
      ['a table named like an allowed one plus a suffix', 'SELECT * FROM orders_archive'],
      ['the same name in another schema', 'SELECT * FROM other.orders'],
      ['a table off the allowlist', 'SELECT * FROM secrets'],
      ['it quoted', 'SELECT * FROM "secrets"'],
      ['a quoted upper-case name (another table)', 'SELECT * FROM "ORDERS"'],
      ['a Unicode-escaped identifier', 'SELECT * FROM U&"\\0073ecrets"'],
      ['a subquery in WHERE', 'SELECT * FROM orders WHERE customer_id IN (SELECT id FROM secrets)'],
      ['a subquery in the select list', 'SELECT (SELECT secret FROM secrets LIMIT 1) FROM orders'],
      ['a subquery in FROM', 'SELECT * FROM (SELECT * FROM secrets) s'],
      ['a JOIN', 'SELECT * FROM orders o JOIN secrets s ON s.id = o.id'],
      ['a UNION', 'SELECT id::text FROM orders UNION SELECT secret FROM secrets'],
      ['a CTE body', 'WITH s AS (SELECT * FROM secrets) SELECT * FROM s'],
      [
        "a parenthesized branch's CTE used by the next branch",
        '(WITH secrets AS (SELECT 1 AS id) SELECT id FROM secrets) UNION SELECT id FROM secrets',
      ],
      ['a comment hiding a newline', 'SELECT * FROM orders --\n; DROP TABLE orders'],
      ['a backslash string trick', "SELECT 'x\\', (SELECT secret FROM secrets) --'"],
      ['dollar quoting', 'SELECT $$ $$, (SELECT secret FROM secrets)'],
      ['a regclass cast', "SELECT 'secrets'::regclass::oid"],
      ['an empty string', ''],
      ['whitespace', '   \n'],
      ['garbage', 'this is not SQL ((('],
    ])('refuses %s before running anything', async (_, sql) => {
      let err: unknown;
      try {
        await exec.run({ sql }, ctx());
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(AppError);
      expect(['forbidden', 'validation_failed']).toContain((err as AppError).code);
      expect((err as AppError).message).toMatch(/^query refused: /);
      expect(spy).not.toHaveBeenCalled();
    });

    it('left everything as it was', async () => {
      expect(await adminCount('SELECT count(*) AS n FROM secrets')).toBe(1);
      expect(await adminCount('SELECT count(*) AS n FROM orders')).toBe(1200);
      expect(await adminCount('SELECT count(*) AS n FROM orders WHERE total = 0')).toBe(0);
      expect(await adminCount("SELECT count(*) AS n FROM pg_class WHERE relname = 'newtab'")).toBe(0);
      expect(existsSync(copyTarget)).toBe(false);
    });
  });

  describe('without AGENT_DATABASE_URL', () => {
    // DATABASE_URL points at the live scratch database: falling back to it would succeed.
    const unconfigured = () => {
      const c = testConfig('tool-registry', {
        DATABASE_URL: db.url,
        AGENT_ALLOWED_TABLES: 'orders,customers',
      });
      return {
        all: new QueryAllTablesTool(c),
        schema: new QueryTableSchemaTool(c),
        exec: new ExecuteSqlQueryTool(c),
      };
    };

    it('each tool refuses with the not-configured message', async () => {
      const t = unconfigured();
      const refusal = { code: 'forbidden', message: NOT_CONFIGURED };
      await expect(t.all.run({}, ctx())).rejects.toMatchObject(refusal);
      await expect(t.schema.run({ tableName: 'orders' }, ctx())).rejects.toMatchObject(refusal);
      await expect(t.exec.run({ sql: 'SELECT 1' }, ctx())).rejects.toMatchObject(refusal);
      // Even a query the guard would refuse gets the configuration message first.
      await expect(t.exec.run({ sql: 'SELECT * FROM secrets' }, ctx())).rejects.toMatchObject(refusal);
    });
  });

  it('closes its connections on module destroy', async () => {
    const t = tools();
    await t.exec.run({ sql: 'SELECT 1' }, ctx());
    await Promise.all(made.map((x) => x.onModuleDestroy()));
    await waitFor(
      async () =>
        (await adminCount(`SELECT count(*) AS n FROM pg_stat_activity WHERE usename = '${role}'`)) === 0,
      60_000,
      50,
    );
    // Lazily reopened on the next use.
    expect(jsonOf(await t.exec.run({ sql: 'SELECT 2 AS two' }, ctx()))).toMatchObject({ rows: [[2]] });
  });
});
