import {
  isRecord,
  type FieldIssue,
  type FileGrantRequest,
  type InputEnumSource,
} from '@switchyard/contracts';
import { checkInputs, fileInputsOf, filePlaceholder } from '@switchyard/plan';
import { portTypeOf } from './types';

/**
 * How one workflow input is typed in the run dialog. `file`: a workspace path typed in; `upload`
 * (`format: "switchyard-file"`): a file uploaded here and granted to the run; `directory`
 * (`x-switchyard-auto: shared-directory`): made by the run, nothing to fill; `choice`
 * (`x-switchyard-enum`): a dropdown its list tool fills.
 */
export type InputFieldKind =
  'text' | 'number' | 'boolean' | 'enum' | 'list' | 'object' | 'file' | 'upload' | 'directory' | 'choice';

export interface InputField {
  readonly name: string;
  /** The schema's `title`, else the name. */
  readonly label: string;
  readonly description?: string;
  readonly required: boolean;
  readonly kind: InputFieldKind;
  /** An `enum`'s values, in order (chosen by index: values need not be strings). */
  readonly options?: readonly unknown[];
  /** The schema's example, as text for the placeholder. */
  readonly placeholder?: string;
  /** A `choice`'s list tool. */
  readonly source?: InputEnumSource;
  /** A text whose default or example spans lines: a text area (a one-line input drops line breaks). */
  readonly multiline?: boolean;
}

/** What the person typed: text for every field, a boolean for a checkbox. */
export type RawValues = Record<string, string | boolean>;

function asText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function kindOf(schema: Record<string, unknown>): InputFieldKind {
  if (Array.isArray(schema['enum']) && schema['enum'].length) return 'enum';
  const port = portTypeOf(schema);
  switch (port) {
    case 'number':
    case 'boolean':
    case 'object':
    case 'list':
    case 'file':
    case 'text':
      return port;
    default:
      return 'text';
  }
}

/** The fields of the run form, in the schema's order. */
export function inputFieldsOf(schema: Record<string, unknown>): InputField[] {
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const special = fileInputsOf(schema);
  const shared = new Set(special.sharedDirectories);
  const pickers = new Set(special.pickers);
  const required = new Set(
    Array.isArray(schema['required']) ? schema['required'].filter((r) => typeof r === 'string') : [],
  );
  return Object.entries(properties).map(([name, raw]) => {
    const prop = isRecord(raw) ? raw : {};
    const example = Array.isArray(prop['examples']) ? prop['examples'][0] : prop['example'];
    const title = typeof prop['title'] === 'string' && prop['title'].trim() ? prop['title'] : name;
    const source = special.enums.get(name);
    const spansLines = [prop['default'], example].some((v) => typeof v === 'string' && v.includes('\n'));
    const kind: InputFieldKind = shared.has(name)
      ? 'directory'
      : pickers.has(name)
        ? 'upload'
        : source
          ? 'choice'
          : kindOf(prop);
    return {
      name,
      label: title,
      required: required.has(name),
      kind,
      ...(typeof prop['description'] === 'string' && prop['description']
        ? { description: prop['description'] }
        : {}),
      ...(kind === 'enum' ? { options: prop['enum'] as unknown[] } : {}),
      ...(kind === 'choice' && source ? { source } : {}),
      ...(example !== undefined ? { placeholder: asText(example) } : {}),
      ...(kind === 'text' && spansLines ? { multiline: true } : {}),
    };
  });
}

/** The form's first values: each input's `default`, else empty (a checkbox: unticked). */
export function initialValues(schema: Record<string, unknown>, fields: readonly InputField[]): RawValues {
  const properties = isRecord(schema['properties']) ? schema['properties'] : {};
  const values: RawValues = {};
  for (const f of fields) {
    const prop = properties[f.name];
    const given = isRecord(prop) ? prop['default'] : undefined;
    if (f.kind === 'boolean') values[f.name] = given === true;
    else if (f.kind === 'upload' || f.kind === 'directory') values[f.name] = '';
    else if (f.kind === 'choice') values[f.name] = given === undefined ? '' : JSON.stringify(given);
    else if (f.kind === 'enum') {
      const i =
        given === undefined
          ? -1
          : (f.options ?? []).findIndex((o) => JSON.stringify(o) === JSON.stringify(given));
      values[f.name] = i >= 0 ? String(i) : '';
    } else if (f.kind === 'list' || f.kind === 'object')
      values[f.name] = given === undefined ? '' : JSON.stringify(given, null, 2);
    else values[f.name] = asText(given);
  }
  return values;
}

export type FormIssueKind = 'required' | 'notNumber' | 'notJson' | 'server';

/** One problem with one field: `required` and the parse problems are said by the dialog, others as the checker said them. */
export interface FormIssue {
  readonly name: string;
  readonly kind: FormIssueKind;
  readonly message: string;
}

/**
 * The inputs the form stands for, and what is wrong with them: the text parsed per field (empty =
 * not given), then the server's own checks (`checkInputs`: required, types, enums), so the dialog
 * refuses exactly what the server would.
 */
export function readInputs(
  schema: Record<string, unknown>,
  fields: readonly InputField[],
  raw: RawValues,
): { inputs: Record<string, unknown>; issues: FormIssue[] } {
  const inputs: Record<string, unknown> = {};
  const issues: FormIssue[] = [];
  const unreadable = new Set<string>();
  for (const f of fields) {
    const value = raw[f.name];
    if (typeof value === 'boolean') {
      inputs[f.name] = value;
      continue;
    }
    const text = value ?? '';
    // The run fills these (a granted upload, its own directory): the server takes the placeholder.
    if (f.kind === 'directory' || (f.kind === 'upload' && text !== '')) {
      inputs[f.name] = filePlaceholder(f.name);
      continue;
    }
    if (f.kind === 'upload') continue;
    if (f.kind === 'choice') {
      if (text !== '') inputs[f.name] = JSON.parse(text) as unknown;
      continue;
    }
    if (f.kind === 'enum') {
      if (text !== '') inputs[f.name] = f.options?.[Number(text)];
      continue;
    }
    if (!text.trim()) continue;
    if (f.kind === 'number') {
      const n = Number(text.trim());
      if (Number.isFinite(n)) inputs[f.name] = n;
      else {
        unreadable.add(f.name);
        issues.push({ name: f.name, kind: 'notNumber', message: 'not a number' });
      }
    } else if (f.kind === 'list' || f.kind === 'object') {
      try {
        inputs[f.name] = JSON.parse(text) as unknown;
      } catch (err) {
        unreadable.add(f.name);
        issues.push({ name: f.name, kind: 'notJson', message: (err as Error).message });
      }
    } else inputs[f.name] = text;
  }
  for (const issue of checkInputs(schema, inputs)) {
    const name = fieldOf(issue);
    // A field that did not parse is already said; "required" would be a second, wrong reason.
    if (unreadable.has(name)) continue;
    issues.push({ name, kind: issue.message === 'required' ? 'required' : 'server', message: issue.message });
  }
  return { inputs, issues };
}

function fieldOf(issue: FieldIssue): string {
  return issue.path.replace(/^inputs\./, '').split('.')[0] ?? issue.path;
}

/**
 * The file grants the form stands for: each `upload` field with an uploaded file (its value is the
 * file's id) is a grant of that file under the input's name. Shared directories the server adds.
 */
export function fileGrantsOf(fields: readonly InputField[], raw: RawValues): FileGrantRequest[] {
  return fields.flatMap((f) => {
    const id = raw[f.name];
    return f.kind === 'upload' && typeof id === 'string' && id !== '' ? [{ name: f.name, refs: [id] }] : [];
  });
}
