import { AppError } from '@switchyard/contracts';
import { lexSql, SqlGuard } from './sql-guard';

/** The guard alone (no database): what passes, what is refused and why. The int-spec runs them. */
describe('SqlGuard', () => {
  const guard = new SqlGuard(['public.orders', 'public.customers', 'sales.Regions']);

  const refusal = (sql: string): AppError => {
    try {
      guard.check(sql);
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      return err as AppError;
    }
    throw new Error(`not refused: ${sql}`);
  };

  it.each([
    ['a plain select', 'SELECT * FROM orders', ['public.orders']],
    ['a qualified, quoted table', 'SELECT id FROM "public"."orders"', ['public.orders']],
    ['unquoted upper case (folded by Postgres)', 'SELECT * FROM ORDERS', ['public.orders']],
    ['a quoted mixed-case allowlisted table', 'SELECT * FROM sales."Regions"', ['sales.Regions']],
    [
      'a join with aggregates',
      'SELECT c.name, count(*), sum(o.total) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.name HAVING count(*) > 1 ORDER BY 2 DESC',
      ['public.customers', 'public.orders'],
    ],
    [
      'a CTE and subqueries',
      'WITH big AS (SELECT * FROM orders WHERE total > 10) SELECT b.id, (SELECT max(id) FROM customers) FROM big b WHERE b.customer_id IN (SELECT id FROM customers)',
      ['public.customers', 'public.orders'],
    ],
    [
      'a CTE named like a forbidden table (its body is checked)',
      'WITH secrets AS (SELECT id FROM orders) SELECT * FROM secrets',
      ['public.orders'],
    ],
    [
      'a recursive CTE',
      'WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 5) SELECT n FROM t',
      [],
    ],
    [
      'set operations',
      'SELECT id FROM orders UNION SELECT id FROM customers EXCEPT SELECT 3 INTERSECT SELECT 4',
      ['public.customers', 'public.orders'],
    ],
    [
      'a CTE used across UNION branches',
      'WITH x AS (SELECT id FROM orders) SELECT id FROM x UNION SELECT id FROM x',
      ['public.orders'],
    ],
    [
      'window functions, casts, CASE, dates',
      "SELECT id, row_number() OVER (PARTITION BY customer_id ORDER BY placed_at), total::numeric(10,2), CAST(id AS text), CASE WHEN total > 5 THEN 'big' ELSE 'small' END, date_trunc('day', placed_at), extract(year FROM placed_at), now() - interval '1 day', coalesce(note, '-') FROM orders",
      ['public.orders'],
    ],
    [
      'EXISTS, ANY, ARRAY and LIKE',
      "SELECT * FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id) AND c.id = ANY(ARRAY[1,2]) AND c.name LIKE 'A%'",
      ['public.customers', 'public.orders'],
    ],
    [
      'a LATERAL subquery',
      'SELECT * FROM customers c, LATERAL (SELECT * FROM orders o WHERE o.customer_id = c.id) x',
      ['public.customers', 'public.orders'],
    ],
    ['VALUES in FROM', 'SELECT * FROM (VALUES (1, 2)) AS v(a, b)', []],
    [
      'string_agg and json_agg',
      "SELECT string_agg(name, ', '), json_agg(c) FROM customers c",
      ['public.customers'],
    ],
    ['a doubled quote in a string', "SELECT * FROM customers WHERE name = 'O''Brien'", ['public.customers']],
    ['a comment and a trailing semicolon', 'SELECT 1 -- the answer\n; -- done', []],
    ['a nested block comment', 'SELECT /* a /* nested */ comment */ id FROM orders;', ['public.orders']],
    ['LIMIT and OFFSET', 'SELECT * FROM orders ORDER BY id LIMIT 5 OFFSET 2', ['public.orders']],
    ['a quoted column named like a keyword', 'SELECT "update" FROM orders', ['public.orders']],
  ])('accepts %s', (_, sql, tables) => {
    expect(guard.check(sql as string).tables).toEqual(tables);
  });

  it('returns the text to run: comments blanked, trailing semicolons gone', () => {
    expect(guard.check('SELECT id /* x */ FROM orders -- y\n;;').sql).toBe('SELECT id   FROM orders');
    expect(lexSql("SELECT '--not a comment' AS a").text).toBe("SELECT '--not a comment' AS a");
  });

  it.each([
    ['a second statement', 'SELECT 1; DROP TABLE orders', /one statement/],
    [
      'a statement hidden after a line comment',
      'SELECT * FROM orders --\n; DROP TABLE orders',
      /one statement/,
    ],
    ['DROP', 'DROP TABLE orders', /"DROP" is not allowed/],
    ['INSERT', 'INSERT INTO orders (id) VALUES (1)', /"INSERT" is not allowed/],
    [
      'a writable CTE',
      'WITH d AS (DELETE FROM orders RETURNING *) SELECT * FROM d',
      /"DELETE" is not allowed/,
    ],
    ['SELECT INTO', 'SELECT * INTO newtab FROM orders', /"INTO" is not allowed/],
    ['FOR UPDATE', 'SELECT * FROM orders FOR UPDATE', /locking clauses/],
    ['FOR NO KEY UPDATE', 'SELECT * FROM orders FOR NO KEY UPDATE', /locking clauses/],
    ['FOR SHARE', 'SELECT * FROM orders FOR SHARE', /locking clauses/],
    ['FOR KEY SHARE', 'SELECT * FROM orders FOR KEY SHARE', /locking clauses/],
    ['COPY', "COPY orders TO '/tmp/x'", /"COPY" is not allowed/],
    ['a function outside the allowlist', 'SELECT pg_sleep(10)', /pg_sleep\(\) is not on the allowlist/],
    ['a set-returning function in FROM', 'SELECT * FROM generate_series(1, 3)', /generate_series\(\)/],
    ['a schema-qualified function', 'SELECT pg_catalog.lower(name) FROM customers', /schema-qualified/],
    [
      'a quoted upper-case function',
      'SELECT "LOWER"(name) FROM customers',
      /LOWER\(\) is not on the allowlist/,
    ],
    ['a quoted pseudo-function', 'SELECT "exists"(1)', /exists\(\) is not on the allowlist/],
    ['a cast to regclass', "SELECT 'secrets'::regclass", /casts to regclass/],
    ['a dollar-quoted string', 'SELECT $$x$$', /dollar quoting/],
    ['a parameter', 'SELECT * FROM orders WHERE id = $1', /dollar quoting/],
    ['a named parameter', 'SELECT * FROM orders WHERE id = :id', /unsupported SQL construct \(param\)/],
    ['an escape string', "SELECT E'\\x41'", /escape strings/],
    [
      'a backslash that ends a string for Postgres but not for the parser',
      "SELECT 'x\\', (SELECT secret FROM secrets) --'",
      /backslashes/,
    ],
    ['a Unicode-escaped identifier', 'SELECT * FROM U&"\\0073ecrets"', /Unicode-escaped/],
    ['a doubled quote in an identifier', 'SELECT * FROM "sec""rets"', /double quote/],
    ['a non-ASCII character outside literals', 'SELECT 1\u00a0FROM orders', /U\+00A0/],
    ['an unterminated comment', 'SELECT 1 /* /* */', /unterminated/],
    ['backtick quoting', 'SELECT * FROM `orders`', /backticks/],
    ['a parenthesis that would close the wrapper', 'SELECT 1) AS q, (SELECT * FROM secrets', /unbalanced/],
    [
      '# (an operator in Postgres, not a comment)',
      'SELECT id FROM orders WHERE 1 = 1 # (SELECT count(*) FROM secrets)',
      /could not be parsed/,
    ],
    ['a table not on the allowlist', 'SELECT * FROM secrets', /public\.secrets is not on the allowlist/],
    ['a table in another schema', 'SELECT * FROM other.orders', /other\.orders/],
    ['a quoted upper-case name', 'SELECT * FROM "ORDERS"', /public\.ORDERS is not on the allowlist/],
    ['a name both quoted and not', 'SELECT * FROM sales."Regions" r, sales.Regions', /cannot tell/],
    ['an unqualified catalog name', 'SELECT * FROM pg_shadow', /system catalog/],
    ['a three-part name', 'SELECT * FROM db.public.orders', /three-part/],
    [
      'a table in a subquery in WHERE',
      'SELECT * FROM orders WHERE id IN (SELECT id FROM secrets)',
      /secrets/,
    ],
    ['a table in the SELECT list', 'SELECT (SELECT max(id) FROM secrets) FROM orders', /secrets/],
    ['a table in ORDER BY', 'SELECT id FROM orders ORDER BY (SELECT 1 FROM secrets LIMIT 1)', /secrets/],
    ['a UNION branch', 'SELECT id FROM orders UNION SELECT id FROM secrets', /secrets/],
    ['a CTE body', 'WITH s AS (SELECT * FROM secrets) SELECT * FROM s', /secrets/],
    [
      'a CTE used before it is defined (non-recursive)',
      'WITH a AS (SELECT * FROM secrets), secrets AS (SELECT 1) SELECT * FROM a',
      /secrets/,
    ],
    [
      "a parenthesized branch's CTE reused in another branch",
      '(WITH secrets AS (SELECT 1 AS id) SELECT id FROM secrets) UNION SELECT id FROM secrets',
      /public\.secrets is not on the allowlist/,
    ],
    [
      "a later branch's CTE reused in the branch after it",
      'SELECT 1 UNION (WITH secrets AS (SELECT 1) SELECT * FROM secrets) UNION SELECT id FROM secrets',
      /public\.secrets is not on the allowlist/,
    ],
    [
      "a subquery's CTE reused outside it",
      'SELECT * FROM (WITH secrets AS (SELECT 1) SELECT * FROM secrets) q, secrets',
      /public\.secrets is not on the allowlist/,
    ],
    ['a JOIN', 'SELECT * FROM orders o JOIN secrets s ON true', /secrets/],
    ['a LATERAL subquery', 'SELECT * FROM orders, LATERAL (SELECT * FROM secrets) s', /secrets/],
    ['ONLY (misread by the parser, still refused)', 'SELECT * FROM ONLY secrets', /not on the allowlist/],
    ['information_schema', 'SELECT * FROM information_schema.tables', /information_schema\.tables/],
    ['an empty string', '', /empty/],
    ['only a comment', '-- nothing', /only comments/],
    ['garbage', 'garbage in, garbage out', /could not be parsed/],
    ['TABLE', 'TABLE secrets', /could not be parsed/],
  ])('refuses %s', (_, sql, message) => {
    const err = refusal(sql as string);
    expect(['forbidden', 'validation_failed']).toContain(err.code);
    expect(err.message).toMatch(/^query refused: /);
    expect(err.message).toMatch(message as RegExp);
  });

  it('allows nothing but table-free queries when the allowlist is empty', () => {
    const empty = new SqlGuard([]);
    expect(empty.check('SELECT 1 + 1').tables).toEqual([]);
    expect(() => empty.check('SELECT * FROM orders')).toThrow(/allowed: none/);
  });
});
