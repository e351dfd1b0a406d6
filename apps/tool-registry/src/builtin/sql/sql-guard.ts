import { Parser } from 'node-sql-parser';
import { AppError } from '@switchyard/contracts';

/*
 * The gate in front of execute_sql_query. Layers, in order:
 *  1. A lexer that reads the text the way Postgres does (nested comments, '' in strings, "" in
 *     identifiers) and refuses what the AST parser reads differently (backslashes, dollar quotes,
 *     E'' and U&'' forms, non-ASCII outside literals). Comments are replaced by a space, so the
 *     text that is parsed is exactly the text that runs.
 *  2. One statement only; no words that only appear in writing or locking statements.
 *  3. node-sql-parser's PostgreSQL AST: a single SELECT; every node type on a known list; every
 *     table reference allowlisted (CTE names in scope excepted), functions and cast types from
 *     allowlists; the parser's own table list must agree with what the walk saw.
 * The tool then runs it in a READ ONLY transaction with a statement_timeout.
 */

export const MAX_SQL_LENGTH = 20_000;

/** Functions an agent may call. Compared lowercased for unquoted names, exactly for quoted ones. */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  // aggregates
  'count',
  'sum',
  'avg',
  'min',
  'max',
  'string_agg',
  'array_agg',
  'json_agg',
  'jsonb_agg',
  'bool_and',
  'bool_or',
  'stddev',
  'stddev_pop',
  'stddev_samp',
  'variance',
  'var_pop',
  'var_samp',
  // window functions
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  // conditionals
  'coalesce',
  'nullif',
  'greatest',
  'least',
  // text
  'lower',
  'upper',
  'length',
  'char_length',
  'substring',
  'substr',
  'trim',
  'btrim',
  'ltrim',
  'rtrim',
  'concat',
  'concat_ws',
  'replace',
  'left',
  'right',
  'split_part',
  'strpos',
  'initcap',
  // numbers
  'round',
  'floor',
  'ceil',
  'ceiling',
  'abs',
  'trunc',
  'mod',
  'sign',
  // dates and times
  'now',
  'current_date',
  'current_time',
  'current_timestamp',
  'localtime',
  'localtimestamp',
  'date_trunc',
  'date_part',
  'extract',
  'to_char',
  'to_date',
  'to_timestamp',
  'age',
  // json
  'json_build_object',
  'jsonb_build_object',
  'json_build_array',
  'jsonb_build_array',
  'to_json',
  'to_jsonb',
]);

/** SQL syntax the parser represents as function calls; only when written unquoted. */
const SYNTAX_FUNCTIONS = new Set(['array', 'exists', 'any', 'all', 'some', 'row']);

/** Cast target types (the parser's upper-cased dataType, without [] suffixes). */
const ALLOWED_CAST_TYPES = new Set([
  'INT',
  'INTEGER',
  'INT2',
  'INT4',
  'INT8',
  'SMALLINT',
  'BIGINT',
  'NUMERIC',
  'DECIMAL',
  'REAL',
  'FLOAT',
  'FLOAT4',
  'FLOAT8',
  'DOUBLE PRECISION',
  'TEXT',
  'VARCHAR',
  'CHAR',
  'CHARACTER',
  'CHARACTER VARYING',
  'BOOL',
  'BOOLEAN',
  'DATE',
  'TIME',
  'TIMETZ',
  'TIMESTAMP',
  'TIMESTAMPTZ',
  'INTERVAL',
  'JSON',
  'JSONB',
  'UUID',
]);

/** AST node types (the `type` field) a read-only SELECT may contain; anything else is refused. */
const NODE_TYPES = new Set([
  'select',
  'column_ref',
  'expr',
  'expr_list',
  'binary_expr',
  'unary_expr',
  'number',
  'bigint',
  'single_quote_string',
  'double_quote_string',
  'default',
  'origin',
  'bool',
  'null',
  'star',
  'case',
  'when',
  'else',
  'extract',
  'interval',
  'window',
  'values',
  'array',
  'date',
  'time',
  'timestamp',
  'function',
  'aggr_func',
  'window_func',
  'cast',
  'ASC',
  'DESC',
  'DISTINCT',
  'DISTINCT ON',
  'ESCAPE',
]);

/**
 * Unquoted words that only occur in statements that write, lock or run code. Refused anywhere
 * outside literals (a column with such a name can be written quoted).
 */
