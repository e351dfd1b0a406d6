import { PlanStep } from '@switchyard/contracts';
import { compileGraph, graphPathOf } from './compile';

const tool = (id: string, data: Record<string, unknown> = {}) => ({
  id,
  type: 'tool',
  position: { x: 0, y: 0 },
  data: { tool: 'wait', arguments: { ms: 0 }, ...data },
});
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target });

function compiled(graph: unknown) {
  const result = compileGraph(graph);
  if (!result.ok) throw new Error(`expected a plan, got ${JSON.stringify(result.issues)}`);
  return result;
}

function issuesOf(graph: unknown) {
  const result = compileGraph(graph);
  if (result.ok) throw new Error('expected issues');
  return result.issues;
}

describe('compileGraph', () => {
  it('turns tool nodes into steps and edges into dependsOn, in topological order with ties by node order', () => {
    const graph = {
      nodes: [
        tool('send', { tool: 'write_file', description: 'Send it', requiresApproval: true }),
        { id: 'note-1', type: 'note', data: { text: 'remember' } },
        tool('fetch', { retry: { attempts: 3, backoffMs: 10 } }),
        tool('read'),
        tool('merge'),
      ],
      edges: [edge('read', 'merge'), edge('fetch', 'merge'), edge('merge', 'send'), edge('fetch', 'merge')],
      notes: [{ text: 'a sticky note' }],
    };
    const { plan, nodeIndex } = compiled(graph);
    expect(plan.steps.map((s) => s.id)).toEqual(['fetch', 'read', 'merge', 'send']);
    expect(nodeIndex).toEqual([2, 3, 4, 0]);
    expect(plan.steps[2]).toEqual({
      id: 'merge',
      tool: 'wait',
      arguments: { ms: 0 },
      dependsOn: ['fetch', 'read'],
      description: '',
    });
    expect(plan.steps[0]?.retry).toEqual({ attempts: 3, backoffMs: 10 });
    expect(plan.steps[3]).toMatchObject({
      tool: 'write_file',
      description: 'Send it',
      requiresApproval: true,
      dependsOn: ['merge'],
    });
  });

  it('gives the same plan however the edges are listed', () => {
    const nodes = [tool('a'), tool('b'), tool('c'), tool('d')];
    const one = compiled({ nodes, edges: [edge('a', 'c'), edge('b', 'c'), edge('c', 'd')] }).plan;
    const two = compiled({ nodes, edges: [edge('c', 'd'), edge('b', 'c'), edge('a', 'c')] }).plan;
    expect(two).toEqual(one);
    expect(one.steps.map((s) => s.id)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('puts a node after everything it waits for even when it is drawn first', () => {
    const { plan } = compiled({ nodes: [tool('last'), tool('first')], edges: [edge('first', 'last')] });
    expect(plan.steps.map((s) => s.id)).toEqual(['first', 'last']);
  });

  it('takes a goal from the graph', () => {
    expect(compiled({ goal: 'Do {{inputs.x}}', nodes: [tool('a')] }).plan.goal).toBe('Do {{inputs.x}}');
  });

  it('carries a pinned result only once plan steps accept one', () => {
    const { plan } = compiled({ nodes: [tool('a', { pinned: { result: { rows: 3 } } })] });
    const accepted = PlanStep.safeParse({ id: 'a', tool: 't', pinned: { result: 1 } }).success;
    if (accepted) expect(plan.steps[0]).toMatchObject({ pinned: { result: { rows: 3 } } });
    else expect(plan.steps[0]).not.toHaveProperty('pinned');
  });

  it('reports a cycle listing its nodes', () => {
    const issues = issuesOf({
      nodes: [tool('start'), tool('a'), tool('b'), tool('c')],
      edges: [edge('start', 'a'), edge('a', 'b'), edge('b', 'c'), edge('c', 'a')],
    });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      code: 'cycle',
      path: expect.stringMatching(/^\$\.graph\.nodes\[[123]\]$/),
    });
    const listed = /cycle: (.*)$/.exec(issues[0]?.message ?? '')?.[1]?.split(' → ') ?? [];
    expect(listed).toHaveLength(4);
    expect(listed[0]).toBe(listed[3]);
    expect(new Set(listed)).toEqual(new Set(['a', 'b', 'c']));
    // Listed in the direction of the edges.
    const next = new Map([
      ['a', 'b'],
      ['b', 'c'],
      ['c', 'a'],
    ]);
    for (let i = 0; i < 3; i++) expect(next.get(listed[i] as string)).toBe(listed[i + 1]);
  });

  it('refuses edges to unknown or non-tool nodes and to the node itself, naming the edge', () => {
    const issues = issuesOf({
      nodes: [tool('a'), tool('b'), { id: 'n', type: 'note', data: {} }],
      edges: [edge('a', 'b'), edge('a', 'ghost'), edge('n', 'b'), edge('b', 'b')],
    });
    expect(issues).toEqual([
      {
        path: '$.graph.edges[1]',
        code: 'missing_dependency',
        message: 'edge 1 joins ghost, which is not a node',
      },
      {
        path: '$.graph.edges[2]',
        code: 'invalid',
        message: 'edge 2 joins n, which is not a tool node; only tool nodes can be connected',
      },
      { path: '$.graph.edges[3]', code: 'self_dependency', message: 'edge 3 joins b to itself' },
    ]);
  });

  it('accepts edges out of the start node and leaves them out of the plan', () => {
    const start = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
    const { plan, nodeIndex } = compiled({
      nodes: [start, tool('a'), tool('b')],
      edges: [edge('start', 'a'), edge('start', 'b'), edge('a', 'b')],
    });
    expect(plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['a', []],
      ['b', ['a']],
    ]);
    expect(nodeIndex).toEqual([1, 2]);
  });

  it('refuses edges into the start node and a second start node', () => {
    const issues = issuesOf({
      nodes: [tool('a'), { id: 'start', type: 'start' }, { id: 'start2', type: 'start' }],
      edges: [edge('start', 'a'), edge('a', 'start'), edge('start', 'start'), edge('start', 'ghost')],
    });
    expect(issues).toEqual([
      {
        path: '$.graph.nodes[2]',
        code: 'multiple_starts',
        message: 'node start2 is a second start node; a workflow has one (node start holds its inputs)',
      },
      {
        path: '$.graph.edges[1]',
        code: 'edge_into_start',
        message: 'edge 1 leads into the start node start; the start node only has outgoing edges',
      },
      expect.objectContaining({ path: '$.graph.edges[2]', code: 'edge_into_start' }),
      {
        path: '$.graph.edges[3]',
        code: 'missing_dependency',
        message: 'edge 3 joins ghost, which is not a node',
      },
    ]);
  });

  it('refuses tool nodes without a tool, duplicate node ids, and graphs without tool nodes', () => {
    expect(issuesOf({ nodes: [tool('a'), tool('b', { tool: undefined }), tool('a')], edges: [] })).toEqual([
      { path: '$.graph.nodes[2].id', code: 'duplicate_id', message: 'node id a is used more than once' },
      { path: '$.graph.nodes[1].data.tool', code: 'invalid', message: 'node b has no tool' },
    ]);
    expect(issuesOf({ nodes: [{ id: 'n', type: 'note' }] })).toEqual([
      {
        path: '$.graph.nodes',
        code: 'invalid',
        message: 'the graph has no tool nodes; a workflow needs at least one step',
      },
    ]);
  });

  it('refuses more than 64 tool nodes', () => {
    const nodes = Array.from({ length: 65 }, (_, i) => tool(`s${i}`));
    expect(issuesOf({ nodes })).toEqual([
      {
        path: '$.graph.nodes',
        code: 'too_many_steps',
        message: '65 tool nodes; a workflow has at most 64 steps',
      },
    ]);
  });

  it('reports a malformed graph with graph paths', () => {
    expect(issuesOf({ nodes: [{ id: 'bad id!', type: 'tool' }] })).toEqual([
      expect.objectContaining({ path: '$.graph.nodes[0].id', code: 'invalid' }),
    ]);
    expect(issuesOf('not a graph')).toEqual([expect.objectContaining({ path: '$.graph', code: 'invalid' })]);
    expect(issuesOf({ nodes: [tool('a', { retry: { attempts: 9 } })] })).toEqual([
      expect.objectContaining({ path: '$.graph.nodes[0].data.retry.attempts', code: 'invalid' }),
    ]);
  });

  it('keeps unknown fields of the graph out of the plan', () => {
    const { plan } = compiled({
      viewport: { zoom: 1 },
      nodes: [{ ...tool('a'), selected: true, data: { tool: 'wait', label: 'Wait', arguments: { ms: 1 } } }],
    });
    expect(plan).toEqual({
      steps: [{ id: 'a', tool: 'wait', arguments: { ms: 1 }, dependsOn: [], description: '' }],
    });
  });
});

describe('graphPathOf', () => {
  const nodeIndex = [3, 0];
  it.each([
    ['$', '$.graph'],
    ['$.steps', '$.graph.nodes'],
    ['$.steps[0]', '$.graph.nodes[3]'],
    ['$.steps[0].id', '$.graph.nodes[3].id'],
    ['$.steps[1].tool', '$.graph.nodes[0].data.tool'],
    ['$.steps[1].arguments.content', '$.graph.nodes[0].data.arguments.content'],
    ['$.steps[1].retry', '$.graph.nodes[0].data.retry'],
    ['$.steps[0].dependsOn[1]', '$.graph.nodes[3]'],
    ['$.inputSchema', '$.inputSchema'],
  ])('maps %s to %s', (from, to) => expect(graphPathOf(from, nodeIndex)).toBe(to));
});
