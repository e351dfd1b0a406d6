import { z } from 'zod';
import type { FieldIssue } from './errors';

/**
 * Elicitation: an MCP server asks the person behind a tool call for input (`elicitation/create`)
 * while the call waits. The registry attributes the request to the call, the executor shows it
 * where the person is (a run's step, a chat's call) and waits; the answer (accept with content,
 * decline, cancel) goes back to the server. Browser-safe: the web form and the server check an
 * answer with the same code (no Ajv: it cannot run under the page's CSP).
 */

/** At most this many input requests per tool call; more are declined (each may wait its timeout). */
export const MAX_INPUTS_PER_CALL = 5;

/** Who a tool call is for, so a server's input request during it reaches them. Set by the executor only. */
export const InputAsker = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('run'), runId: z.string().uuid(), stepId: z.string().min(1).max(64) }),
  z.object({ kind: z.literal('chat'), sessionId: z.string().uuid(), callId: z.string().min(1).max(200) }),
]);
export type InputAsker = z.infer<typeof InputAsker>;

const described = {
  title: z.string().max(500).optional(),
  description: z.string().max(5_000).optional(),
};
const Choice = z.object({ const: z.string().max(1_000), title: z.string().max(1_000) });

/**
 * One field of a requested schema: the restricted JSON Schema of the MCP spec (2025-06-18, with
 * SEP-1330's enum forms of 2025-11-25): strings (length, format), numbers and integers (range),
 * booleans, single-select enums (`enum`, `enum` + `enumNames`, `oneOf` of `const`/`title`) and
 * multi-select arrays (`items.enum` or `items.anyOf` of `const`/`title`).
 */
export const ElicitationField = z.union([
  z.object({
    type: z.literal('string'),
    ...described,
    minLength: z.number().int().min(0).optional(),
    maxLength: z.number().int().min(0).optional(),
    format: z.enum(['email', 'uri', 'date', 'date-time']).optional(),
    enum: z.array(z.string().max(1_000)).max(500).optional(),
    enumNames: z.array(z.string().max(1_000)).max(500).optional(),
    oneOf: z.array(Choice).max(500).optional(),
    default: z.string().max(10_000).optional(),
  }),
  z.object({
    type: z.enum(['number', 'integer']),
    ...described,
    minimum: z.number().optional(),
    maximum: z.number().optional(),
    default: z.number().optional(),
  }),
  z.object({ type: z.literal('boolean'), ...described, default: z.boolean().optional() }),
  z.object({
    type: z.literal('array'),
    ...described,
    minItems: z.number().int().min(0).optional(),
    maxItems: z.number().int().min(0).optional(),
    items: z.union([
      z.object({ type: z.literal('string'), enum: z.array(z.string().max(1_000)).max(500) }),
      z.object({ anyOf: z.array(Choice).max(500) }),
    ]),
    default: z.array(z.string().max(1_000)).max(500).optional(),
  }),
]);
export type ElicitationField = z.infer<typeof ElicitationField>;

export const RequestedSchema = z.object({
  type: z.literal('object'),
  properties: z.record(z.string().min(1).max(100), ElicitationField),
  required: z.array(z.string().max(100)).optional(),
});
export type RequestedSchema = z.infer<typeof RequestedSchema>;

export const ElicitationMode = z.enum(['form', 'url']);
export type ElicitationMode = z.infer<typeof ElicitationMode>;