const FORBIDDEN_WORDS = new Set([
  'insert',
  'update',
  'delete',
  'merge',
  'truncate',
  'drop',
  'alter',
  'create',
  'grant',
  'revoke',
  'copy',
  'lock',
  'call',
  'do',
  'execute',
  'prepare',
  'deallocate',
  'vacuum',
  'analyze',
  'cluster',
  'reindex',
  'refresh',
  'listen',
  'notify',
  'unlisten',
  'discard',
  'checkpoint',
  'import',
  'reassign',
  'into',
  'returning',
]);
/** `FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, `FOR KEY SHARE`. */
const LOCKING_AFTER_FOR = new Set(['update', 'share', 'no', 'key']);

const IDENT = /^[A-Za-z_][A-Za-z0-9_$]*$/;

function refuse(message: string): never {
  throw new AppError('forbidden', `query refused: ${message}`);
}

function invalid(message: string): never {
  throw new AppError('validation_failed', `query refused: ${message}`);
}

type TokenKind = 'word' | 'quoted' | 'string' | 'number' | 'punct';
interface Token {
  readonly kind: TokenKind;
  readonly text: string;
}

export interface LexedSql {
  /** The statement with comments blanked out and trailing semicolons removed. */
  readonly text: string;
  readonly tokens: readonly Token[];
}

/**
 * Reads `sql` as the PostgreSQL lexer does (standard_conforming_strings on), refusing the forms
 * on which node-sql-parser and Postgres could disagree.
 */
export function lexSql(sql: string): LexedSql {
  const tokens: Token[] = [];
  let out = '';
  let afterSemicolon = false;
  let depth = 0;
  let i = 0;
  const n = sql.length;
  const push = (kind: TokenKind, text: string) => {
    if (afterSemicolon) refuse('only one statement is allowed (found more after ";")');
    tokens.push({ kind, text });
    out += text;
  };
  while (i < n) {
    const c = sql[i] as string;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      out += c;
      i++;
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n' && sql[i] !== '\r') i++;
      out += ' ';
    } else if (c === '/' && sql[i + 1] === '*') {
      // Postgres nests block comments.
      let depth = 0;
      do {
        if (sql[i] === '/' && sql[i + 1] === '*') {
          depth++;
          i += 2;
        } else if (sql[i] === '*' && sql[i + 1] === '/') {
          depth--;
          i += 2;
        } else i++;
      } while (depth > 0 && i < n);
      if (depth > 0) invalid('unterminated /* comment');
      out += ' ';
    } else if (c === "'") {
      let j = i + 1;
      for (;;) {
        const end = sql.indexOf("'", j);
        if (end < 0) invalid('unterminated string literal');
        if (sql[end + 1] === "'") j = end + 2;
        else {
          j = end + 1;
          break;
        }
      }
      const literal = sql.slice(i, j);
      if (literal.includes('\\'))
        refuse(
          'backslashes are not allowed in string literals (the parser and Postgres read them differently)',
        );
      push('string', literal);
      i = j;
    } else if (c === '"') {
      const end = sql.indexOf('"', i + 1);
      if (end < 0) invalid('unterminated quoted identifier');
      if (sql[end + 1] === '"') refuse('quoted identifiers containing a double quote are not allowed');
      const name = sql.slice(i + 1, end);
      if (name.length === 0) invalid('zero-length quoted identifier');
      if (name.includes('\\')) refuse('backslashes are not allowed in identifiers');
      push('quoted', sql.slice(i, end + 1));
      i = end + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(sql[j] as string)) j++;
      const word = sql.slice(i, j);
      const lower = word.toLowerCase();
      if (lower === 'e' && sql[j] === "'") refuse("escape strings (E'...') are not allowed");
      if (lower === 'u' && sql[j] === '&' && (sql[j + 1] === '"' || sql[j + 1] === "'"))
        refuse('Unicode-escaped identifiers and strings (U&"..." / U&\'...\') are not allowed');
      push('word', word);
      i = j;
    } else if (/[0-9]/.test(c)) {
      let j = i + 1;
      while (j < n && /[0-9.]/.test(sql[j] as string)) j++;
      push('number', sql.slice(i, j));
      i = j;
    } else if (c === '$') {
      refuse('dollar quoting and $n parameters are not allowed');
    } else if (c === '\\') {
      refuse('backslashes are not allowed');
    } else if (c === '`') {
      refuse('backticks are not PostgreSQL quoting; write identifiers in double quotes');
    } else if (c === ';') {
      afterSemicolon = true;
      i++;
    } else if (c >= '!' && c <= '~') {
      // Balanced parentheses: the checked text is later wrapped as a subquery and must not close it.
      if (c === '(') depth++;
      if (c === ')' && --depth < 0) invalid('unbalanced parentheses');
      push('punct', c);
      i++;
    } else {
      refuse(
        `the character U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')} is only allowed inside string literals and quoted identifiers`,
      );
    }
  }
  if (depth !== 0) invalid('unbalanced parentheses');
  return { text: out.trim(), tokens };
}

