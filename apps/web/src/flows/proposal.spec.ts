import type { ToolDescriptor } from '@switchyard/contracts';
import { proposeFlowEdit } from '@switchyard/plan';
import { WAIT_TOOL } from '../testing/tools';
import { docFromGraph, graphOf, type FlowDoc } from './doc';
import { applyToDoc, previewOf } from './proposal';

const TOOLS: ToolDescriptor[] = [WAIT_TOOL];

function canvas(): FlowDoc {
  return docFromGraph(
    {
      nodes: [
        { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
        { id: 'a', type: 'tool', position: { x: 320, y: 0 }, data: { tool: 'wait', arguments: { ms: 0 } } },
        { id: 'b', type: 'tool', position: { x: 640, y: 0 }, data: { tool: 'wait', arguments: { ms: 1 } } },
      ],
      edges: [
        { id: 'e1', source: 'start', target: 'a' },
        { id: 'e2', source: 'a', target: 'b' },
      ],
    },
    { type: 'object', properties: {} },
  ).doc;
}

function propose(doc: FlowDoc, revision: number) {
  const made = proposeFlowEdit(
    { graph: graphOf(doc), inputSchema: doc.inputSchema, revision },
    {
      mode: 'edit',
      summary: 'c instead of b',
      ops: [
        { op: 'remove_node', id: 'b' },
        { op: 'add_node', node: { id: 'c', type: 'tool', data: { tool: 'wait', arguments: { ms: 2 } } } },
        { op: 'add_edge', source: 'a', target: 'c' },
        { op: 'update_node', id: 'a', data: { description: 'first' } },
      ],
    },
    TOOLS,
  );
  if (!made.ok) throw new Error(JSON.stringify(made.issues));
  return made.proposal;
}

describe('proposals on the canvas', () => {
  it('previews the result with what it adds, changes and removes marked, new cards placed after what feeds them', () => {
    const doc = canvas();
    const preview = previewOf(doc, propose(doc, 2));
    const marks = Object.fromEntries(preview.nodes.map((n) => [n.id, n.className]));
    expect(marks).toEqual({ start: undefined, a: 'diff-changed', c: 'diff-added', b: 'diff-removed' });
    expect(preview.nodes.every((n) => n.draggable === false)).toBe(true);
    const c = preview.nodes.find((n) => n.id === 'c');
    expect(c?.position.x).toBeGreaterThan(320);
    // Not on top of b, which is still drawn (removed) where it was.
    expect(c?.position).not.toEqual({ x: 640, y: 0 });
    const edgeMarks = preview.edges.map((e) => `${e.source}>${e.target}:${e.className ?? ''}`).sort();
    expect(edgeMarks).toEqual(['a>b:diff-removed', 'a>c:diff-added', 'start>a:']);
  });

  it('applies on the canvas it was made for, keeping a position changed meanwhile', () => {
    const doc = canvas();
    const proposal = propose(doc, 2);
    const nudged: FlowDoc = {
      ...doc,
      nodes: doc.nodes.map((n) => (n.id === 'a' ? { ...n, position: { x: 333, y: 44 } } : n)),
    };
    const out = applyToDoc(nudged, 2, proposal);
    if (!out.ok) throw new Error(out.reason);
    expect(out.doc.nodes.map((n) => n.id)).toEqual(['start', 'a', 'c']);
    expect(out.doc.nodes[1]).toMatchObject({ position: { x: 333, y: 44 }, data: { description: 'first' } });
  });

  it('refuses a stale proposal: the canvas changed, or the flow was saved again', () => {
    const doc = canvas();
    const proposal = propose(doc, 2);
    const changed: FlowDoc = {
      ...doc,
      nodes: doc.nodes.map((n) =>
        n.id === 'b' ? { ...n, data: { tool: 'wait', arguments: { ms: 9 } } } : n,
      ),
    };
    expect(applyToDoc(changed, 2, proposal)).toMatchObject({ ok: false, stale: true });
    expect(applyToDoc(doc, 3, proposal)).toMatchObject({ ok: false, stale: true });
  });
});