/** What the server asked, as the platform keeps it. URL mode: a link for the person, never fetched here. */
export const ElicitationParams = z.discriminatedUnion('mode', [
  z.object({
    mode: z.literal('form'),
    message: z.string().max(10_000),
    requestedSchema: RequestedSchema,
  }),
  z.object({
    mode: z.literal('url'),
    message: z.string().max(10_000),
    url: z
      .string()
      .max(4_000)
      .refine((u) => /^https?:\/\//i.test(u) && URL.canParse(u), 'must be an http(s) URL'),
    elicitationId: z.string().max(500),
  }),
]);
export type ElicitationParams = z.infer<typeof ElicitationParams>;

export const ElicitationAction = z.enum(['accept', 'decline', 'cancel']);
export type ElicitationAction = z.infer<typeof ElicitationAction>;

/** An answer's values: what the MCP spec allows in `content` (strings, numbers, booleans, string lists). */
export const ElicitationValue = z.union([
  z.string().max(10_000),
  z.number(),
  z.boolean(),
  z.array(z.string().max(1_000)).max(500),
]);
export type ElicitationValue = z.infer<typeof ElicitationValue>;
export const ElicitationContent = z.record(z.string().max(100), ElicitationValue);
export type ElicitationContent = z.infer<typeof ElicitationContent>;

/** What goes back to the server. */
export const ElicitationReply = z.object({
  action: ElicitationAction,
  content: ElicitationContent.optional(),
});
export type ElicitationReply = z.infer<typeof ElicitationReply>;

/** The answer a person (or a script acting for them) sends. */
export const InputAnswerBody = z
  .object({
    action: ElicitationAction.describe(
      'accept: submit (form: with content); decline: refuse what is asked; cancel: dismiss without choosing',
    ),
    content: ElicitationContent.optional().describe(
      'accept in form mode: the values by field name; a field left out takes its default (as the form shows it)',
    ),
  })
  .strict()
  .refine((b) => b.action === 'accept' || b.content === undefined, {
    message: 'content goes only with accept',
    path: ['content'],
  });
export type InputAnswerBody = z.infer<typeof InputAnswerBody>;

/** Who settled a request: the person, or the platform (unattended, timeout, cancelled, a limit). */
export const InputAnsweredBy = z.enum(['person', 'platform']);
export type InputAnsweredBy = z.infer<typeof InputAnsweredBy>;

/**
 * The registry → the replica driving the run or chat (on its control subject): a server asked for
 * input during the call `invocationId`. Answered with an ElicitationReply once it is settled.
 */
export const ElicitationAsk = z.object({
  action: z.literal('elicit'),
  invocationId: z.string().min(1).max(100),
  asker: InputAsker,
  /** The owner the call was made for (its caller's): must be the run's or chat's owner. */
  ownerId: z.string().uuid().optional(),
  /** The catalog name of the tool being called. */
  tool: z.string().max(300),
  /** The MCP record (or server) that asks. */
  server: z.string().max(300),
  request: ElicitationParams,
});
export type ElicitationAsk = z.infer<typeof ElicitationAsk>;

/** The answer RPC → the replica holding the wait (content checked and defaults applied already). */
export const InputAnswerControl = z.object({
  action: z.literal('input'),
  elicitationId: z.string().uuid(),
  reply: ElicitationReply,
  answeredBy: z.string().uuid().optional(),
});
export type InputAnswerControl = z.infer<typeof InputAnswerControl>;

export const InputRequestStatus = z.enum(['pending', 'accepted', 'declined', 'cancelled']);
export type InputRequestStatus = z.infer<typeof InputRequestStatus>;

/** One input request as the person (and the API) sees it. */
export const InputRequest = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  status: InputRequestStatus,
  runId: z.string().uuid().nullable(),
  stepId: z.string().nullable(),
  sessionId: z.string().uuid().nullable(),
  callId: z.string().nullable(),
  label: z.string().describe("the run's goal or the chat's title"),
  tool: z.string(),
  server: z.string().describe('the MCP record that asks'),
  mode: ElicitationMode,
  message: z.string(),
  requestedSchema: RequestedSchema.nullable().describe('form mode: the fields asked for'),
  url: z
    .string()
    .nullable()
    .describe('url mode: the page for the person to open (the platform never fetches it)'),
  content: ElicitationContent.nullable().describe('what was accepted'),
  reason: z.string().nullable().describe('why the platform settled it (unattended, timeout, cancelled…)'),
  answeredBy: InputAnsweredBy.nullable(),
  createdAt: z.string(),
  expiresAt: z.string().describe('when the wait ends with cancel if nobody answers'),
  answeredAt: z.string().nullable(),
});
export type InputRequest = z.infer<typeof InputRequest>;

export const InputRequestList = z.object({ items: z.array(InputRequest) });
export type InputRequestList = z.infer<typeof InputRequestList>;

export const InputRequestListQuery = z
  .object({
    runId: z.string().uuid().optional().describe('only this run'),
    sessionId: z.string().uuid().optional().describe('only this chat'),
  })
  .strict();
export type InputRequestListQuery = z.infer<typeof InputRequestListQuery>;

export const InputRequestParam = z.object({ id: z.string().uuid() });

export const InputAnswerReply = z.object({ id: z.string().uuid(), status: InputRequestStatus });
export type InputAnswerReply = z.infer<typeof InputAnswerReply>;

// ---- the form: fields as a page shows them, and the check of an answer -----------------------

export interface FieldOption {
  readonly value: string;
  readonly label: string;
}