/** Allowlist entries as given in config ("schema.table"), as a set of exact pairs. */
export function allowlistKeys(entries: readonly string[]): Set<string> {
  const keys = new Set<string>();
  for (const entry of entries) {
    const dot = entry.indexOf('.');
    if (dot > 0) keys.add(pairKey(entry.slice(0, dot), entry.slice(dot + 1)));
  }
  return keys;
}

function pairKey(schema: string, table: string): string {
  return `${schema}\u0000${table}`;
}

interface AstNode {
  [key: string]: unknown;
}

const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && !Array.isArray(v);

class Scope {
  private readonly names = new Set<string>();
  constructor(private readonly parent?: Scope) {}
  add(name: string): void {
    this.names.add(name);
  }
  has(name: string): boolean {
    return this.names.has(name) || (this.parent?.has(name) ?? false);
  }
}

const MAX_DEPTH = 400;

export interface CheckedQuery {
  /** The text to run: the input with comments blanked and trailing semicolons removed. */
  readonly sql: string;
  /** The tables it reads, as schema.table. */
  readonly tables: string[];
}

export class SqlGuard {
  private readonly parser = new Parser();
  private readonly allowed: Set<string>;

  constructor(private readonly allowedTables: readonly string[]) {
    this.allowed = allowlistKeys(allowedTables);
  }

  /** Throws AppError (`forbidden` or `validation_failed`, "query refused: ...") unless `sql` may run. */
  check(sql: string): CheckedQuery {
    if (sql.trim() === '') invalid('the SQL is empty');
    if (sql.length > MAX_SQL_LENGTH) invalid(`the SQL is longer than ${MAX_SQL_LENGTH} characters`);
    const lexed = lexSql(sql);
    if (lexed.text === '') invalid('the SQL holds only comments');
    this.checkWords(lexed.tokens);

    let parsed: { tableList: string[]; ast: unknown };
    try {
      parsed = this.parser.parse(lexed.text, { database: 'postgresql' }) as typeof parsed;
    } catch (err) {
      const detail = (err as Error).message.replace(/\s+/g, ' ').slice(0, 200);
      invalid(`it could not be parsed as a single PostgreSQL SELECT (${detail})`);
    }
    const statements = Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast];
    if (statements.length !== 1) refuse('exactly one statement is allowed');
    const root = statements[0];
    if (!isNode(root) || root['type'] !== 'select')
      refuse(
        `only SELECT statements are allowed (this is ${isNode(root) ? String(root['type']) : 'nothing'})`,
      );

    const walk = new Walk(this.allowed, this.allowedTables, identResolver(lexed.tokens));
    walk.chain(root, new Scope(), 0);

    // Cross-check: every table the parser itself found must be one the walk checked.
    for (const entry of parsed.tableList) {
      const [op, db, table] = entry.split('::');
      if (op !== 'select') refuse(`only reading is allowed (the statement would ${op} ${table})`);
      if (!walk.seen.has(`${db}\u0000${table}`))
        refuse(`the table reference ${db === 'null' ? '' : `${db}.`}${table} could not be checked`);
    }
    return { sql: lexed.text, tables: [...walk.tables].sort() };
  }

  private checkWords(tokens: readonly Token[]): void {
    tokens.forEach((t, idx) => {
      if (t.kind !== 'word') return;
      const lower = t.text.toLowerCase();
      if (FORBIDDEN_WORDS.has(lower))
        refuse(
          `"${t.text.toUpperCase()}" is not allowed: only a single read-only SELECT can run` +
            ' (write the name in double quotes if it is a column)',
        );
      const next = tokens[idx + 1];
      if (lower === 'for' && next?.kind === 'word' && LOCKING_AFTER_FOR.has(next.text.toLowerCase()))
        refuse('locking clauses (FOR UPDATE / FOR SHARE ...) are not allowed');
    });
  }
}

/**
 * node-sql-parser drops the quotes of table names ("ORDERS" and ORDERS both come out as ORDERS).
 * Postgres folds unquoted names to lower case and keeps quoted ones, so a name with upper-case
 * letters is resolved from the lexer's tokens: quoted only, unquoted only, or refused as ambiguous.
 */
