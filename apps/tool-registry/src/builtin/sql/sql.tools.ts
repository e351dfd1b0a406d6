import { Inject, Optional, type OnModuleDestroy } from '@nestjs/common';
import { z } from 'zod';
import { AppError, type ToolResult } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import {
  AgentSqlCancelledError,
  AgentSqlConnection,
  AgentSqlTimeoutError,
  type AgentSqlQuery,
  type AgentSqlResult,
} from '@switchyard/server-db-tools';
import { APP_CONFIG } from '@switchyard/server-runtime';
import {
  BuiltinTool,
  outputSchemaOf,
  text,
  textOutput,
  type BuiltinToolHandler,
  type ToolRunContext,
} from '../builtin-tool';
import { allowlistKeys, MAX_SQL_LENGTH, SqlGuard } from './sql-guard';

/** Optional provider: tests shorten the statement timeout with it. */
export const SQL_TOOL_OPTIONS = Symbol('SQL_TOOL_OPTIONS');
export interface SqlToolOptions {
  /** statement_timeout of every query; default 30 s. */
  readonly statementTimeoutMs?: number;
}

export const NOT_CONFIGURED =
  'SQL tools are not configured: set AGENT_DATABASE_URL to a read-only connection and AGENT_ALLOWED_TABLES';

const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
/** Rows kept from a query; one more is fetched to know whether there were more. */
export const MAX_ROWS = 1_000;
export const SHOWN_ROWS = 10;
export const SHOWN_COLUMNS = 8;
const CELL_WIDTH = 40;
const TABLE_NAME = /^(?:([A-Za-z_][A-Za-z0-9_$]*)\.)?([A-Za-z_][A-Za-z0-9_$]*)$/;
/** SQLSTATE classes that mean "cannot talk to the database" rather than "this query failed". */
const CONNECTION_STATES = /^(08|28|3D|53|57P0)/;

/**
 * The shared part of the SQL tools: their own pool on AGENT_DATABASE_URL (never DATABASE_URL),
 * opened on first use and closed with the module; database errors turned into tool results.
 */
abstract class AgentSqlTool implements OnModuleDestroy {
  private connection: AgentSqlConnection | undefined;

  protected constructor(
    protected readonly config: AppConfig,
    private readonly options: SqlToolOptions = {},
  ) {}

  protected get statementTimeoutMs(): number {
    return this.options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  }

  /** Throws the "not configured" refusal when AGENT_DATABASE_URL is unset. */
  protected requireConfigured(): string {
    const url = this.config.tools.sql.url;
    if (!url) throw new AppError('forbidden', NOT_CONFIGURED);
    return url;
  }

  /** The allowlist as written in config: schema.table. */
  protected get allowedTables(): readonly string[] {
    return this.config.tools.sql.allowedTables;
  }

  /**
   * Runs one read-only query. A statement timeout comes back as an error result (the agent can
   * narrow the query); an unreachable database as `unavailable`; other database errors as error
   * results carrying Postgres's message.
   */
  protected async query<R>(sql: string, q: AgentSqlQuery = {}): Promise<AgentSqlResult<R> | ToolResult> {
    const url = this.requireConfigured();
    this.connection ??= new AgentSqlConnection({
      url,
      statementTimeoutMs: this.statementTimeoutMs,
      applicationName: 'switchyard-agent-sql',
    });
    try {
      return await this.connection.query<R>(sql, q);
    } catch (err) {
      if (err instanceof AgentSqlTimeoutError) {
        return text(
          `query cancelled: it ran longer than the statement timeout (${formatMs(err.timeoutMs)}). ` +
            'Narrow it (a WHERE clause, fewer joins, a LIMIT) and try again.',
          true,
        );
      }
      if (err instanceof AgentSqlCancelledError)
        throw new AppError('timeout', 'the query was cancelled because the tool call was stopped');
      const e = err as Error & { code?: unknown; severity?: unknown };
      if (typeof e.code === 'string' && typeof e.severity === 'string' && !CONNECTION_STATES.test(e.code))
        return text(`query failed: ${e.message} (SQLSTATE ${e.code})`, true);
      throw new AppError('unavailable', `the agent database cannot be reached: ${e.message}`, { cause: err });
    }
  }

  async onModuleDestroy(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await connection?.close();
  }
}

