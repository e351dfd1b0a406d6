import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { isRecord, type FieldIssue, type PlanIssue } from '@switchyard/contracts';
import { forbidsCodegen } from './codegen';

type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null';
const JSON_TYPES: readonly string[] = ['string', 'number', 'integer', 'boolean', 'object', 'array', 'null'];

/** The names an input schema declares: what `{{inputs.x}}` may refer to. */
export function inputNamesOf(schema: Record<string, unknown>): string[] {
  return isRecord(schema['properties']) ? Object.keys(schema['properties']) : [];
}

function typeOf(value: unknown): JsonType | 'undefined' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  return typeof value === 'object' ? 'object' : 'undefined';
}

function matches(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  if (type === 'number') return actual === 'number' || actual === 'integer';
  return actual === type;
}

function describe(value: unknown): string {
  const t = typeOf(value);
  return t === 'integer' ? 'number' : t;
}

/**
 * Checks run inputs against the basics of their JSON Schema: every required field is present, and
 * every declared field that is present has one of its `type`s and, with an `enum`, one of its values.
 * Lists every problem (`inputs.<name>`); inputs the schema does not declare are allowed.
 */
export function checkInputs(schema: Record<string, unknown>, inputs: Record<string, unknown>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required'])
    ? schema['required'].filter((r): r is string => typeof r === 'string')
    : [];
  for (const name of required) {
    if (inputs[name] === undefined) issues.push({ path: `inputs.${name}`, message: 'required' });
  }
  for (const [name, prop] of Object.entries(properties)) {
    const value = inputs[name];
    if (value === undefined || !isRecord(prop)) continue;
    const declared = prop['type'];
    const types = (Array.isArray(declared) ? declared : declared === undefined ? [] : [declared]).filter(
      (t): t is string => typeof t === 'string' && JSON_TYPES.includes(t),
    );
    if (types.length && !types.some((t) => matches(value, t))) {
      issues.push({
        path: `inputs.${name}`,
        message: `expected ${types.join(' or ')}, got ${describe(value)}`,
      });
      continue;
    }
    const allowed = prop['enum'];
    if (Array.isArray(allowed) && !allowed.some((a) => JSON.stringify(a) === JSON.stringify(value))) {
      issues.push({
        path: `inputs.${name}`,
        message: `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
      });
    }
  }
  return issues;
}

// Its own instance: schemas compiled here are dropped again, and never meet the tools' schemas.
const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));

/** An input schema must compile (as a JSON Schema) before a workflow can be saved with it. */
export function checkInputSchema(schema: Record<string, unknown>): PlanIssue[] {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  try {
    ajv.compile(rest);
    return [];
  } catch (err) {
    // Under a no-eval policy (the browser) the schema cannot be tried here; the server tries it.
    if (forbidsCodegen(err)) return [];
    return [
      {
        path: '$.inputSchema',
        code: 'invalid',
        message: `not a usable JSON Schema: ${(err as Error).message}`,
      },
    ];
  } finally {
    ajv.removeSchema(rest);
  }
}
