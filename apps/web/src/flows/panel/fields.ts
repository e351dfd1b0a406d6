import { isRecord, type ToolDescriptor } from '@switchyard/contracts';
import type { PathPart } from '@switchyard/plan';
import { portTypeOf, type FieldNode, type PortType, type RefSource, type ToolNodeData } from '../types';

/**
 * What a node's input can reference, as trees of typed fields: built from JSON Schemas (the workflow's
 * input schema, each upstream tool's output schema) merged with the values a run actually produced, so
 * a field the schema does not declare still shows once a run has seen it. Pure; the panel renders it.
 */

/** Deeper levels are not expanded: result schemas can be recursive, and nobody binds that deep by hand. */
export const MAX_FIELD_DEPTH = 6;

type Schema = Record<string, unknown>;

/** `anyOf`/`oneOf` with one non-null branch (how optional fields are often written) is that branch. */
function unwrap(schema: unknown): Schema | undefined {
  if (!isRecord(schema)) return undefined;
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = schema[key];
    if (Array.isArray(branches) && schema['type'] === undefined) {
      const real = branches.filter((b) => !(isRecord(b) && b['type'] === 'null'));
      if (real.length === 1 && isRecord(real[0])) return { ...schema, ...real[0] };
    }
  }
  return schema;
}

/** The port type of a value seen in a run. */
export function portTypeOfValue(value: unknown): PortType {
  if (value === null || value === undefined) return 'any';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'text';
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'object':
      return 'object';
    default:
      return 'any';
  }
}

function exampleOf(schema: Schema | undefined): unknown {
  if (!schema) return undefined;
  const examples = schema['examples'];
  if (Array.isArray(examples) && examples.length) return examples[0];
  return schema['example'];
}

/** Option bag so "no last run" (undefined) differs from "the last run produced undefined here". */
interface Seen {
  readonly value: unknown;
}

function build(
  schema: Schema | undefined,
  seen: Seen | undefined,
  key: string | number,
  path: readonly PathPart[],
  depth: number,
): FieldNode {
  const declared = portTypeOf(schema);
  const type = declared === 'any' && seen ? portTypeOfValue(seen.value) : declared;
  const children: FieldNode[] = [];
  if (depth < MAX_FIELD_DEPTH) {
    if (type === 'object') {
      const props = isRecord(schema?.['properties']) ? schema['properties'] : {};
      const value = seen && isRecord(seen.value) ? seen.value : undefined;
      for (const [name, sub] of Object.entries(props)) {
        const child = value && Object.hasOwn(value, name) ? { value: value[name] } : undefined;
        children.push(build(unwrap(sub), child, name, [...path, name], depth + 1));
      }
      for (const [name, v] of Object.entries(value ?? {})) {
        if (!Object.hasOwn(props, name))
          children.push(build(undefined, { value: v }, name, [...path, name], depth + 1));
      }
    } else if (type === 'list') {
      const items = Array.isArray(schema?.['items']) ? schema['items'][0] : schema?.['items'];
      const value = seen && Array.isArray(seen.value) ? seen.value : undefined;
      const first = value && value.length ? { value: value[0] } : undefined;
      if (isRecord(items) || first) children.push(build(unwrap(items), first, 0, [...path, 0], depth + 1));
    }
  }
  const description = typeof schema?.['description'] === 'string' ? schema['description'] : undefined;
  const example = exampleOf(schema);
  return {
    key,
    path,
    type,
    ...(description !== undefined ? { description } : {}),
    ...(example !== undefined ? { example } : {}),
    ...(seen ? { lastRun: seen.value } : {}),
    children,
  };
}

/**
 * The field tree of a JSON Schema (objects expand into their properties, arrays into a `[0]` child),
 * merged with a value from a run: paths only the value has appear too, typed from the value. Pass
 * `hasLastRun: false` (the default when `lastRun` is undefined) when no run is known.
 */
export function fieldTree(schema: unknown, lastRun?: unknown, hasLastRun = lastRun !== undefined): FieldNode {
  return build(unwrap(schema), hasLastRun ? { value: lastRun } : undefined, '', [], 0);
}

/** The field at `path` below `root`, or undefined when the tree does not have it. */
export function fieldAt(root: FieldNode, path: readonly PathPart[]): FieldNode | undefined {
  let at: FieldNode | undefined = root;
  for (const part of path) {
    // Any index of a list is its [0] child's shape.
    const key = typeof part === 'number' ? 0 : part;
    at = at.children.find((c) => c.key === key);
    if (!at) return undefined;
  }
  return at;
}

/** What a row shows as its sample value: the last run's, else the declared example. */
export function previewOf(
  field: FieldNode,
): { readonly from: 'run' | 'example'; readonly value: unknown } | undefined {
  if ('lastRun' in field) return { from: 'run', value: field.lastRun };
  if (field.example !== undefined) return { from: 'example', value: field.example };
  return undefined;
}

