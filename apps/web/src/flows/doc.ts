import dagre from '@dagrejs/dagre';
import type { Edge, Node } from '@xyflow/react';
import { placeholdersIn } from '@switchyard/plan';
import type { ToolNodeData } from './types';

/**
 * The flow being edited, as the canvas holds it: xyflow nodes and edges plus the workflow's input
 * schema (edited on the start node), kept immutable so every version can sit on the undo stack.
 * `docFromGraph` / `graphOf` convert to and from the stored graph without losing anything the canvas
 * does not draw: unknown node fields ride along in `extra`, unknown graph fields in `FlowDoc.extra`.
 */
export type EditorNode = Node<Record<string, unknown>> & { extra?: Record<string, unknown> };
export type EditorEdge = Edge;

export interface FlowDoc {
  readonly nodes: EditorNode[];
  readonly edges: EditorEdge[];
  readonly inputSchema: Record<string, unknown>;
  readonly extra: Record<string, unknown>;
}

export const START_ID = 'start';
export const TOOL_W = 260;
export const TOOL_H = 84;
export const NOTE_W = 220;
export const NOTE_H = 120;

const NODE_KEYS = new Set(['id', 'type', 'position', 'data', 'width', 'height']);
const ID = /^[A-Za-z0-9_-]{1,64}$/;

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

export function emptyDoc(): FlowDoc {
  return {
    nodes: [{ id: START_ID, type: 'start', position: { x: 0, y: 0 }, data: {}, deletable: false }],
    edges: [],
    inputSchema: { type: 'object', properties: {} },
    extra: {},
  };
}

export const edgeId = (source: string, target: string) => `e-${source}-${target}`;

/**
 * The stored graph as a doc. Nodes without a position (plans made by a model or the API) are laid
 * out automatically; `laidOut` says so, and the editor treats it as an edit to save.
 */
export function docFromGraph(
  graph: unknown,
  inputSchema: Record<string, unknown>,
): { doc: FlowDoc; laidOut: boolean } {
  const g = record(graph);
  const { nodes: rawNodes, edges: rawEdges, ...extra } = g;
  let missing = false;
  const nodes: EditorNode[] = (Array.isArray(rawNodes) ? rawNodes : []).map((raw) => {
    const n = record(raw);
    const position = record(n.position);
    const hasPosition = typeof position.x === 'number' && typeof position.y === 'number';
    if (!hasPosition) missing = true;
    const rest = Object.fromEntries(Object.entries(n).filter(([k]) => !NODE_KEYS.has(k)));
    const node: EditorNode = {
      id: String(n.id),
      type: typeof n.type === 'string' ? n.type : 'tool',
      position: hasPosition ? { x: position.x as number, y: position.y as number } : { x: 0, y: 0 },
      data: { ...record(n.data) },
    };
    if (typeof n.width === 'number') node.width = n.width;
    if (typeof n.height === 'number') node.height = n.height;
    if (node.type === 'start') node.deletable = false;
    if (Object.keys(rest).length) node.extra = rest;
    return node;
  });
  if (!nodes.some((n) => n.type === 'start')) {
    nodes.unshift({
      id: uniqueId(START_ID, new Set(nodes.map((n) => n.id))),
      type: 'start',
      position: { x: 0, y: 0 },
      data: {},
      deletable: false,
    });
    missing = true;
  }
  const edges: EditorEdge[] = (Array.isArray(rawEdges) ? rawEdges : []).map((raw) => {
    const e = record(raw);
    const source = String(e.source);
    const target = String(e.target);
    return {
      ...e,
      id: typeof e.id === 'string' ? e.id : edgeId(source, target),
      source,
      target,
    } as EditorEdge;
  });
  const doc: FlowDoc = { nodes, edges, inputSchema, extra };
  return missing ? { doc: autoLayout(doc), laidOut: true } : { doc, laidOut: false };
}