function identResolver(tokens: readonly Token[]): (raw: string) => string {
  const quoted = new Set(tokens.filter((t) => t.kind === 'quoted').map((t) => t.text.slice(1, -1)));
  const unquoted = new Set(tokens.filter((t) => t.kind === 'word').map((t) => t.text));
  return (raw) => {
    if (raw === raw.toLowerCase()) return raw;
    const q = quoted.has(raw);
    const u = unquoted.has(raw);
    if (q && !u) return raw;
    if (u && !q) return raw.toLowerCase();
    return refuse(`cannot tell whether the name ${raw} is quoted; write it in lower case or always quoted`);
  };
}

class Walk {
  /** Raw db\0table pairs of every table reference checked, to compare with the parser's list. */
  readonly seen = new Set<string>();
  /** Resolved schema.table of every allowlisted table read. */
  readonly tables = new Set<string>();

  constructor(
    private readonly allowed: Set<string>,
    private readonly allowedTables: readonly string[],
    private readonly resolve: (raw: string) => string,
  ) {}

  /**
   * A SELECT and the branches of its set operation (`_next`). The parser hoists a parenthesized
   * first branch's WITH onto the whole chain, so its CTEs cover the other branches only when the
   * first branch is not parenthesized (which is when Postgres applies them to all branches).
   */
  chain(head: AstNode, outer: Scope, depth: number): void {
    const headScope = this.withClause(head, outer, depth);
    this.select(head, headScope, depth);
    const branchOuter = head['parentheses_symbol'] ? outer : headScope;
    let branch = head['_next'];
    while (branch !== undefined && branch !== null) {
      if (!isNode(branch) || branch['type'] !== 'select') refuse('only SELECT branches are allowed');
      this.select(branch, this.withClause(branch, branchOuter, depth), depth);
      branch = branch['_next'];
    }
  }

  /** Checks the CTE bodies; returns the scope in which the CTE names are visible. */
  private withClause(sel: AstNode, outer: Scope, depth: number): Scope {
    const ctes = sel['with'];
    if (ctes === null || ctes === undefined) return outer;
    if (!Array.isArray(ctes)) return refuse('unsupported WITH clause');
    const scope = new Scope(outer);
    const recursive = ctes.some((c) => isNode(c) && c['recursive'] === true);
    const names = ctes.map((c) => (isNode(c) ? this.cteName(c['name']) : refuse('unsupported WITH clause')));
    // WITH RECURSIVE: every name is visible in every body. Otherwise only the earlier ones.
    if (recursive) names.forEach((name) => scope.add(name));
    ctes.forEach((cte: AstNode, idx) => {
      let body = cte['stmt'];
      if (isNode(body) && isNode(body['ast'])) body = body['ast'];
      if (!isNode(body) || body['type'] !== 'select')
        refuse('a WITH query must be a SELECT (data-modifying WITH queries are not allowed)');
      this.generic(cte['columns'], scope, depth + 1);
      this.chain(body, scope, depth + 1);
      scope.add(names[idx] as string);
    });
    return scope;
  }

  private cteName(name: unknown): string {
    if (typeof name === 'string') return this.resolve(name);
    if (isNode(name) && typeof name['value'] === 'string') {
      if (name['type'] === 'double_quote_string') return name['value'];
      if (name['type'] === 'default') return name['value'].toLowerCase();
    }
    return refuse('unsupported WITH query name');
  }