/** A short one-line text for a sample value. */
export function previewText(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? 'undefined');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Nodes and edges as the canvas holds them; only what finding sources needs. */
export interface GraphLike {
  readonly nodes: readonly { readonly id: string; readonly type?: string; readonly data?: unknown }[];
  readonly edges: readonly { readonly source: string; readonly target: string }[];
}

/** A tool descriptor that may carry an output schema (optional until every tool can say it). */
export type ToolWithOutput = ToolDescriptor & { readonly outputSchema?: unknown };

export interface SourcesInput {
  /** The node whose inputs are being edited. */
  readonly nodeId: string;
  readonly graph: GraphLike;
  /** The workflow's input schema (`{ type: 'object', properties, required }`). */
  readonly inputSchema: unknown;
  readonly tools: readonly ToolWithOutput[];
  /** Results of the last run by node id (a pinned result wins over these). */
  readonly results?: Readonly<Record<string, unknown>>;
  /** The inputs of the last run. */
  readonly inputs?: Readonly<Record<string, unknown>>;
}

/** Every node `nodeId` depends on through edges (transitively), nearest first, each once. */
export function upstreamOf(nodeId: string, edges: GraphLike['edges']): string[] {
  const preds = new Map<string, string[]>();
  for (const e of edges) preds.set(e.target, [...(preds.get(e.target) ?? []), e.source]);
  const found: string[] = [];
  const seen = new Set([nodeId]);
  let frontier = [nodeId];
  while (frontier.length) {
    const next: string[] = [];
    for (const id of frontier) {
      for (const p of preds.get(id) ?? []) {
        if (seen.has(p)) continue;
        seen.add(p);
        found.push(p);
        next.push(p);
      }
    }
    frontier = next;
  }
  return found;
}

/** The sources of one input schema: one per declared input. */
export function inputSources(inputSchema: unknown, inputs?: Readonly<Record<string, unknown>>): RefSource[] {
  const schema = isRecord(inputSchema) ? inputSchema : {};
  const props = isRecord(schema['properties']) ? schema['properties'] : {};
  return Object.entries(props).map(([name, prop]) => {
    const title = isRecord(prop) && typeof prop['title'] === 'string' && prop['title'] ? prop['title'] : name;
    const has = inputs !== undefined && Object.hasOwn(inputs, name);
    return {
      kind: 'input',
      id: name,
      label: title,
      root: { ...fieldTree(prop, has ? inputs[name] : undefined, has), key: name },
    };
  });
}

/** The result source of one tool node: its tool's output schema merged with its pinned or last result. */
export function nodeSource(
  node: { readonly id: string; readonly data?: unknown },
  tool: ToolWithOutput | undefined,
  lastResult?: { readonly value: unknown },
): RefSource {
  const data = (isRecord(node.data) ? node.data : {}) as Partial<ToolNodeData>;
  const pinned = isRecord(data.pinned) && 'result' in data.pinned ? { value: data.pinned.result } : undefined;
  const seen = pinned ?? lastResult;
  return {
    kind: 'node',
    id: node.id,
    label: data.label || data.tool || node.id,
    root: { ...fieldTree(tool?.outputSchema, seen?.value, seen !== undefined), key: node.id },
  };
}

/**
 * What the node `nodeId` can reference: the workflow inputs, then every tool node upstream of it
 * (through edges, transitively; nearest first), each with its result's fields, then the tool nodes
 * not connected to it yet that it could depend on without a cycle (picking one draws the edge).
 */
export function sourcesFor(input: SourcesInput): RefSource[] {
  const byId = new Map(input.graph.nodes.map((n) => [n.id, n]));
  const tools = new Map(input.tools.map((t) => [t.name, t]));
  const sourceOf = (id: string): RefSource | undefined => {
    const node = byId.get(id);
    if (!node || node.type !== 'tool') return undefined;
    const data = isRecord(node.data) ? node.data : {};
    const tool = typeof data['tool'] === 'string' ? tools.get(data['tool']) : undefined;
    const results = input.results;
    return nodeSource(node, tool, results && Object.hasOwn(results, id) ? { value: results[id] } : undefined);
  };
  const upstream = upstreamOf(input.nodeId, input.graph.edges);
  const connected = upstream.map(sourceOf).filter((s): s is RefSource => s !== undefined);
  const reversed = input.graph.edges.map((e) => ({ source: e.target, target: e.source }));
  const unavailable = new Set([input.nodeId, ...upstream, ...upstreamOf(input.nodeId, reversed)]);
  const others = input.graph.nodes
    .filter((n) => !unavailable.has(n.id))
    .map((n) => sourceOf(n.id))
    .filter((s): s is RefSource => s !== undefined)
    .map((s) => ({ ...s, unconnected: true }));
  return [...inputSources(input.inputSchema, input.inputs), ...connected, ...others];
}