/** The doc as the graph the server stores (and `compileGraph` compiles). */
export function graphOf(doc: FlowDoc): Record<string, unknown> {
  return {
    ...doc.extra,
    nodes: doc.nodes.map((n) => ({
      ...n.extra,
      id: n.id,
      type: n.type ?? 'tool',
      position: { x: n.position.x, y: n.position.y },
      data: n.data,
      ...(n.type === 'note' && n.width !== undefined ? { width: n.width } : {}),
      ...(n.type === 'note' && n.height !== undefined ? { height: n.height } : {}),
    })),
    edges: doc.edges.map((e) => ({ id: e.id, source: e.source, target: e.target })),
  };
}

/** `base`, or `base_2`, `base_3`… whichever is free first. */
export function uniqueId(base: string, taken: ReadonlySet<string>): string {
  const stem =
    base
      .replace(/[^A-Za-z0-9_-]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 56) || 'node';
  if (!taken.has(stem)) return stem;
  // A copy of `wait_2` is `wait_3`, not `wait_2_2`.
  const root = stem.replace(/_\d+$/, '') || stem;
  for (let i = 2; ; i++) if (!taken.has(`${root}_${i}`)) return `${root}_${i}`;
}

const idsOf = (doc: FlowDoc) => new Set(doc.nodes.map((n) => n.id));

export function addToolNode(
  doc: FlowDoc,
  tool: string,
  position: { x: number; y: number },
): { doc: FlowDoc; id: string } {
  const id = uniqueId(tool.replace(/^.*__/, ''), idsOf(doc));
  const data: ToolNodeData = { tool, arguments: {} };
  const node: EditorNode = { id, type: 'tool', position, data };
  return { doc: { ...doc, nodes: [...doc.nodes.map(unselect), { ...node, selected: true }] }, id };
}

export function addNote(
  doc: FlowDoc,
  position: { x: number; y: number },
  text = '',
): { doc: FlowDoc; id: string } {
  const id = uniqueId('note', idsOf(doc));
  const node: EditorNode = { id, type: 'note', position, data: { text }, width: NOTE_W, height: NOTE_H };
  return { doc: { ...doc, nodes: [...doc.nodes.map(unselect), { ...node, selected: true }] }, id };
}

/** A node's box on the canvas: its own size when it has one (a note), else a card's. */
function boxOf(n: EditorNode): { x: number; y: number; width: number; height: number } {
  return { x: n.position.x, y: n.position.y, width: n.width ?? TOOL_W, height: n.height ?? TOOL_H };
}

/** Grid offsets around a point, nearest first (searched by `freeSpot`). */
let offsets: ReadonlyArray<readonly [number, number]> | undefined;
const SPOT_STEP = 20;
const SPOT_RADIUS = 60;

/**
 * The nearest place to `at` (a top-left corner) where a box of `size` overlaps no node, `gap` apart,
 * and lies wholly `within` the part of the canvas in view: a node added by a click (the palette, a
 * sticky note) goes to the middle of the view, and landed on whatever card was there. Searched on a
 * 20 px grid; `at` itself when the view has no room left (the new node is then in sight on top).
 */
export function freeSpot(
  doc: FlowDoc,
  at: { x: number; y: number },
  size: { width: number; height: number },
  within: { x: number; y: number; width: number; height: number },
  gap = 16,
): { x: number; y: number } {
  const boxes = doc.nodes.map(boxOf);
  const inView = (x: number, y: number) =>
    x >= within.x &&
    y >= within.y &&
    x + size.width <= within.x + within.width &&
    y + size.height <= within.y + within.height;
  const free = (x: number, y: number) =>
    inView(x, y) &&
    boxes.every(
      (b) =>
        x + size.width + gap <= b.x ||
        b.x + b.width + gap <= x ||
        y + size.height + gap <= b.y ||
        b.y + b.height + gap <= y,
    );
  offsets ??= Array.from({ length: (2 * SPOT_RADIUS + 1) ** 2 }, (_, i): [number, number] => [
    (i % (2 * SPOT_RADIUS + 1)) - SPOT_RADIUS,
    Math.floor(i / (2 * SPOT_RADIUS + 1)) - SPOT_RADIUS,
  ]).sort((a, b) => a[0] ** 2 + a[1] ** 2 - (b[0] ** 2 + b[1] ** 2));
  for (const [i, j] of offsets) {
    const x = at.x + i * SPOT_STEP;
    const y = at.y + j * SPOT_STEP;
    if (free(x, y)) return { x, y };
  }
  return at;
}

