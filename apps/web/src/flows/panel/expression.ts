import { parsePlaceholder, placeholdersIn, type PathPart } from '@switchyard/plan';
import type { FieldNode, PortType, RefSource } from '../types';

/**
 * The pure half of the expression editor: what to offer at the cursor inside `{{…}}`, and which
 * references in a template are malformed or point at nothing the node can see. Sources are the same
 * trees the reference picker shows (`sourcesFor`), so both agree on what exists.
 */

export interface CompletionOption {
  /** The reference body, e.g. `node.fetch.result.items[0]`. */
  readonly label: string;
  readonly type: PortType;
  readonly source: RefSource;
  readonly path: readonly PathPart[];
}

export interface Completion {
  /** The text in [from, to) is replaced by the option's label followed by `}}` when not already there. */
  readonly from: number;
  readonly to: number;
  /** Whether `}}` must be added after the label. */
  readonly close: boolean;
  readonly options: readonly CompletionOption[];
}

const MAX_OPTIONS = 50;

function tail(path: readonly PathPart[]): string {
  return path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
}

function baseOf(source: RefSource): string {
  return source.kind === 'input' ? `inputs.${source.id}` : `node.${source.id}.result`;
}

interface Candidate extends CompletionOption {
  /** Where the last path part starts in the label (0 for the source itself). */
  readonly boundary: number;
}

function candidates(sources: readonly RefSource[]): Candidate[] {
  const out: Candidate[] = [];
  const walk = (source: RefSource, field: FieldNode, base: string) => {
    const path = field.path;
    const label = base + tail(path);
    const boundary = path.length ? base.length + tail(path.slice(0, -1)).length : 0;
    out.push({ label, type: field.type, source, path, boundary });
    for (const c of field.children) walk(source, c, base);
  };
  for (const s of sources) walk(s, s.root, baseOf(s));
  return out;
}

/**
 * The completions at `cursor` when it sits inside an open `{{`: every reference one level deeper than
 * what is typed (`{{` → inputs and nodes; `{{node.a.result.` → a's top fields), filtered by the prefix.
 * Undefined outside a placeholder.
 */
export function completionsAt(
  text: string,
  cursor: number,
  sources: readonly RefSource[],
): Completion | undefined {
  const before = text.slice(0, cursor);
  const open = before.lastIndexOf('{{');
  if (open < 0 || before.indexOf('}}', open) >= 0) return undefined;
  const typed = before.slice(open + 2);
  const lead = typed.length - typed.trimStart().length;
  const prefix = typed.slice(lead);
  // Only reference characters may be between `{{` and the cursor.
  if (!/^[A-Za-z0-9_.[\]-]*$/.test(prefix)) return undefined;
  const from = open + 2 + lead;
  const rest = /^[A-Za-z0-9_.[\]-]*/.exec(text.slice(cursor))?.[0] ?? '';
  const to = cursor + rest.length;
  const close = !/^\s*\}\}/.test(text.slice(to));
  const options = candidates(sources)
    .filter((c) => c.label.startsWith(prefix) && c.boundary <= prefix.length)
    .slice(0, MAX_OPTIONS)
    .map(({ boundary: _b, ...option }) => option);
  return { from, to, close, options };
}

/** The text after applying one option of a completion, and where the cursor goes. */
export function applyCompletion(
  text: string,
  completion: Completion,
  option: CompletionOption,
): { text: string; cursor: number } {
  const insert = option.label + (completion.close ? '}}' : '');
  const next = text.slice(0, completion.from) + insert + text.slice(completion.to);
  const closing = completion.close
    ? insert.length
    : insert.length + (/^\s*\}\}/.exec(text.slice(completion.to))?.[0].length ?? 0);
  return { text: next, cursor: completion.from + closing };
}

export type ReferenceProblemCode =
  'malformed' | 'unbalanced' | 'unknown_input' | 'unknown_node' | 'unknown_field';

export interface ReferenceProblem {
  readonly code: ReferenceProblemCode;
  /** The placeholder (or the stray braces) as written. */
  readonly raw: string;
  readonly from: number;
  readonly to: number;
  /** For unknown_field: the part that does not exist. */
  readonly field?: string;
}

const PLACEHOLDER = /\{\{(.*?)\}\}/gs;

/** Where the path leaves the declared fields, when the tree is sure it does (an open object is not). */
function missingPart(root: FieldNode, path: readonly PathPart[]): PathPart | undefined {
  let at = root;
  for (const part of path) {
    if (at.type === 'any') return undefined;
    const key = typeof part === 'number' ? 0 : part;
    const next = at.children.find((c) => c.key === key);
    if (next) {
      at = next;
      continue;
    }
    // A typed leaf cannot be walked into; an object or list only says "missing" when its shape is known.
    const walkable =
      (at.type === 'object' && typeof part === 'string') || (at.type === 'list' && typeof part === 'number');
    if (!walkable || at.children.length) return part;
    return undefined;
  }
  return undefined;
}

/**
 * Every reference in `text` that would not work for this node: malformed placeholders, unbalanced
 * braces, inputs the workflow does not declare, nodes that are not upstream, fields a known shape
 * does not have. `{{steps.N…}}` and `{{last…}}` are plan forms the canvas does not check here.
 */
export function referenceProblems(text: string, sources: readonly RefSource[]): ReferenceProblem[] {
  const problems: ReferenceProblem[] = [];
  const find = (kind: RefSource['kind'], id: string) => sources.find((s) => s.kind === kind && s.id === id);
  let last = 0;
  const strays = (gap: string, offset: number) => {
    for (const m of gap.matchAll(/\{\{|\}\}/g))
      problems.push({ code: 'unbalanced', raw: m[0], from: offset + m.index, to: offset + m.index + 2 });
  };
  for (const m of text.matchAll(PLACEHOLDER)) {
    strays(text.slice(last, m.index), last);
    last = m.index + m[0].length;
    const at = { raw: m[0], from: m.index, to: last };
    const parsed = parsePlaceholder(m[0]);
    if (!parsed.ok) {
      problems.push({ code: 'malformed', ...at });
      continue;
    }
    const root = parsed.ref.root;
    if (root.kind !== 'input' && root.kind !== 'node') continue;
    const source = root.kind === 'input' ? find('input', root.name) : find('node', root.id);
    if (!source) {
      problems.push({ code: root.kind === 'input' ? 'unknown_input' : 'unknown_node', ...at });
      continue;
    }
    const missing = missingPart(source.root, parsed.ref.path);
    if (missing !== undefined) problems.push({ code: 'unknown_field', ...at, field: String(missing) });
  }
  strays(text.slice(last), last);
  // The plan library's own reading must agree: anything it calls malformed is flagged.
  if (!problems.length && placeholdersIn(text).some((p) => !p.ok))
    problems.push({ code: 'malformed', raw: text, from: 0, to: text.length });
  return problems;
}