function isToolResult(value: unknown): value is ToolResult {
  return typeof value === 'object' && value !== null && 'isError' in value;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

const QueryAllTablesParams = z.object({}).strict();

interface TableSummaryRow {
  schema: string;
  table: string;
  kind: string;
  comment: string | null;
  reltuples: number;
  columns: number;
}

/** What query_all_tables stands for in references. */
const TableList = z.object({
  tables: z.array(
    z.object({
      schema: z.string(),
      table: z.string(),
      kind: z.string().describe('table, view, materialized view, partitioned table or foreign table'),
      comment: z.string().nullable(),
      approxRows: z.number().int().nullable().describe('null for views and never-analyzed tables'),
      columns: z.number().int(),
    }),
  ),
  missing: z.array(z.string()).describe('allowlisted tables that do not exist'),
});

/** What execute_sql_query stands for in references: the kept rows, as arrays in column order. */
const QueryRows = z.object({
  columns: z.array(z.string()),
  rows: z.array(z.array(z.unknown())),
  rowCount: z.number().int().describe('rows kept (at most the row limit)'),
  truncated: z.boolean().describe('more rows matched than were kept'),
  rowsOmitted: z.number().int().optional().describe('kept rows left out of `rows` by the output size limit'),
});

const KIND_NAMES: Record<string, string> = {
  r: 'table',
  p: 'partitioned table',
  v: 'view',
  m: 'materialized view',
  f: 'foreign table',
};

@BuiltinTool({
  name: 'query_all_tables',
  description:
    'List the database tables the agent may query (the allowlist) with their comment, approximate row count and ' +
    'column count. Use query_table_schema for a table’s columns and execute_sql_query to read data.',
  params: QueryAllTablesParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(TableList, {
    examples: [
      {
        tables: [
          { schema: 'public', table: 'orders', kind: 'table', comment: null, approxRows: 120, columns: 5 },
        ],
        missing: [],
      },
    ],
  }),
})
export class QueryAllTablesTool
  extends AgentSqlTool
  implements BuiltinToolHandler<typeof QueryAllTablesParams>
{
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(SQL_TOOL_OPTIONS) options?: SqlToolOptions,
  ) {
    super(config, options);
  }

  async run(_args: z.infer<typeof QueryAllTablesParams>, ctx: ToolRunContext): Promise<ToolResult> {
    this.requireConfigured();
    if (this.allowedTables.length === 0)
      return {
        ...text('No tables are allowlisted (AGENT_ALLOWED_TABLES is empty), so there is nothing to query.'),
        value: { tables: [], missing: [] },
      };
    const pairs = this.allowedTables.map((t) => {
      const dot = t.indexOf('.');
      return [t.slice(0, dot), t.slice(dot + 1)] as const;
    });
    const result = await this.query<TableSummaryRow>(
      `SELECT n.nspname AS schema, c.relname AS table, c.relkind::text AS kind,
              obj_description(c.oid, 'pg_class') AS comment,
              c.reltuples::float8 AS reltuples,
              (SELECT count(*)::int FROM pg_catalog.pg_attribute a
                WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
         FROM pg_catalog.pg_class c
         JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         JOIN unnest($1::text[], $2::text[]) AS w(schema_name, table_name)
           ON w.schema_name = n.nspname AND w.table_name = c.relname
        WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
        ORDER BY n.nspname, c.relname`,
      { values: [pairs.map((p) => p[0]), pairs.map((p) => p[1])], signal: ctx.signal },
    );
    if (isToolResult(result)) return result;

    const tables = result.rows.map((r) => ({
      schema: r.schema,
      table: r.table,
      kind: KIND_NAMES[r.kind] ?? r.kind,
      comment: r.comment,
      // reltuples is -1 until the table is first vacuumed or analyzed.
      approxRows: r.reltuples >= 0 && r.kind !== 'v' ? Math.round(r.reltuples) : null,
      columns: r.columns,
    }));
    const found = new Set(tables.map((t) => `${t.schema}.${t.table}`));
    const missing = this.allowedTables.filter((t) => !found.has(t));
    const lines = [
      tables.length === 0
        ? 'None of the allowlisted tables exists.'
        : `${tables.length} table${tables.length === 1 ? '' : 's'} you may query:`,
      ...tables.map((t) => {
        const rows =
          t.kind === 'view'
            ? ''
            : t.approxRows === null
              ? 'row count unknown (never analyzed), '
              : `~${t.approxRows} rows, `;
        const kind = t.kind === 'table' ? '' : ` (${t.kind})`;
        const comment = t.comment ? ` — ${oneLine(t.comment, 200)}` : '';
        return `- ${t.schema}.${t.table}${kind}: ${rows}${t.columns} columns${comment}`;
      }),
    ];
    if (missing.length) lines.push(`Allowlisted but not found: ${missing.join(', ')}.`);
    return {
      content: [
        { type: 'text', text: lines.join('\n') },
        { type: 'json', json: { tables, missing } },
      ],
      isError: false,
      truncated: false,
      value: { tables, missing },
    };
  }
}

