import { isRecord, PICKER_FILE_FORMAT } from '@switchyard/contracts';
import { portTypeOf, type PortType } from '../types';

/**
 * The start node's table of workflow inputs and the JSON Schema it stands for, both ways. A row keeps
 * every schema keyword the table does not edit (`description`, `default`, `items`…), so editing a
 * row never drops what a power user wrote in the JSON view.
 */

/** An input's kind is its port type. */
export type InputKind = PortType;
export const INPUT_KINDS: readonly InputKind[] = ['text', 'number', 'boolean', 'list', 'object', 'file'];

export interface InputRow {
  /** Stable across renames (React key). */
  readonly key: string;
  readonly name: string;
  /** The label: the property's `title`. */
  readonly title: string;
  readonly kind: InputKind;
  readonly required: boolean;
  /** The allowed values (`enum`), comma-separated; text and number only. */
  readonly options: string;
  /** The example (`examples[0]`) as typed. */
  readonly example: string;
  /** The property's other keywords, kept as they were. */
  readonly rest: Readonly<Record<string, unknown>>;
  /** `integer` for a number input declared that way. */
  readonly integer?: boolean;
}

export type RowProblem =
  'name_empty' | 'name_invalid' | 'name_duplicate' | 'options_invalid' | 'example_invalid';

export const INPUT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

let counter = 0;
export function rowKey(): string {
  counter += 1;
  return `row-${counter}`;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The rows of an input schema, in property order. */
export function rowsOf(schema: unknown): InputRow[] {
  const s = isRecord(schema) ? schema : {};
  const props = isRecord(s['properties']) ? s['properties'] : {};
  const required = new Set(Array.isArray(s['required']) ? s['required'] : []);
  return Object.entries(props).map(([name, raw]) => {
    const prop = isRecord(raw) ? raw : {};
    const { type, title, enum: options, examples, example, format, ...rest } = prop;
    const kind = portTypeOf(prop);
    const sample = Array.isArray(examples) && examples.length ? examples[0] : example;
    return {
      key: rowKey(),
      name,
      title: typeof title === 'string' ? title : '',
      kind,
      required: required.has(name),
      options: Array.isArray(options) ? options.map(shown).join(', ') : '',
      example: sample === undefined ? '' : shown(sample),
      rest: {
        ...rest,
        ...(kind === 'any' && type !== undefined ? { type } : {}),
        ...(format !== undefined && format !== PICKER_FILE_FORMAT ? { format } : {}),
        ...(Array.isArray(examples) && examples.length > 1 ? { examples: examples.slice(1) } : {}),
      },
      ...(type === 'integer' ? { integer: true } : {}),
    };
  });
}

function typeFor(row: InputRow): Record<string, unknown> {
  switch (row.kind) {
    case 'text':
      return { type: 'string' };
    case 'number':
      return { type: row.integer ? 'integer' : 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'list':
      return { type: 'array' };
    case 'object':
      return { type: 'object' };
    case 'file':
      return { type: 'string', format: PICKER_FILE_FORMAT };
    case 'any':
      return {};
  }
}

type Parsed = { ok: true; value: unknown } | { ok: false };

function parseOptions(row: InputRow): { ok: true; value: unknown[] | undefined } | { ok: false } {
  if (row.kind !== 'text' && row.kind !== 'number') return { ok: true, value: undefined };
  const parts = row.options
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  if (!parts.length) return { ok: true, value: undefined };
  if (row.kind === 'text') return { ok: true, value: parts };
  const numbers = parts.map(Number);
  return numbers.every((n) => Number.isFinite(n) && (!row.integer || Number.isInteger(n)))
    ? { ok: true, value: numbers }
    : { ok: false };
}

function parseExample(row: InputRow): Parsed {
  const text = row.example;
  if (!text.trim()) return { ok: true, value: undefined };
  switch (row.kind) {
    case 'text':
    case 'file':
      return { ok: true, value: text };
    case 'number': {
      const n = Number(text.trim());
      return Number.isFinite(n) && (!row.integer || Number.isInteger(n))
        ? { ok: true, value: n }
        : { ok: false };
    }
    case 'boolean':
      return text.trim() === 'true' || text.trim() === 'false'
        ? { ok: true, value: text.trim() === 'true' }
        : { ok: false };
    default:
      try {
        const value: unknown = JSON.parse(text);
        if (row.kind === 'list' && !Array.isArray(value)) return { ok: false };
        if (row.kind === 'object' && !isRecord(value)) return { ok: false };
        return { ok: true, value };
      } catch {
        return row.kind === 'any' ? { ok: true, value: text } : { ok: false };
      }
  }
}

/** What is wrong with each row (by row key); empty when the table can become a schema. */
export function rowProblems(rows: readonly InputRow[]): Map<string, RowProblem[]> {
  const out = new Map<string, RowProblem[]>();
  const seen = new Set<string>();
  for (const row of rows) {
    const problems: RowProblem[] = [];
    if (!row.name) problems.push('name_empty');
    else if (!INPUT_NAME.test(row.name)) problems.push('name_invalid');
    else if (seen.has(row.name)) problems.push('name_duplicate');
    seen.add(row.name);
    if (!parseOptions(row).ok) problems.push('options_invalid');
    if (!parseExample(row).ok) problems.push('example_invalid');
    if (problems.length) out.set(row.key, problems);
  }
  return out;
}

/**
 * The input schema for the rows; top-level keywords of `base` other than `properties` and `required`
 * are kept. Rows must be free of problems (`rowProblems`).
 */
export function schemaOf(rows: readonly InputRow[], base?: unknown): Record<string, unknown> {
  const { properties: _p, required: _r, ...top } = isRecord(base) ? base : {};
  const properties: Record<string, unknown> = {};
  for (const row of rows) {
    const options = parseOptions(row);
    const example = parseExample(row);
    const { examples: moreExamples, type, format, ...rest } = row.rest;
    const first = example.ok ? example.value : undefined;
    const more = Array.isArray(moreExamples) ? moreExamples : [];
    // A kept `type` only stands for an input the table cannot name; a kept `format` only for text.
    properties[row.name] = {
      ...(row.kind === 'any' && type !== undefined ? { type } : typeFor(row)),
      ...((row.kind === 'text' || row.kind === 'any') && format !== undefined ? { format } : {}),
      ...(row.title.trim() ? { title: row.title.trim() } : {}),
      ...rest,
      ...(options.ok && options.value ? { enum: options.value } : {}),
      ...(first !== undefined ? { examples: [first, ...more] } : more.length ? { examples: more } : {}),
    };
  }
  const required = rows.filter((r) => r.required).map((r) => r.name);
  return { ...top, type: 'object', properties, ...(required.length ? { required } : {}) };
}

/** A fresh row with a free name (`input1`, `input2`…). */
export function newRow(rows: readonly InputRow[]): InputRow {
  const names = new Set(rows.map((r) => r.name));
  let n = rows.length + 1;
  while (names.has(`input${n}`)) n += 1;
  return {
    key: rowKey(),
    name: `input${n}`,
    title: '',
    kind: 'text',
    required: false,
    options: '',
    example: '',
    rest: {},
  };
}
