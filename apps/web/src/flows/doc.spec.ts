import { compileGraph } from '@switchyard/plan';
import {
  addNote,
  addToolNode,
  autoLayout,
  connect,
  connectRefusal,
  copyOf,
  docFromGraph,
  emptyDoc,
  freeSpot,
  graphOf,
  paste,
  NOTE_H,
  NOTE_W,
  removeElements,
  TOOL_H,
  TOOL_W,
  updateNodeData,
  type FlowDoc,
} from './doc';

function chain(): FlowDoc {
  let doc = emptyDoc();
  const a = addToolNode(doc, 'wait', { x: 300, y: 0 });
  const b = addToolNode(a.doc, 'wait', { x: 600, y: 0 });
  doc = connect(connect(b.doc, 'start', a.id), a.id, b.id);
  return updateNodeData(doc, b.id, { tool: 'wait', arguments: { value: `{{node.${a.id}.result.x}}` } });
}

describe('flow doc', () => {
  it('round-trips a stored graph: ids, positions, notes, unknown fields', () => {
    const graph = {
      nodes: [
        { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
        {
          id: 'a',
          type: 'tool',
          position: { x: 10.5, y: 20 },
          data: { tool: 'wait', arguments: { ms: 1 } },
          custom: 1,
        },
        {
          id: 'n1',
          type: 'note',
          position: { x: -40, y: 300 },
          data: { text: 'hello' },
          width: 200,
          height: 90,
        },
      ],
      edges: [{ id: 'x', source: 'start', target: 'a' }],
      viewport: { zoom: 1 },
    };
    const { doc, laidOut } = docFromGraph(graph, { type: 'object', properties: {} });
    expect(laidOut).toBe(false);
    expect(graphOf(doc)).toEqual(graph);
  });

  it('lays out a graph saved without positions, and adds the start node it lacks', () => {
    const { doc, laidOut } = docFromGraph(
      {
        nodes: [
          { id: 'a', type: 'tool', data: { tool: 'wait' } },
          { id: 'b', type: 'tool', data: { tool: 'wait' } },
        ],
        edges: [{ source: 'a', target: 'b' }],
      },
      { type: 'object', properties: {} },
    );
    expect(laidOut).toBe(true);
    const at = Object.fromEntries(doc.nodes.map((n) => [n.id, n.position.x]));
    expect(at.start).toBeLessThan(at.a as number);
    expect(at.a).toBeLessThan(at.b as number);
    expect(doc.edges[0]?.id).toBe('e-a-b');
  });

  it('refuses edges that would make the graph uncompilable', () => {
    const doc = chain();
    expect(connectRefusal(doc, 'wait', 'wait')).toBe('self');
    expect(connectRefusal(doc, 'wait', 'wait_2')).toBe('duplicate');
    expect(connectRefusal(doc, 'wait_2', 'wait')).toBe('cycle');
    expect(connectRefusal(doc, 'wait', 'start')).toBe('into_start');
    const noted = addNote(doc, { x: 0, y: 0 }).doc;
    expect(connectRefusal(noted, 'note', 'wait')).toBe('note');
    expect(connect(doc, 'wait_2', 'wait')).toBe(doc);
  });

  it('removing a node removes its edges; the start node stays', () => {
    const doc = removeElements(chain(), ['wait', 'start']);
    expect(doc.nodes.map((n) => n.id)).toEqual(['start', 'wait_2']);
    expect(doc.edges).toEqual([]);
  });

  it('pastes with fresh ids, edges among the pasted nodes, and references that follow the new ids', () => {
    const doc = chain();
    const clip = copyOf(doc, new Set(['wait', 'wait_2', 'start']));
    expect(clip?.nodes.map((n) => n.id)).toEqual(['wait', 'wait_2']);
    const pasted = paste(doc, clip as NonNullable<typeof clip>, { x: 40, y: 40 });
    expect(pasted.ids).toEqual(['wait_3', 'wait_4']);
    const w4 = pasted.doc.nodes.find((n) => n.id === 'wait_4');
    expect(w4?.data).toEqual({ tool: 'wait', arguments: { value: '{{node.wait_3.result.x}}' } });
    expect(w4?.position).toEqual({ x: 640, y: 40 });
    expect(pasted.doc.edges.map((e) => `${e.source}>${e.target}`)).toContain('wait_3>wait_4');
    expect(pasted.doc.nodes.filter((n) => n.selected).map((n) => n.id)).toEqual(['wait_3', 'wait_4']);
  });

  it('what the canvas saves compiles: edges from the start node are drawn, not compiled', () => {
    const compiled = compileGraph(graphOf(autoLayout(chain())));
    expect(compiled.ok).toBe(true);
  });
});

describe('freeSpot (where a node added by a click goes)', () => {
  const VIEW = { x: 0, y: 0, width: 1600, height: 1200 };
  const overlaps = (
    a: { x: number; y: number; width: number; height: number },
    b: { x: number; y: number; width: number; height: number },
  ) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

  it('keeps the asked place when it is free', () => {
    expect(freeSpot(emptyDoc(), { x: 500, y: 500 }, { width: TOOL_W, height: TOOL_H }, VIEW)).toEqual({
      x: 500,
      y: 500,
    });
  });

  it('moves off the cards and notes under it, to the nearest free place, a gap apart', () => {
    let doc = addToolNode(emptyDoc(), 'wait', { x: 300, y: 300 }).doc;
    doc = addNote(doc, { x: 300, y: 400 }).doc;
    const at = { x: 310, y: 320 };
    const spot = freeSpot(doc, at, { width: NOTE_W, height: NOTE_H }, VIEW);
    const box = { ...spot, width: NOTE_W + 16, height: NOTE_H + 16 };
    for (const n of doc.nodes) {
      const other = {
        x: n.position.x,
        y: n.position.y,
        width: (n.width ?? TOOL_W) + 16,
        height: (n.height ?? TOOL_H) + 16,
      };
      expect(overlaps(box, other)).toBe(false);
    }
    // Near where it was asked for, not somewhere far off.
    expect(Math.hypot(spot.x - at.x, spot.y - at.y)).toBeLessThan(400);
    // The same place twice in a row: the second note goes beside the first, not on it.
    const second = addNote(doc, spot).doc;
    const next = freeSpot(second, at, { width: NOTE_W, height: NOTE_H }, VIEW);
    expect(next).not.toEqual(spot);
  });

  it('stays in view: with no room left there, the new node goes where it was asked for, in sight', () => {
    const small = { x: 300, y: 300, width: TOOL_W + 40, height: TOOL_H + 40 };
    const doc = addToolNode(emptyDoc(), 'wait', { x: 310, y: 310 }).doc;
    expect(freeSpot(doc, { x: 310, y: 310 }, { width: TOOL_W, height: TOOL_H }, small)).toEqual({
      x: 310,
      y: 310,
    });
    // A free place outside the view is not taken, however near.
    const wide = { ...small, width: 2 * TOOL_W + 80 };
    const spot = freeSpot(doc, { x: 310, y: 310 }, { width: TOOL_W, height: TOOL_H }, wide);
    expect(spot.x).toBeGreaterThanOrEqual(310 + TOOL_W + 16);
    expect(spot.x + TOOL_W).toBeLessThanOrEqual(wide.x + wide.width);
    expect(spot.y).toBeGreaterThanOrEqual(wide.y);
  });
});