function unselect(n: EditorNode): EditorNode {
  return n.selected ? { ...n, selected: false } : n;
}

/** Removes nodes (never the start node) and edges, and every edge that touched a removed node. */
export function removeElements(
  doc: FlowDoc,
  nodeIds: Iterable<string>,
  edgeIds: Iterable<string> = [],
): FlowDoc {
  const gone = new Set([...nodeIds].filter((id) => doc.nodes.find((n) => n.id === id)?.type !== 'start'));
  const goneEdges = new Set(edgeIds);
  if (gone.size === 0 && goneEdges.size === 0) return doc;
  const nodes = doc.nodes.filter((n) => !gone.has(n.id));
  const edges = doc.edges.filter((e) => !goneEdges.has(e.id) && !gone.has(e.source) && !gone.has(e.target));
  if (nodes.length === doc.nodes.length && edges.length === doc.edges.length) return doc;
  return { ...doc, nodes, edges };
}

export type ConnectRefusal = 'self' | 'duplicate' | 'into_start' | 'note' | 'cycle' | 'missing';

/** Whether `target` can already be reached from `source`'s side: an edge target → source would close a cycle. */
function reaches(doc: FlowDoc, from: string, to: string): boolean {
  const out = new Map<string, string[]>();
  for (const e of doc.edges) out.set(e.source, [...(out.get(e.source) ?? []), e.target]);
  const seen = new Set<string>();
  const stack = [from];
  while (stack.length) {
    const at = stack.pop() as string;
    if (at === to) return true;
    if (seen.has(at)) continue;
    seen.add(at);
    stack.push(...(out.get(at) ?? []));
  }
  return false;
}

/** Why `source → target` cannot be drawn, or undefined when it can. */
export function connectRefusal(doc: FlowDoc, source: string, target: string): ConnectRefusal | undefined {
  const s = doc.nodes.find((n) => n.id === source);
  const t = doc.nodes.find((n) => n.id === target);
  if (!s || !t) return 'missing';
  if (source === target) return 'self';
  if (s.type === 'note' || t.type === 'note') return 'note';
  if (t.type === 'start') return 'into_start';
  if (doc.edges.some((e) => e.source === source && e.target === target)) return 'duplicate';
  if (reaches(doc, target, source)) return 'cycle';
  return undefined;
}

export function connect(doc: FlowDoc, source: string, target: string): FlowDoc {
  if (connectRefusal(doc, source, target)) return doc;
  return { ...doc, edges: [...doc.edges, { id: uniqueEdgeId(doc, source, target), source, target }] };
}

function uniqueEdgeId(doc: FlowDoc, source: string, target: string): string {
  const taken = new Set(doc.edges.map((e) => e.id));
  const base = edgeId(source, target);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

export function updateNodeData(doc: FlowDoc, id: string, data: Record<string, unknown>): FlowDoc {
  return { ...doc, nodes: doc.nodes.map((n) => (n.id === id ? { ...n, data } : n)) };
}

/** What the clipboard holds: nodes (never the start node) and the edges among them. */
export interface Clip {
  readonly nodes: EditorNode[];
  readonly edges: EditorEdge[];
}

export function copyOf(doc: FlowDoc, ids: ReadonlySet<string>): Clip | undefined {
  const nodes = doc.nodes.filter((n) => ids.has(n.id) && n.type !== 'start');
  if (nodes.length === 0) return undefined;
  const kept = new Set(nodes.map((n) => n.id));
  const edges = doc.edges.filter((e) => kept.has(e.source) && kept.has(e.target));
  return {
    nodes: nodes.map(({ selected: _s, dragging: _d, measured: _m, ...n }) => n),
    edges: edges.map((e) => ({ id: e.id, source: e.source, target: e.target })),
  };
}

/** Rewrites `{{node.<old>.…}}` references inside a value to the renamed ids. */
function renameReferences(value: unknown, rename: ReadonlyMap<string, string>): unknown {
  if (typeof value === 'string') {
    if (!value.includes('{{')) return value;
    let out = value;
    for (const p of placeholdersIn(value)) {
      if (!p.ok || p.ref.root.kind !== 'node') continue;
      const to = rename.get(p.ref.root.id);
      if (to) out = out.split(p.ref.raw).join(p.ref.raw.replace(`node.${p.ref.root.id}.`, `node.${to}.`));
    }
    return out;
  }
  if (Array.isArray(value)) return value.map((v) => renameReferences(v, rename));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renameReferences(v, rename)]));
  return value;
}

