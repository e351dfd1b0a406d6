import type { FlowSnapshot, ToolDescriptor } from '@switchyard/contracts';
import {
  applyFlowEdit,
  applyProposal,
  diagnoseFlow,
  diffFlows,
  flowFingerprint,
  inspectFlow,
  proposeFlowEdit,
} from './flow-assistant';

const tool = (
  name: string,
  required: string[],
  effect: ToolDescriptor['effect'] = 'read',
): ToolDescriptor => ({
  name,
  description: `${name} does things`,
  effect,
  inputSchema: {
    type: 'object',
    properties: Object.fromEntries(required.map((r) => [r, {}])),
    required,
  },
  outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
  idempotent: effect === 'read',
  source: 'builtin',
});

const TOOLS = [
  tool('read_file', ['filePath']),
  tool('write_file', ['filePath', 'content'], 'write'),
  tool('wait', ['ms']),
];

const start = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
const node = (id: string, toolName: string, args: Record<string, unknown> = {}) => ({
  id,
  type: 'tool',
  position: { x: 100, y: 0 },
  data: { tool: toolName, arguments: args },
});
const edge = (source: string, target: string) => ({ id: `e-${source}-${target}`, source, target });
const INPUTS = { type: 'object', properties: { path: { type: 'string' } } };

function snapshot(nodes: unknown[], edges: unknown[] = [], extra: Partial<FlowSnapshot> = {}): FlowSnapshot {
  return { graph: { nodes, edges }, inputSchema: INPUTS, ...extra };
}

const VALID = snapshot(
  [
    start,
    node('read', 'read_file', { filePath: '{{inputs.path}}' }),
    node('save', 'write_file', { filePath: 'out.txt', content: '{{node.read.result}}' }),
  ],
  [edge('start', 'read'), edge('read', 'save')],
);

describe('diagnoseFlow', () => {
  it('finds nothing wrong with a valid flow', () => {
    expect(diagnoseFlow(VALID, TOOLS)).toEqual([]);
  });

  it('names each listed problem of a broken flow, all at once, with the node it concerns', () => {
    // A cycle stops the compiler; the per-node checks still run.
    const broken = snapshot(
      [
        start,
        node('gone', 'no_such_tool'),
        node('half', 'write_file', { filePath: 'x' }),
        node('bad', 'read_file', { filePath: '{{node.read.result' }),
        node('a', 'wait', { ms: 1 }),
        node('b', 'wait', { ms: 1 }),
      ],
      [edge('a', 'b'), edge('b', 'a'), edge('half', 'nowhere')],
      {
        lastRun: {
          runId: '00000000-0000-4000-8000-000000000001',
          status: 'failed',
          error: { message: 'disk full', code: 'tool_failed', stepId: 'half' },
        },
      },
    );
    const found = diagnoseFlow(broken, TOOLS);
    const by = (kind: string) => found.filter((d) => d.kind === kind);
    expect(by('dangling_connection')).toEqual([
      expect.objectContaining({ code: 'missing_dependency', nodeId: 'nowhere', path: '$.graph.edges[2]' }),
    ]);
    expect(by('unavailable_tool')).toEqual([
      expect.objectContaining({ nodeId: 'gone', code: 'unknown_tool' }),
    ]);
    expect(by('missing_argument')).toEqual([
      expect.objectContaining({ nodeId: 'half', path: '$.graph.nodes[2].data.arguments.content' }),
    ]);
    expect(by('malformed_reference')).toEqual([expect.objectContaining({ nodeId: 'bad' })]);
    expect(by('last_run_error')).toEqual([
      expect.objectContaining({
        nodeId: 'half',
        code: 'tool_failed',
        message: expect.stringContaining('disk full'),
      }),
    ]);
    // The compiler reports the bad edge first and stops before ordering; a cycle alone is found too.
    const cyclic = snapshot(
      [start, node('a', 'wait', { ms: 1 }), node('b', 'wait', { ms: 1 })],
      [edge('a', 'b'), edge('b', 'a')],
    );
    expect(diagnoseFlow(cyclic, TOOLS)).toEqual([
      expect.objectContaining({
        kind: 'cycle',
        code: 'cycle',
        message: expect.stringContaining('b → a → b'),
      }),
    ]);
  });

  it('reads a canvas that is not even a graph, and a reference to an undeclared input', () => {
    expect(diagnoseFlow({ graph: 'nonsense', inputSchema: {} }, TOOLS)[0]).toMatchObject({
      kind: 'structure',
    });
    const undeclared = snapshot([start, node('read', 'read_file', { filePath: '{{inputs.nope}}' })]);
    expect(diagnoseFlow(undeclared, TOOLS)).toEqual([
      expect.objectContaining({ kind: 'malformed_reference', code: 'unknown_input', nodeId: 'read' }),
    ]);
  });
});