const QueryTableSchemaParams = z
  .object({
    tableName: z
      .string()
      .min(1)
      .max(200)
      .describe('table or schema.table, exactly as listed by query_all_tables; a bare name means public'),
  })
  .strict();

interface ColumnInfo {
  name: string;
  type: string;
  notNull: boolean;
  default: string | null;
  identity: string;
  generated: string;
  comment: string | null;
}

interface TableDefinitionRow {
  kind: string;
  qname: string;
  comment: string | null;
  viewdef: string | null;
  columns: ColumnInfo[];
  constraints: { name: string; type: string; def: string }[];
  indexes: string[];
}

@BuiltinTool({
  name: 'query_table_schema',
  description:
    'Show the definition of one allowlisted table as PostgreSQL DDL rebuilt from the catalog: columns with types, ' +
    'NOT NULL and defaults, primary key, foreign keys, checks, indexes and comments. tableName is table or schema.table.',
  params: QueryTableSchemaParams,
  effect: 'read',
  idempotent: true,
  outputSchema: textOutput("the table's definition as PostgreSQL DDL", [
    'CREATE TABLE public.orders (\n  id integer NOT NULL,\n  total numeric(10,2),\n  CONSTRAINT orders_pkey PRIMARY KEY (id)\n);',
  ]),
})
export class QueryTableSchemaTool
  extends AgentSqlTool
  implements BuiltinToolHandler<typeof QueryTableSchemaParams>
{
  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(SQL_TOOL_OPTIONS) options?: SqlToolOptions,
  ) {
    super(config, options);
  }

  async run(args: z.infer<typeof QueryTableSchemaParams>, ctx: ToolRunContext): Promise<ToolResult> {
    this.requireConfigured();
    const m = TABLE_NAME.exec(args.tableName);
    if (!m)
      throw new AppError(
        'validation_failed',
        `tableName must be a table name or schema.table (letters, digits, _ and $), not "${oneLine(args.tableName, 80)}"`,
      );
    const schema = m[1] ?? 'public';
    const table = m[2] as string;
    if (!allowlistKeys(this.allowedTables).has(`${schema}\u0000${table}`)) {
      throw new AppError(
        'forbidden',
        `table ${schema}.${table} is not on the allowlist (allowed: ${this.allowedTables.join(', ') || 'none'})`,
      );
    }
    const result = await this.query<TableDefinitionRow>(DEFINITION_SQL, {
      values: [schema, table],
      signal: ctx.signal,
    });
    if (isToolResult(result)) return result;
    const row = result.rows[0];
    if (!row)
      throw new AppError('not_found', `table ${schema}.${table} is on the allowlist but does not exist`);
    return text(renderDdl(row));
  }
}