  /** One SELECT (without its `_next` branches and WITH, which `chain` handles). */
  private select(sel: AstNode, scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH) refuse('the query is nested too deeply');
    const into = sel['into'];
    if (isNode(into) && ((into['position'] !== null && into['position'] !== undefined) || into['expr']))
      refuse('SELECT ... INTO is not allowed');
    const from = sel['from'];
    if (from !== null && from !== undefined) {
      if (!Array.isArray(from)) refuse('unsupported FROM clause');
      for (const item of from) this.fromItem(item, scope, depth + 1);
    }
    for (const [key, value] of Object.entries(sel)) {
      if (key === 'with' || key === '_next' || key === 'from' || key === 'into' || key === 'type') continue;
      this.generic(value, scope, depth + 1);
    }
  }

  private fromItem(item: unknown, scope: Scope, depth: number): void {
    if (!isNode(item)) return refuse('unsupported FROM item');
    if (item['table'] !== undefined && item['table'] !== null) {
      if (typeof item['table'] !== 'string') refuse('unsupported FROM item');
      this.tableRef(item, scope);
      for (const [key, value] of Object.entries(item)) {
        if (key === 'db' || key === 'table' || key === 'schema' || key === 'as') continue;
        this.generic(value, scope, depth + 1);
      }
      return;
    }
    if (item['expr'] === undefined) refuse('unsupported FROM item');
    for (const [key, value] of Object.entries(item)) {
      if (key === 'as' || key === 'prefix') continue;
      // {type: 'expr'} marks a function in FROM; the function node itself is checked below.
      if (key === 'type' && value === 'expr') continue;
      this.generic(value, scope, depth + 1);
    }
  }

  private tableRef(item: AstNode, scope: Scope): void {
    const rawTable = item['table'] as string;
    const rawDb = item['db'];
    if (item['schema'] !== undefined && item['schema'] !== null)
      refuse(
        `three-part table names are not allowed (${String(rawDb)}.${String(item['schema'])}.${rawTable})`,
      );
    if (rawDb !== null && rawDb !== undefined && typeof rawDb !== 'string') refuse('unsupported table name');
    this.seen.add(`${rawDb ?? 'null'}\u0000${rawTable}`);
    const table = this.resolve(rawTable);
    let schema: string;
    if (rawDb === null || rawDb === undefined) {
      if (scope.has(table)) return; // a CTE of this query
      if (table.startsWith('pg_'))
        refuse(
          `unqualified ${table} could mean a system catalog; write public.${table} if you mean that table`,
        );
      schema = 'public';
    } else schema = this.resolve(rawDb);
    if (!IDENT.test(schema) || !IDENT.test(table) || !this.allowed.has(pairKey(schema, table))) {
      const list = this.allowedTables.length ? this.allowedTables.join(', ') : 'none';
      refuse(`table ${schema}.${table} is not on the allowlist (allowed: ${list})`);
    }
    this.tables.add(`${schema}.${table}`);
  }

  /** Any other part of the tree: subqueries, expressions, function calls, casts. */
  private generic(value: unknown, scope: Scope, depth: number): void {
    if (depth > MAX_DEPTH) refuse('the query is nested too deeply');
    if (Array.isArray(value)) {
      for (const v of value) this.generic(v, scope, depth + 1);
      return;
    }
    if (!isNode(value)) return;
    const type = value['type'];
    if (typeof type === 'string') {
      if (!NODE_TYPES.has(type)) refuse(`unsupported SQL construct (${type})`);
      if (type === 'select') return this.chain(value, scope, depth + 1);
      if (type === 'function' || type === 'aggr_func' || type === 'window_func') this.functionCall(value);
      if (type === 'cast') this.cast(value);
    }
    for (const [key, v] of Object.entries(value)) {
      if (key === 'tableList' || key === 'columnList' || key === 'loc') continue;
      // The name of a function node is checked by functionCall, not walked as an expression.
      if (key === 'name' && (type === 'function' || type === 'aggr_func' || type === 'window_func')) continue;
      this.generic(v, scope, depth + 1);
    }
  }

  private functionCall(node: AstNode): void {
    const name = node['name'];
    let resolved: string;
    let unquoted = true;
    if (typeof name === 'string') resolved = name.toLowerCase();
    else if (isNode(name) && Array.isArray(name['name'])) {
      if (name['schema'] !== undefined && name['schema'] !== null)
        refuse('schema-qualified function names are not allowed');
      const parts = name['name'] as unknown[];
      const part = parts[0];
      if (parts.length !== 1 || !isNode(part) || typeof part['value'] !== 'string')
        refuse('unsupported function name');
      unquoted = part['type'] !== 'double_quote_string';
      resolved = unquoted ? part['value'].toLowerCase() : part['value'];
    } else return refuse('unsupported function call');
    if (ALLOWED_FUNCTIONS.has(resolved)) return;
    if (unquoted && SYNTAX_FUNCTIONS.has(resolved)) return;
    refuse(`the function ${resolved}() is not on the allowlist`);
  }

  private cast(node: AstNode): void {
    const targets = node['target'];
    if (!Array.isArray(targets) || targets.length === 0) refuse('unsupported cast');
    for (const t of targets) {
      const dataType = isNode(t) ? t['dataType'] : undefined;
      if (typeof dataType !== 'string') refuse('unsupported cast');
      const base = dataType.toUpperCase().replace(/(\[\])+$/, '');
      if (!ALLOWED_CAST_TYPES.has(base)) refuse(`casts to ${dataType.toLowerCase()} are not allowed`);
    }
  }
}