/** One field of a requested schema, as a form renders it. */
export type FormField =
  | {
      readonly kind: 'text';
      readonly name: string;
      readonly label: string;
      readonly description?: string;
      readonly required: boolean;
      readonly default?: string;
      readonly format?: 'email' | 'uri' | 'date' | 'date-time';
      readonly minLength?: number;
      readonly maxLength?: number;
    }
  | {
      readonly kind: 'number';
      readonly name: string;
      readonly label: string;
      readonly description?: string;
      readonly required: boolean;
      readonly integer: boolean;
      readonly default?: number;
      readonly minimum?: number;
      readonly maximum?: number;
    }
  | {
      readonly kind: 'boolean';
      readonly name: string;
      readonly label: string;
      readonly description?: string;
      readonly required: boolean;
      readonly default?: boolean;
    }
  | {
      readonly kind: 'select';
      readonly name: string;
      readonly label: string;
      readonly description?: string;
      readonly required: boolean;
      readonly options: readonly FieldOption[];
      readonly default?: string;
    }
  | {
      readonly kind: 'multiselect';
      readonly name: string;
      readonly label: string;
      readonly description?: string;
      readonly required: boolean;
      readonly options: readonly FieldOption[];
      readonly default?: readonly string[];
      readonly minItems?: number;
      readonly maxItems?: number;
    };

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/**
 * The fields of a requested schema, in the schema's order, or in `order` (the field names as the
 * server gave them: a schema read back from a jsonb column has its keys sorted).
 */
export function formFields(schema: RequestedSchema, order?: readonly string[]): FormField[] {
  const required = new Set(schema.required ?? []);
  const rank = new Map((order ?? []).map((name, i) => [name, i]));
  const entries = Object.entries(schema.properties);
  if (rank.size)
    entries.sort(
      ([a], [b]) => (rank.get(a) ?? Number.MAX_SAFE_INTEGER) - (rank.get(b) ?? Number.MAX_SAFE_INTEGER),
    );
  return entries.map(([name, f]): FormField => {
    const base = {
      name,
      label: f.title || name,
      required: required.has(name),
      ...opt('description', f.description),
    };
    switch (f.type) {
      case 'string': {
        const options: FieldOption[] | undefined = f.oneOf
          ? f.oneOf.map((c) => ({ value: c.const, label: c.title || c.const }))
          : f.enum?.map((v, i) => ({ value: v, label: f.enumNames?.[i] || v }));
        if (options) return { kind: 'select', ...base, options, ...opt('default', f.default) };
        return {
          kind: 'text',
          ...base,
          ...opt('default', f.default),
          ...opt('format', f.format),
          ...opt('minLength', f.minLength),
          ...opt('maxLength', f.maxLength),
        };
      }
      case 'number':
      case 'integer':
        return {
          kind: 'number',
          ...base,
          integer: f.type === 'integer',
          ...opt('default', f.default),
          ...opt('minimum', f.minimum),
          ...opt('maximum', f.maximum),
        };
      case 'boolean':
        return { kind: 'boolean', ...base, ...opt('default', f.default) };
      case 'array': {
        const options: FieldOption[] =
          'anyOf' in f.items
            ? f.items.anyOf.map((c) => ({ value: c.const, label: c.title || c.const }))
            : f.items.enum.map((v) => ({ value: v, label: v }));
        return {
          kind: 'multiselect',
          ...base,
          options,
          ...opt('default', f.default),
          ...opt('minItems', f.minItems),
          ...opt('maxItems', f.maxItems),
        };
      }
    }
  });
}

/** The values a form starts with: each field's default (the spec's SEP-1034), nothing else. */
export function formDefaults(schema: RequestedSchema): ElicitationContent {
  const values: ElicitationContent = {};
  for (const f of formFields(schema)) if (f.default !== undefined) values[f.name] = copy(f.default);
  return values;
}

const copy = (v: string | number | boolean | readonly string[]): ElicitationValue =>
  Array.isArray(v) ? [...(v as readonly string[])] : (v as string | number | boolean);

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

