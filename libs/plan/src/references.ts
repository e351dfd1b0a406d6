/**
 * Step-result and input references inside plan arguments.
 *
 *   {{steps.N.result<path>}}   N = 0-based position of a step in the plan
 *   {{last.result<path>}}      the step right before this one
 *   {{node.<id>.result<path>}} a step by id
 *   {{inputs.<name><path>}}    a run input
 *
 * <path> is any number of `.name` or `[index]` parts. Pure functions: the browser's canvas and the
 * executor use the same code.
 */

export type PathPart = string | number;

export type ReferenceRoot =
  | { readonly kind: 'step'; readonly index: number }
  | { readonly kind: 'last' }
  | { readonly kind: 'node'; readonly id: string }
  | { readonly kind: 'input'; readonly name: string };

export interface Reference {
  /** The placeholder as written, braces included. */
  readonly raw: string;
  readonly root: ReferenceRoot;
  readonly path: PathPart[];
}

export type ParsedPlaceholder =
  | { readonly ok: true; readonly ref: Reference }
  | { readonly ok: false; readonly raw: string; readonly error: string };

const PLACEHOLDER = /\{\{(.*?)\}\}/gs;
const IDENT = '[A-Za-z_][A-Za-z0-9_-]*';
const PATH = `((?:\\.${IDENT}|\\[\\d+\\])*)`;
const FORMS: Array<[RegExp, (m: RegExpExecArray) => ReferenceRoot]> = [
  [new RegExp(`^steps\\.(\\d+)\\.result${PATH}$`), (m) => ({ kind: 'step', index: Number(m[1]) })],
  [new RegExp(`^last\\.result${PATH}$`), () => ({ kind: 'last' })],
  [
    new RegExp(`^node\\.([A-Za-z0-9_-]{1,64})\\.result${PATH}$`),
    (m) => ({ kind: 'node', id: m[1] as string }),
  ],
  [new RegExp(`^inputs\\.(${IDENT})${PATH}$`), (m) => ({ kind: 'input', name: m[1] as string })],
];

function parsePath(text: string): PathPart[] {
  const parts: PathPart[] = [];
  for (const m of text.matchAll(/\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]/g))
    parts.push(m[1] !== undefined ? m[1] : Number(m[2]));
  return parts;
}

export function parsePlaceholder(raw: string): ParsedPlaceholder {
  const inner = raw.slice(2, -2).trim();
  for (const [pattern, root] of FORMS) {
    const m = pattern.exec(inner);
    if (m) return { ok: true, ref: { raw, root: root(m), path: parsePath(m[m.length - 1] ?? '') } };
  }
  return {
    ok: false,
    raw,
    error: `${raw} is not a reference; use {{steps.N.result…}}, {{last.result…}}, {{node.<id>.result…}} or {{inputs.<name>…}}`,
  };
}

/** Every placeholder in a string, in order, plus unbalanced braces reported as malformed. */
export function placeholdersIn(text: string): ParsedPlaceholder[] {
  const found: ParsedPlaceholder[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) found.push(parsePlaceholder(m[0]));
  const stripped = text.replace(PLACEHOLDER, '');
  if (stripped.includes('{{') || stripped.includes('}}')) {
    found.push({
      ok: false,
      raw: text.length > 80 ? `${text.slice(0, 77)}...` : text,
      error: 'unbalanced {{ }} in a value',
    });
  }
  return found;
}

/** The string is exactly one placeholder (surrounding spaces allowed): its value keeps its JSON type. */
export function exactPlaceholder(text: string): ParsedPlaceholder | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{{') || !trimmed.endsWith('}}')) return undefined;
  const all = [...trimmed.matchAll(PLACEHOLDER)];
  return all.length === 1 && all[0]?.[0] === trimmed ? parsePlaceholder(trimmed) : undefined;
}

/** Visits every string in a JSON value with its JSON path (`$.a.b[0]`). */
export function walkStrings(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') visit(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => walkStrings(v, `${path}[${i}]`, visit));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>))
      walkStrings(v, jsonPath(path, k), visit);
  }
}

export function jsonPath(base: string, key: string): string {
  return /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

export function describeRoot(root: ReferenceRoot): string {
  switch (root.kind) {
    case 'step':
      return `steps.${root.index}`;
    case 'last':
      return 'last';
    case 'node':
      return `node.${root.id}`;
    case 'input':
      return `inputs.${root.name}`;
  }
}
