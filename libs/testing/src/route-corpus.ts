import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { RouteDef } from '@switchyard/contracts';

type JsonSchema = Record<string, unknown>;
type Path = ReadonlyArray<string | number>;

/** One hostile request and what the answer must name. */
export interface HostileRequest {
  readonly route: string;
  readonly method: RouteDef['method'];
  /** Path and query, already encoded. */
  readonly url: string;
  /** Raw JSON text (lone surrogates travel as `\ud800` escapes, as a hostile client sends them). */
  readonly body?: string;
  readonly what: 'NUL' | 'lone high surrogate' | 'lone low surrogate' | 'NUL in a key' | '3,000 levels';
  /** The error path the 400 must carry (for nesting: where the walk crossed the limit, under it). */
  readonly path: string;
}

const HOSTILE_TEXT = [
  ['NUL', 'bad\u0000text'],
  ['lone high surrogate', 'bad\ud800text'],
  ['lone low surrogate', '\udc00bad'],
] as const;
const DEEP_LEVELS = 3_000;
const DEEP = '__deep__';

function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): JsonSchema => (isRecord(v) ? v : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const typesOf = (s: JsonSchema): string[] =>
  typeof s['type'] === 'string' ? [s['type']] : arr(s['type']).map(String);
/** No type, no shape: the schema of a free JSON value (`z.unknown()`), where anything may go. */
const isFree = (s: JsonSchema): boolean =>
  !('type' in s) && !('anyOf' in s) && !('oneOf' in s) && !('enum' in s) && !('const' in s) && !('$ref' in s);

function sampleString(s: JsonSchema): string {
  if (s['format'] === 'uuid') return randomUUID();
  if (s['format'] === 'uri') return 'https://example.com/hook';
  const pattern = typeof s['pattern'] === 'string' ? new RegExp(s['pattern']) : undefined;
  const min = typeof s['minLength'] === 'number' ? s['minLength'] : 0;
  const fits = ['x', '1', 'a_1', 'ab', 'xyz12'].find((c) => c.length >= min && (!pattern || pattern.test(c)));
  return fits ?? 'x'.repeat(Math.max(1, min));
}

/** A small value of the schema's shape: required properties only, first alternatives, minimum items. */
function sample(s: JsonSchema): unknown {
  if ('const' in s) return s['const'];
  const e = arr(s['enum']);
  if (e.length) return e[0];
  const alternatives = arr(s['anyOf'] ?? s['oneOf']).map(obj);
  if (alternatives.length) return sample(alternatives.find((a) => !typesOf(a).includes('null')) ?? {});
  const type = typesOf(s).find((t) => t !== 'null');
  switch (type) {
    case 'string':
      return sampleString(s);
    case 'integer':
    case 'number':
      return typeof s['minimum'] === 'number'
        ? s['minimum']
        : typeof s['exclusiveMinimum'] === 'number'
          ? s['exclusiveMinimum'] + 1
          : 1;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: Number(s['minItems'] ?? 0) }, () => sample(obj(s['items'])));
    case 'object': {
      const props = obj(s['properties']);
      return Object.fromEntries(arr(s['required']).map((k) => [String(k), sample(obj(props[String(k)]))]));
    }
    default:
      return 'x';
  }
}

interface Slot {
  readonly path: Path;
  /** A string goes here (`text`), any JSON value (`free`), or this is a record whose keys are free. */
  readonly kind: 'text' | 'free' | 'record';
}

/** Every place in a schema where a string can be put, to the depth a body plausibly has. */
function slots(s: JsonSchema, path: Path = [], depth = 0): Slot[] {
  if (depth > 8 || '$ref' in s) return [];
  if (isFree(s)) return [{ path, kind: 'free' }];
  const out: Slot[] = [];
  for (const alt of arr(s['anyOf'] ?? s['oneOf']).map(obj)) out.push(...slots(alt, path, depth + 1));
  const types = typesOf(s);
  if (types.includes('string')) out.push({ path, kind: 'text' });
  if (types.includes('array')) out.push(...slots(obj(s['items']), [...path, 0], depth + 1));
  if (types.includes('object')) {
    for (const [k, v] of Object.entries(obj(s['properties'])))
      out.push(...slots(obj(v), [...path, k], depth + 1));
    const extra = s['additionalProperties'];
    if (extra !== undefined && extra !== false) {
      out.push({ path, kind: 'record' });
      out.push(...slots(obj(extra), [...path, 'k'], depth + 1));
    }
  }
  // One slot per path: an anyOf of two string shapes is one place.
  return out.filter(
    (slot, i) => out.findIndex((o) => o.path.join('.') === slot.path.join('.') && o.kind === slot.kind) === i,
  );
}

