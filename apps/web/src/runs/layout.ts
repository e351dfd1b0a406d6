import dagre from '@dagrejs/dagre';

export interface LaidOut {
  readonly id: string;
  readonly x: number;
  readonly y: number;
}

export const NODE_W = 220;
export const NODE_H = 76;

/** Gap between dependency levels. */
export const RANK_SEP = 64;

/** Levels left to right (a wide view), or top to bottom (a narrow one). */
export type Direction = 'LR' | 'TB';

/**
 * Positions a plan's steps by dependency level (dagre's layered layout): left to right, a step
 * sits to the right of everything it depends on; top to bottom, below it. Dependencies on unknown
 * steps are ignored.
 */
export function layoutDag(
  steps: readonly { id: string; dependsOn: readonly string[] }[],
  direction: Direction = 'LR',
): Map<string, LaidOut> {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: direction, nodesep: 24, ranksep: RANK_SEP, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(steps.map((s) => s.id));
  for (const s of steps) g.setNode(s.id, { width: NODE_W, height: NODE_H });
  for (const s of steps) for (const d of s.dependsOn) if (ids.has(d)) g.setEdge(d, s.id);
  dagre.layout(g);
  const out = new Map<string, LaidOut>();
  for (const s of steps) {
    const n = g.node(s.id);
    out.set(s.id, { id: s.id, x: n.x - NODE_W / 2, y: n.y - NODE_H / 2 });
  }
  return out;
}
