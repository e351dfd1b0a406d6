import type { FlowProposal } from '@switchyard/contracts';
import { applyProposal } from '@switchyard/plan';
import { docFromGraph, graphOf, TOOL_H, TOOL_W, type EditorEdge, type EditorNode, type FlowDoc } from './doc';

type Point = { x: number; y: number };
type RawNode = { id: string; position?: Point; [k: string]: unknown };
type RawGraph = { nodes: RawNode[]; edges: Array<{ source: string; target: string }>; [k: string]: unknown };

const GAP_X = TOOL_W + 80;
const GAP_Y = TOOL_H + 40;

/**
 * Positions for a proposed graph on this canvas: nodes the canvas has keep theirs, new ones go to
 * the right of what feeds them (or below everything). A graph whose nodes are all new and unplaced
 * is left to the auto-layout.
 */
function placed(graph: RawGraph, doc: FlowDoc): RawGraph {
  const at = new Map<string, Point>(doc.nodes.map((n) => [n.id, n.position]));
  const nodes = graph.nodes.map((n) => ({ ...n }));
  const unplaced = nodes.filter((n) => !n.position && !at.has(n.id));
  const known = nodes.filter((n) => at.has(n.id) || n.position);
  if (unplaced.length && known.every((n) => n.type === 'start' || n.type === 'note')) return graph;
  const bottom = Math.max(0, ...doc.nodes.map((n) => n.position.y + TOOL_H));
  let spare = 0;
  for (const n of nodes) {
    if (n.position) continue;
    const here = at.get(n.id);
    if (here) {
      n.position = here;
      continue;
    }
    const feeds = graph.edges
      .filter((e) => e.target === n.id)
      .map((e) => at.get(e.source))
      .filter(Boolean) as Point[];
    const p = feeds.length
      ? { x: Math.max(...feeds.map((f) => f.x)) + GAP_X, y: Math.min(...feeds.map((f) => f.y)) }
      : { x: spare++ * GAP_X, y: bottom + GAP_Y };
    // Not on top of a card already there.
    while ([...at.values()].some((q) => Math.abs(q.x - p.x) < TOOL_W && Math.abs(q.y - p.y) < TOOL_H))
      p.y += GAP_Y;
    n.position = p;
    at.set(n.id, p);
  }
  return { ...graph, nodes };
}

type DiffMark = 'added' | 'changed' | 'removed';

/**
 * The canvas as the proposal would leave it, for review: the proposed nodes and edges, marked added
 * or changed, with the ones it removes still drawn and marked removed. Nothing here is editable.
 */
export function previewOf(doc: FlowDoc, proposal: FlowProposal): FlowDoc {
  const { doc: proposed } = docFromGraph(placed(proposal.graph as RawGraph, doc), proposal.inputSchema);
  const added = new Set(proposal.diff.addedNodes);
  const changed = new Set(proposal.diff.changedNodes);
  const mark = (n: EditorNode, m: DiffMark | undefined): EditorNode =>
    ({ ...n, selected: false, draggable: false, className: m ? `diff-${m}` : undefined }) as EditorNode;
  const nodes = [
    ...proposed.nodes.map((n) =>
      mark(n, added.has(n.id) ? 'added' : changed.has(n.id) ? 'changed' : undefined),
    ),
    ...doc.nodes.filter((n) => proposal.diff.removedNodes.includes(n.id)).map((n) => mark(n, 'removed')),
  ];
  const key = (e: { source: string; target: string }) => `${e.source}>${e.target}`;
  const addedEdges = new Set(proposal.diff.addedEdges.map(key));
  const removedEdges = new Set(proposal.diff.removedEdges.map(key));
  const edges: EditorEdge[] = [
    ...proposed.edges.map((e) => ({
      ...e,
      selected: false,
      className: addedEdges.has(key(e)) ? 'diff-added' : undefined,
    })),
    ...doc.edges
      .filter((e) => removedEdges.has(key(e)))
      .map((e) => ({ ...e, selected: false, className: 'diff-removed' })),
  ];
  return { ...proposed, nodes, edges };
}

export type ApplyOutcome =
  | { readonly ok: true; readonly doc: FlowDoc }
  | { readonly ok: false; readonly stale: true; readonly reason: string }
  | { readonly ok: false; readonly stale?: false; readonly reason: string };

/**
 * The proposal applied to the canvas as it is now, or why not: stale when the canvas or the saved
 * revision moved since it was made. Positions the person changed meanwhile are kept.
 */
export function applyToDoc(doc: FlowDoc, revision: number | undefined, proposal: FlowProposal): ApplyOutcome {
  const outcome = applyProposal({ graph: graphOf(doc), inputSchema: doc.inputSchema, revision }, proposal);
  if (!outcome.ok)
    return 'stale' in outcome
      ? outcome
      : { ok: false, reason: outcome.issues.map((i) => `${i.path}: ${i.message}`).join('; ') };
  const next = docFromGraph(placed(outcome.graph as RawGraph, doc), outcome.inputSchema).doc;
  return { ok: true, doc: { ...next, extra: { ...doc.extra, ...next.extra } } };
}