/**
 * Pastes a clip shifted by `offset`: nodes get ids free in this flow (references among the pasted
 * nodes follow their new ids), edges among them come along, and the pasted nodes end up selected.
 */
export function paste(
  doc: FlowDoc,
  clip: Clip,
  offset: { x: number; y: number },
): { doc: FlowDoc; ids: string[] } {
  const taken = idsOf(doc);
  const rename = new Map<string, string>();
  for (const n of clip.nodes) {
    if (!ID.test(n.id)) continue;
    const id = uniqueId(n.id, taken);
    taken.add(id);
    rename.set(n.id, id);
  }
  const nodes: EditorNode[] = clip.nodes
    .filter((n) => rename.has(n.id))
    .map((n) => ({
      ...n,
      id: rename.get(n.id) as string,
      position: { x: n.position.x + offset.x, y: n.position.y + offset.y },
      data: renameReferences(n.data, rename) as Record<string, unknown>,
      selected: true,
    }));
  let next: FlowDoc = { ...doc, nodes: [...doc.nodes.map(unselect), ...nodes] };
  for (const e of clip.edges) {
    const s = rename.get(e.source);
    const t = rename.get(e.target);
    if (s && t) next = connect(next, s, t);
  }
  return { doc: next, ids: nodes.map((n) => n.id) };
}

/** Lays the graph out left to right by dependency level (dagre); notes keep their places. */
export function autoLayout(doc: FlowDoc): FlowDoc {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 40, ranksep: 90, marginx: 20, marginy: 20 });
  g.setDefaultEdgeLabel(() => ({}));
  const laid = doc.nodes.filter((n) => n.type !== 'note');
  const ids = new Set(laid.map((n) => n.id));
  for (const n of laid) g.setNode(n.id, { width: TOOL_W, height: TOOL_H });
  for (const e of doc.edges) if (ids.has(e.source) && ids.has(e.target)) g.setEdge(e.source, e.target);
  // Tool nodes that take no edge from the start node still sit right of it.
  const start = laid.find((n) => n.type === 'start');
  if (start) {
    const fed = new Set(doc.edges.map((e) => e.target));
    for (const n of laid) if (n !== start && !fed.has(n.id)) g.setEdge(start.id, n.id, { weight: 0 });
  }
  dagre.layout(g);
  return {
    ...doc,
    nodes: doc.nodes.map((n) => {
      if (!ids.has(n.id)) return n;
      const p = g.node(n.id);
      return { ...n, position: { x: Math.round(p.x - TOOL_W / 2), y: Math.round(p.y - TOOL_H / 2) } };
    }),
  };
}

/** A plan (made by a model or sent by API without a graph) as a graph: steps as tool nodes, dependsOn as edges. */
export function graphOfPlan(
  plan: { steps?: readonly Record<string, unknown>[] } | null | undefined,
): Record<string, unknown> {
  const steps = plan?.steps ?? [];
  const nodes = steps.map((s) => {
    const { id, dependsOn: _d, ...data } = s;
    return { id: String(id), type: 'tool', data };
  });
  const edges = steps.flatMap((s) =>
    (Array.isArray(s.dependsOn) ? (s.dependsOn as unknown[]) : []).map((d) => ({
      id: edgeId(String(d), String(s.id)),
      source: String(d),
      target: String(s.id),
    })),
  );
  return { nodes, edges };
}
