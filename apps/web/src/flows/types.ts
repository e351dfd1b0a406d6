import { PICKER_FILE_FORMAT } from '@switchyard/contracts';
import type { PathPart } from '@switchyard/plan';

/**
 * The flow builder's shared vocabulary. A flow is stored as the workflow's `graph` (kept verbatim by
 * the server, compiled by `@switchyard/plan`'s `compileGraph`):
 *
 *   tool node   { id, type: 'tool',  position, data: ToolNodeData }     → a plan step (id = step id)
 *   start node  { id: 'start', type: 'start', position, data: {} }       → the workflow's inputs
 *   note node   { id, type: 'note',  position, data: { text }, width?, height? }  → kept, not compiled
 *   edge        { id, source, target }  between tool nodes (→ dependsOn); edges from the start node
 *               are drawn but not compiled.
 *
 * The start node's inputs are the workflow's `inputSchema` (a JSON Schema object), edited on the
 * start node and referenced as `{{inputs.<name>}}`.
 */

export type InputMode = 'manual' | 'reference' | 'expression';

export interface ToolNodeData {
  tool: string;
  /** Shown on the card; the tool name when absent. */
  label?: string;
  arguments?: Record<string, unknown>;
  /** How each argument is edited; absent = guessed from the value (see `modeOf`). */
  inputModes?: Record<string, InputMode>;
  description?: string;
  requiresApproval?: boolean;
  /** The plan's RetryPolicy (`attempts` 1–5): the server parses it strictly. */
  retry?: { attempts: number; backoffMs?: number };
  pinned?: { result: unknown };
  [key: string]: unknown;
}

/** Port colours and type filtering use these kinds (grey = any). */
export type PortType = 'text' | 'number' | 'boolean' | 'object' | 'list' | 'file' | 'any';

/** One field of a value a reference can point at: an input, a node's result, or a part of either. */
export interface FieldNode {
  /** The key in its parent: a property name or `0` for an array's first element. */
  readonly key: string | number;
  /** The path from the source's root (`[]` for the whole result / input). */
  readonly path: readonly PathPart[];
  readonly type: PortType;
  readonly description?: string;
  readonly example?: unknown;
  /** The value at this path in the last run, when one is known. */
  readonly lastRun?: unknown;
  readonly children: readonly FieldNode[];
}

/** Something upstream a node's input can reference: a workflow input or an upstream node's result. */
export interface RefSource {
  readonly kind: 'input' | 'node';
  /** The input's name or the node's id. */
  readonly id: string;
  readonly label: string;
  /** For an input: the input itself as the root (path []); for a node: its result as the root. */
  readonly root: FieldNode;
  /** A node not connected yet: picking one of its fields draws the edge. */
  readonly unconnected?: boolean;
}

/** The reference text for a source and a path: `{{inputs.name.a[0]}}` or `{{node.id.result.a[0]}}`. */
export function referenceText(source: Pick<RefSource, 'kind' | 'id'>, path: readonly PathPart[]): string {
  const tail = path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('');
  return source.kind === 'input' ? `{{inputs.${source.id}${tail}}}` : `{{node.${source.id}.result${tail}}}`;
}

/** The JSON type an enum or const implies when the schema names none (`{ enum: ['csv', 'json'] }` is text). */
function impliedType(s: Record<string, unknown>): string | undefined {
  const options: unknown[] = Array.isArray(s.enum) ? s.enum : 'const' in s ? [s.const] : [];
  const kinds = new Set(options.map((o) => typeof o));
  const [only] = kinds;
  return kinds.size === 1 && (only === 'string' || only === 'number' || only === 'boolean')
    ? only
    : undefined;
}

/** The port type a JSON Schema describes. */
export function portTypeOf(schema: unknown): PortType {
  if (!schema || typeof schema !== 'object') return 'any';
  const s = schema as Record<string, unknown>;
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : (s.type ?? impliedType(s));
  if (
    s.format === PICKER_FILE_FORMAT ||
    s.format === 'fengyu-file' ||
    s.format === 'file' ||
    s['x-switchyard-file'] === true
  )
    return 'file';
  switch (type) {
    case 'string':
      return 'text';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    case 'array':
      return 'list';
    default:
      return 'any';
  }
}

/** Whether a value of type `have` may fill an input expecting `want` (text takes anything printable). */
export function portAccepts(want: PortType, have: PortType): boolean {
  if (want === 'any' || have === 'any' || want === have) return true;
  if (want === 'text') return have === 'number' || have === 'boolean';
  if (want === 'file') return have === 'text';
  return false;
}

/** The mode an argument is edited in when the node does not say. */
export function modeOf(value: unknown, declared?: InputMode): InputMode {
  if (declared) return declared;
  if (typeof value !== 'string' || !value.includes('{{')) return 'manual';
  return /^\s*\{\{[^{}]*\}\}\s*$/.test(value) ? 'reference' : 'expression';
}