describe('proposals', () => {
  it('applies edits in memory, diffs them, and says whether the result is valid; nothing else changes', () => {
    const before = JSON.stringify(VALID);
    const made = proposeFlowEdit(
      VALID,
      {
        mode: 'edit',
        summary: 'wait before saving',
        ops: [
          {
            op: 'add_node',
            node: { id: 'pause', type: 'tool', data: { tool: 'wait', arguments: { ms: 10 } } },
          },
          { op: 'remove_edge', source: 'read', target: 'save' },
          { op: 'add_edge', source: 'read', target: 'pause' },
          { op: 'add_edge', source: 'pause', target: 'save' },
          { op: 'update_node', id: 'save', data: { description: 'save it', requiresApproval: true } },
        ],
      },
      TOOLS,
    );
    if (!made.ok) throw new Error(JSON.stringify(made.issues));
    expect(JSON.stringify(VALID)).toBe(before);
    expect(made.proposal.valid).toBe(true);
    expect(made.proposal.diff).toEqual({
      addedNodes: ['pause'],
      removedNodes: [],
      changedNodes: ['save'],
      addedEdges: [
        { source: 'read', target: 'pause' },
        { source: 'pause', target: 'save' },
      ],
      removedEdges: [{ source: 'read', target: 'save' }],
      inputsChanged: false,
    });
    expect(made.proposal.baseFingerprint).toBe(flowFingerprint(VALID));
  });

  it('keeps an invalid result for review, and refuses edits that cannot apply', () => {
    const invalid = proposeFlowEdit(
      VALID,
      {
        mode: 'edit',
        summary: 'drop the path',
        ops: [{ op: 'update_node', id: 'read', data: { arguments: {} } }],
      },
      TOOLS,
    );
    if (!invalid.ok) throw new Error('expected a proposal');
    expect(invalid.proposal.valid).toBe(false);
    expect(invalid.proposal.diagnostics[0]).toMatchObject({ kind: 'missing_argument', nodeId: 'read' });

    const refused = proposeFlowEdit(
      VALID,
      {
        mode: 'edit',
        summary: 'nonsense',
        ops: [
          { op: 'remove_node', id: 'ghost' },
          { op: 'remove_node', id: 'start' },
          { op: 'add_node', node: { id: 'read', type: 'tool', data: {} } },
        ],
      },
      TOOLS,
    );
    expect(refused).toEqual({
      ok: false,
      issues: [
        expect.objectContaining({ path: '$.ops[0]', code: 'unknown_node' }),
        expect.objectContaining({ path: '$.ops[1]', code: 'invalid' }),
        expect.objectContaining({ path: '$.ops[2]', code: 'duplicate_id' }),
      ],
    });
    expect(proposeFlowEdit(VALID, { mode: 'edit', summary: 'x', ops: [] }, TOOLS).ok).toBe(false);
  });

  it('builds a whole flow from an empty canvas', () => {
    const empty = snapshot([start]);
    const made = proposeFlowEdit(
      empty,
      {
        mode: 'replace',
        summary: 'a flow that waits',
        graph: { nodes: [start, node('w', 'wait', { ms: 5 })], edges: [edge('start', 'w')] },
      },
      TOOLS,
    );
    if (!made.ok) throw new Error('expected a proposal');
    expect(made.proposal).toMatchObject({ valid: true, diff: { addedNodes: ['w'], removedNodes: [] } });
  });

  it('is refused as stale once the canvas or the revision moved, and replays on a canvas only nudged', () => {
    const base = { ...VALID, revision: 3 };
    const made = proposeFlowEdit(
      base,
      {
        mode: 'edit',
        summary: 'describe',
        ops: [{ op: 'update_node', id: 'read', data: { description: 'read it' } }],
      },
      TOOLS,
    );
    if (!made.ok) throw new Error('expected a proposal');
    const moved = snapshot(
      [
        start,
        node('read', 'read_file', { filePath: 'other.txt' }),
        node('save', 'write_file', { filePath: 'out.txt', content: 'x' }),
      ],
      [edge('start', 'read'), edge('read', 'save')],
      { revision: 3 },
    );
    expect(applyProposal(moved, made.proposal)).toMatchObject({ ok: false, stale: true });
    expect(applyProposal({ ...base, revision: 4 }, made.proposal)).toMatchObject({
      ok: false,
      stale: true,
      reason: expect.stringContaining('revision 4'),
    });
    // Only a position changed: the proposal still applies, and the new position stays.
    const nudged = structuredClone(base);
    (nudged.graph as { nodes: Array<{ position: { x: number } }> }).nodes[1]!.position.x = 999;
    const applied = applyProposal(nudged, made.proposal);
    if (!applied.ok) throw new Error('expected it to apply');
    expect(applied.graph.nodes[1]).toMatchObject({ position: { x: 999 }, data: { description: 'read it' } });
  });

  it('diffs input changes and removed nodes with their edges', () => {
    const after = applyFlowEdit(VALID, {
      mode: 'edit',
      summary: 'x',
      ops: [
        { op: 'remove_node', id: 'save' },
        { op: 'set_input_schema', inputSchema: { type: 'object', properties: {} } },
      ],
    });
    if (!after.ok) throw new Error('expected it to apply');
    expect(diffFlows(VALID, after)).toMatchObject({
      removedNodes: ['save'],
      removedEdges: [{ source: 'read', target: 'save' }],
      inputsChanged: true,
    });
  });
});

describe('inspectFlow', () => {
  it('shows the graph, its diagnostics, the used tools with their contracts and the rest by name', () => {
    const seen = inspectFlow({ ...VALID, name: 'copy' }, TOOLS);
    expect(seen.nodes.map((n) => n.id)).toEqual(['start', 'read', 'save']);
    expect(seen.tools.map((t) => t.name)).toEqual(['read_file', 'write_file']);
    expect(seen.tools[0]).toHaveProperty('outputSchema');
    expect(seen.otherTools).toEqual([{ name: 'wait', description: 'wait does things', effect: 'read' }]);
    expect(seen.diagnostics).toEqual([]);
  });
});