const DEFINITION_SQL = `
SELECT c.relkind::text AS kind,
       quote_ident(n.nspname) || '.' || quote_ident(c.relname) AS qname,
       obj_description(c.oid, 'pg_class') AS comment,
       CASE WHEN c.relkind IN ('v', 'm') THEN pg_get_viewdef(c.oid, true) END AS viewdef,
       COALESCE((
         SELECT json_agg(json_build_object(
                  'name', quote_ident(a.attname),
                  'type', format_type(a.atttypid, a.atttypmod),
                  'notNull', a.attnotnull,
                  'default', pg_get_expr(d.adbin, d.adrelid),
                  'identity', a.attidentity::text,
                  'generated', a.attgenerated::text,
                  'comment', col_description(a.attrelid, a.attnum)) ORDER BY a.attnum)
           FROM pg_catalog.pg_attribute a
           LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '[]') AS columns,
       COALESCE((
         SELECT json_agg(json_build_object(
                  'name', quote_ident(k.conname),
                  'type', k.contype::text,
                  'def', pg_get_constraintdef(k.oid, true))
                  ORDER BY position(k.contype::text IN 'pufcx'), k.conname)
           FROM pg_catalog.pg_constraint k
          WHERE k.conrelid = c.oid AND k.contype IN ('p', 'u', 'f', 'c', 'x')), '[]') AS constraints,
       COALESCE((
         SELECT json_agg(ix.indexdef ORDER BY ix.indexname)
           FROM pg_catalog.pg_indexes ix
          WHERE ix.schemaname = n.nspname AND ix.tablename = c.relname
            AND NOT EXISTS (
                  SELECT 1 FROM pg_catalog.pg_constraint k
                   WHERE k.conrelid = c.oid AND k.contype IN ('p', 'u', 'x') AND k.conname = ix.indexname)
       ), '[]') AS indexes
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = $1 AND c.relname = $2 AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`;