function setAt(base: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (typeof head === 'number') {
    const list: unknown[] = Array.isArray(base) ? [...base] : [];
    list[head] = setAt(list[head], rest, value);
    return list;
  }
  const record = isRecord(base) ? base : {};
  return { ...record, [String(head)]: setAt(record[String(head)], rest, value) };
}

const dotted = (where: string, path: Path) => [where, ...path.map(String)].join('.');

/**
 * Hostile requests for every route of the table, built from its own schemas: each string (or free
 * JSON) field of the body, every query and path parameter, gets NUL and lone surrogates in a
 * request that is otherwise minimal; each body also gets 3,000 levels of nesting and, where it has
 * a record, a key with NUL. The rest of the request is the schema's smallest shape, so the 400 has
 * nothing else to be about.
 */
export function hostileRequests(routes: Record<string, RouteDef>): HostileRequest[] {
  const out: HostileRequest[] = [];
  for (const [route, def] of Object.entries(routes)) {
    const paramNames = def.params ? Object.keys(obj(jsonSchemaOf(def.params)['properties'])) : [];
    const querySchema = def.query ? jsonSchemaOf(def.query) : undefined;
    const queryNames = Object.keys(obj(querySchema?.['properties']));
    const params = obj(def.params ? sample(jsonSchemaOf(def.params)) : {});
    const baseQuery = obj(querySchema ? sample(querySchema) : {});
    const url = (p: Record<string, unknown>, q: Record<string, unknown>): string => {
      const path = def.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(p[name])));
      const search = new URLSearchParams(
        Object.entries(q).map(([k, v]): [string, string] => [k, String(v)]),
      ).toString();
      return search ? `${path}?${search}` : path;
    };
    const bodySchema = def.body ? jsonSchemaOf(def.body) : undefined;
    // A free body is still a JSON object: the body parser takes nothing else.
    const baseBody = bodySchema ? (isFree(bodySchema) ? {} : sample(bodySchema)) : undefined;
    const body = (b: unknown) => (b === undefined ? {} : { body: JSON.stringify(b) });
    const base = { route, method: def.method };

    // A URL carries text only as UTF-8, where a lone surrogate cannot be written: NUL is the probe.
    for (const name of paramNames)
      out.push({
        ...base,
        url: url({ ...params, [name]: 'bad\u0000' }, baseQuery),
        ...body(baseBody),
        what: 'NUL',
        path: `params.${name}`,
      });
    for (const name of queryNames)
      out.push({
        ...base,
        url: url(params, { ...baseQuery, [name]: 'bad\u0000' }),
        ...body(baseBody),
        what: 'NUL',
        path: `query.${name}`,
      });
    if (!bodySchema) continue;
    const where = slots(bodySchema);
    for (const slot of where.filter((s) => s.kind !== 'record'))
      for (const [what, text] of HOSTILE_TEXT)
        out.push({
          ...base,
          url: url(params, baseQuery),
          body: JSON.stringify(setAt(baseBody, slot.path, text)),
          what,
          path: dotted('body', slot.path),
        });
    for (const slot of where.filter((s) => s.kind === 'record'))
      out.push({
        ...base,
        url: url(params, baseQuery),
        body: JSON.stringify(setAt(baseBody, slot.path, { 'k\u0000': 1 })),
        what: 'NUL in a key',
        path: dotted('body', [...slot.path, 'k\\u0000']),
      });
    const deepAt = where.find((s) => s.kind === 'free') ?? where.find((s) => s.kind === 'text');
    if (deepAt)
      out.push({
        ...base,
        url: url(params, baseQuery),
        body: JSON.stringify(setAt(baseBody, deepAt.path, DEEP)).replace(
          JSON.stringify(DEEP),
          '['.repeat(DEEP_LEVELS) + ']'.repeat(DEEP_LEVELS),
        ),
        what: '3,000 levels',
        path: dotted('body', deepAt.path),
      });
  }
  return out;
}