function validDate(value: string): boolean {
  const m = DATE.exec(value);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const count = (s: string) => [...s].length;

/** Why a value does not fit its field: structured, so a page can say it in the person's language. */
export type FieldProblem =
  | {
      readonly kind:
        'required' | 'unknown' | 'text' | 'number' | 'integer' | 'boolean' | 'list' | 'duplicate';
    }
  | {
      readonly kind: 'minLength' | 'maxLength' | 'minimum' | 'maximum' | 'minItems' | 'maxItems';
      readonly limit: number;
    }
  | { readonly kind: 'format'; readonly format: 'email' | 'uri' | 'date' | 'date-time' }
  | { readonly kind: 'choice'; readonly choices: readonly string[] }
  | { readonly kind: 'notChoice'; readonly values: readonly string[] };

function formatProblem(format: 'email' | 'uri' | 'date' | 'date-time', value: string): boolean {
  switch (format) {
    case 'email':
      return !EMAIL.test(value);
    case 'uri':
      return !(/^[A-Za-z][A-Za-z0-9+.-]*:/.test(value) && URL.canParse(value));
    case 'date':
      return !validDate(value);
    case 'date-time':
      return !(DATE_TIME.test(value) && validDate(value.slice(0, 10)) && !Number.isNaN(Date.parse(value)));
  }
}

/** Why `value` does not fit `field`, or undefined when it does. */
export function fieldProblem(field: FormField, value: ElicitationValue): FieldProblem | undefined {
  switch (field.kind) {
    case 'text': {
      if (typeof value !== 'string') return { kind: 'text' };
      if (field.minLength !== undefined && count(value) < field.minLength)
        return { kind: 'minLength', limit: field.minLength };
      if (field.maxLength !== undefined && count(value) > field.maxLength)
        return { kind: 'maxLength', limit: field.maxLength };
      return field.format && formatProblem(field.format, value)
        ? { kind: 'format', format: field.format }
        : undefined;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) return { kind: 'number' };
      if (field.integer && !Number.isInteger(value)) return { kind: 'integer' };
      if (field.minimum !== undefined && value < field.minimum)
        return { kind: 'minimum', limit: field.minimum };
      if (field.maximum !== undefined && value > field.maximum)
        return { kind: 'maximum', limit: field.maximum };
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : { kind: 'boolean' };
    case 'select':
      return typeof value === 'string' && field.options.some((o) => o.value === value)
        ? undefined
        : { kind: 'choice', choices: field.options.map((o) => o.value) };
    case 'multiselect': {
      if (!Array.isArray(value)) return { kind: 'list' };
      const bad = value.filter((v) => !field.options.some((o) => o.value === v));
      if (bad.length) return { kind: 'notChoice', values: bad };
      if (new Set(value).size !== value.length) return { kind: 'duplicate' };
      if (field.minItems !== undefined && value.length < field.minItems)
        return { kind: 'minItems', limit: field.minItems };
      if (field.maxItems !== undefined && value.length > field.maxItems)
        return { kind: 'maxItems', limit: field.maxItems };
      return undefined;
    }
  }
}

const FORMAT_TEXT = {
  email: 'must be an email address',
  uri: 'must be an absolute URI (such as https://example.com/page)',
  date: 'must be a date as YYYY-MM-DD',
  'date-time': 'must be a date and time as RFC 3339 (such as 2026-01-31T09:30:00Z)',
} as const;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** A problem as the API says it. */
export function problemText(p: FieldProblem): string {
  switch (p.kind) {
    case 'required':
      return 'is required';
    case 'unknown':
      return 'is not a field of this form';
    case 'text':
      return 'must be text';
    case 'number':
      return 'must be a number';
    case 'integer':
      return 'must be a whole number';
    case 'boolean':
      return 'must be true or false';
    case 'list':
      return 'must be a list of choices';
    case 'duplicate':
      return 'must not list a choice twice';
    case 'minLength':
      return `must be at least ${plural(p.limit, 'character')}`;
    case 'maxLength':
      return `must be at most ${plural(p.limit, 'character')}`;
    case 'minimum':
      return `must be at least ${p.limit}`;
    case 'maximum':
      return `must be at most ${p.limit}`;
    case 'minItems':
      return `must have at least ${plural(p.limit, 'choice')}`;
    case 'maxItems':
      return `must have at most ${plural(p.limit, 'choice')}`;
    case 'format':
      return FORMAT_TEXT[p.format];
    case 'choice':
      return `must be one of ${p.choices.map((c) => JSON.stringify(c)).join(', ')}`;
    case 'notChoice':
      return `${p.values.map((v) => JSON.stringify(v)).join(', ')} is not one of the choices`;
  }
}

/**
 * Checks an accepted answer against the requested schema: fields left out take their defaults,
 * then every required field must be there and every value must fit its field. Issues name the field
 * as `content.<name>`; `content` is what goes to the server when there are none.
 */
export function checkElicitationContent(
  schema: RequestedSchema,
  given: ElicitationContent | undefined,
): { content: ElicitationContent; issues: FieldIssue[] } {
  const fields = formFields(schema);
  const byName = new Map(fields.map((f) => [f.name, f]));
  const content: ElicitationContent = {};
  const issues: FieldIssue[] = [];
  for (const [name, value] of Object.entries(given ?? {})) {
    if (!byName.has(name))
      issues.push({ path: `content.${name}`, message: problemText({ kind: 'unknown' }) });
    else content[name] = value;
  }
  for (const f of fields) {
    const value = content[f.name] ?? (f.default === undefined ? undefined : copy(f.default));
    if (value === undefined) {
      if (f.required) issues.push({ path: `content.${f.name}`, message: problemText({ kind: 'required' }) });
      continue;
    }
    content[f.name] = value;
    const problem = fieldProblem(f, value);
    if (problem) issues.push({ path: `content.${f.name}`, message: problemText(problem) });
  }
  return { content, issues };
}