function sqlLiteral(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** CREATE TABLE (or VIEW) with constraints, then indexes and comments, from the catalog rows. */
export function renderDdl(row: TableDefinitionRow): string {
  const out: string[] = [];
  if (row.kind === 'v' || row.kind === 'm') {
    out.push(
      `CREATE ${row.kind === 'm' ? 'MATERIALIZED VIEW' : 'VIEW'} ${row.qname} AS\n${(row.viewdef ?? '').trim().replace(/;$/, '')};`,
    );
  } else {
    const items = row.columns.map((c) => {
      let line = `  ${c.name} ${c.type}`;
      if (c.generated === 's') line += ` GENERATED ALWAYS AS (${c.default ?? ''}) STORED`;
      else if (c.identity === 'a') line += ' GENERATED ALWAYS AS IDENTITY';
      else if (c.identity === 'd') line += ' GENERATED BY DEFAULT AS IDENTITY';
      else if (c.default !== null) line += ` DEFAULT ${c.default}`;
      if (c.notNull) line += ' NOT NULL';
      return line;
    });
    for (const k of row.constraints) items.push(`  CONSTRAINT ${k.name} ${k.def}`);
    const kind = row.kind === 'f' ? 'FOREIGN TABLE' : 'TABLE';
    out.push(`CREATE ${kind} ${row.qname} (\n${items.join(',\n')}\n);`);
  }
  for (const def of row.indexes) out.push(`${def};`);
  if (row.comment) out.push(`COMMENT ON TABLE ${row.qname} IS ${sqlLiteral(row.comment)};`);
  for (const c of row.columns) {
    if (c.comment) out.push(`COMMENT ON COLUMN ${row.qname}.${c.name} IS ${sqlLiteral(c.comment)};`);
  }
  return out.join('\n');
}

const ExecuteSqlQueryParams = z
  .object({
    sql: z
      .string()
      .min(1)
      .max(MAX_SQL_LENGTH)
      .describe('one PostgreSQL SELECT statement over the allowlisted tables'),
  })
  .strict();

@BuiltinTool({
  name: 'execute_sql_query',
  description:
    'Run one read-only PostgreSQL SELECT over the allowlisted tables (see query_all_tables). Joins, subqueries, CTEs, ' +
    'UNION and aggregates are fine; other tables, writes, SELECT INTO, locking clauses, $-quoting, backslashes and ' +
    'functions outside a small allowlist (aggregates, window, string, date and math basics) are refused. Runs in a ' +
    `read-only transaction with a 30 s statement timeout; keeps at most ${MAX_ROWS} rows, shows the first ` +
    `${SHOWN_ROWS} rows and ${SHOWN_COLUMNS} columns as text and returns the kept rows as json.`,
  params: ExecuteSqlQueryParams,
  effect: 'read',
  idempotent: true,
  outputSchema: outputSchemaOf(QueryRows, {
    examples: [{ columns: ['id', 'total'], rows: [[1, '9.50']], rowCount: 1, truncated: false }],
  }),
})
export class ExecuteSqlQueryTool
  extends AgentSqlTool
  implements BuiltinToolHandler<typeof ExecuteSqlQueryParams>
{
  private guard: SqlGuard | undefined;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(SQL_TOOL_OPTIONS) options?: SqlToolOptions,
  ) {
    super(config, options);
  }

  async run(args: z.infer<typeof ExecuteSqlQueryParams>, ctx: ToolRunContext): Promise<ToolResult> {
    this.requireConfigured();
    this.guard ??= new SqlGuard(this.allowedTables);
    const checked = this.guard.check(args.sql);
    // Only a checked statement is wrapped: the LIMIT bounds what is fetched, whatever it asks for.
    const result = await this.query<unknown[]>(
      `SELECT * FROM (\n${checked.sql}\n) AS switchyard_query LIMIT ${MAX_ROWS + 1}`,
      { rowMode: 'array', signal: ctx.signal },
    );
    if (isToolResult(result)) return result;
    return this.render(
      result.fields.map((f) => f.name),
      result.rows,
    );
  }

  private render(columns: string[], fetched: unknown[][]): ToolResult {
    const more = fetched.length > MAX_ROWS;
    const rows = more ? fetched.slice(0, MAX_ROWS) : fetched;
    const lines: string[] = [];
    lines.push(
      `${rows.length} row${rows.length === 1 ? '' : 's'}` +
        (more
          ? ` kept: more than ${MAX_ROWS} rows matched and only the first ${MAX_ROWS} were fetched`
          : '') +
        `, ${columns.length} column${columns.length === 1 ? '' : 's'}.`,
    );
    const shownColumns = columns.slice(0, SHOWN_COLUMNS);
    const shownRows = rows.slice(0, SHOWN_ROWS).map((r) => r.slice(0, SHOWN_COLUMNS).map(cellText));
    lines.push(renderTable(shownColumns, shownRows));
    const hiddenColumns = columns.slice(SHOWN_COLUMNS);
    if (rows.length > SHOWN_ROWS || hiddenColumns.length > 0) {
      lines.push(
        `Showing ${shownRows.length} of ${rows.length} rows and ${shownColumns.length} of ${columns.length} columns` +
          (hiddenColumns.length ? `; hidden columns: ${hiddenColumns.join(', ')}` : '') +
          '. The json block holds the kept rows.',
      );
    }
    const body = lines.join('\n');

    // The json block carries the kept rows, as many as fit in the output limit.
    const budget = this.config.tools.outputLimitBytes - Buffer.byteLength(body) - 512;
    const jsonRows: unknown[][] = [];
    let size = 0;
    for (const r of rows) {
      const value = r.map(jsonValue);
      size += Buffer.byteLength(JSON.stringify(value)) + 1;
      if (size > budget) break;
      jsonRows.push(value);
    }
    const omitted = rows.length - jsonRows.length;
    const json: Record<string, unknown> = { columns, rows: jsonRows, rowCount: rows.length, truncated: more };
    if (omitted > 0) json['rowsOmitted'] = omitted;
    const notice =
      omitted > 0 ? `\n${omitted} kept rows were left out of the json block (output size limit).` : '';
    return {
      content: [
        { type: 'text', text: body + notice },
        { type: 'json', json },
      ],
      isError: false,
      truncated: more || omitted > 0,
      value: json,
    };
  }
}

function oneLine(value: string, max: number): string {
  const flat = value.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function jsonValue(value: unknown): unknown {
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (Buffer.isBuffer(value)) return `\\x${value.toString('hex')}`;
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(jsonValue);
  return value;
}

function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  const v = jsonValue(value);
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  const flat = s
    .replace(/\r?\n|\r/g, '\\n')
    .replace(/\t/g, ' ')
    .replace(/\|/g, '\\|');
  return flat.length > CELL_WIDTH ? `${flat.slice(0, CELL_WIDTH - 1)}…` : flat;
}

/** A psql-like aligned table. */
export function renderTable(columns: string[], rows: string[][]): string {
  const heads = columns.map((c) => cellText(c));
  const widths = heads.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join(' | ')
      .trimEnd();
  return [line(heads), widths.map((w) => '-'.repeat(w)).join('-+-'), ...rows.map(line)].join('\n');
}

export const SQL_TOOLS = [QueryAllTablesTool, QueryTableSchemaTool, ExecuteSqlQueryTool] as const;
