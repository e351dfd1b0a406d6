import { fieldAt, fieldTree, MAX_FIELD_DEPTH, previewOf, sourcesFor, upstreamOf } from './fields';
import { FETCH_OUTPUT, GRAPH, INPUT_SCHEMA, TOOLS } from './fixtures';
import type { FieldNode } from '../types';

function paths(node: FieldNode): string[] {
  const here = node.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('') || '$';
  return [`${here}:${node.type}`, ...node.children.flatMap(paths)];
}

describe('field trees', () => {
  it('expands objects into properties and arrays into a [0] child, keeping descriptions and examples', () => {
    const root = fieldTree(FETCH_OUTPUT);
    expect(paths(root)).toEqual([
      '$:object',
      '.items:list',
      '.items[0]:object',
      '.items[0].name:text',
      '.items[0].price:number',
      '.total:number',
    ]);
    expect(fieldAt(root, ['items'])?.description).toBe('what was found');
    expect(fieldAt(root, ['items', 0, 'name'])?.example).toBe('widget');
    expect(fieldAt(root, ['items', 3, 'price'])?.example).toBe(9.5);
    expect(root.children.every((c) => !('lastRun' in c))).toBe(true);
  });

  it('merges a last-run value: its values at each path, and fields only the value has, typed from it', () => {
    const root = fieldTree(FETCH_OUTPUT, {
      items: [{ name: 'bolt', price: 2, inStock: true }],
      total: 1,
      note: 'cached',
    });
    expect(paths(root)).toEqual([
      '$:object',
      '.items:list',
      '.items[0]:object',
      '.items[0].name:text',
      '.items[0].price:number',
      '.items[0].inStock:boolean',
      '.total:number',
      '.note:text',
    ]);
    expect(fieldAt(root, ['items', 0, 'name'])?.lastRun).toBe('bolt');
    expect(fieldAt(root, ['note'])?.lastRun).toBe('cached');
    expect(previewOf(fieldAt(root, ['items', 0, 'price']) as FieldNode)).toEqual({ from: 'run', value: 2 });
    // Declared but absent from the run: the example is what there is to show.
    const declaredOnly = fieldTree(FETCH_OUTPUT, { total: 0 });
    expect(previewOf(fieldAt(declaredOnly, ['items', 0, 'name']) as FieldNode)).toEqual({
      from: 'example',
      value: 'widget',
    });
  });

  it('types a schema-less result entirely from the value, and a null last run is still a last run', () => {
    const root = fieldTree(undefined, { rows: [[1, 2]], ok: false });
    expect(paths(root)).toEqual([
      '$:object',
      '.rows:list',
      '.rows[0]:list',
      '.rows[0][0]:number',
      '.ok:boolean',
    ]);
    expect(fieldTree(undefined)).toEqual({ key: '', path: [], type: 'any', children: [] });
    expect('lastRun' in fieldTree({ type: 'string' }, null, true)).toBe(true);
  });

  it('stops expanding at the depth cap (recursive schemas do not hang)', () => {
    const deep: Record<string, unknown> = { type: 'object', properties: {} };
    let at = deep;
    for (let i = 0; i < 20; i++) {
      const next = { type: 'object', properties: {} };
      (at['properties'] as Record<string, unknown>)['x'] = next;
      at = next;
    }
    const longest = Math.max(...paths(fieldTree(deep)).map((p) => p.split('.').length - 1));
    expect(longest).toBe(MAX_FIELD_DEPTH);
  });
});

describe('sources of a node', () => {
  it('finds upstream nodes transitively, nearest first', () => {
    expect(upstreamOf('mail', GRAPH.edges)).toEqual(['sum', 'n1', 'fetch', 'start']);
    expect(upstreamOf('fetch', GRAPH.edges)).toEqual(['start']);
  });

  it('lists the workflow inputs, then every upstream tool node with its output fields', () => {
    const sources = sourcesFor({ nodeId: 'mail', graph: GRAPH, inputSchema: INPUT_SCHEMA, tools: TOOLS });
    expect(sources.map((s) => `${s.kind}:${s.id}:${s.label}`)).toEqual([
      'input:count:How many',
      'input:title:title',
      'node:sum:summarise',
      'node:fetch:Fetch prices',
    ]);
    const fetch = sources.find((s) => s.id === 'fetch');
    expect(fetch?.root.type).toBe('object');
    expect(fieldAt(fetch!.root, ['items', 0, 'price'])?.type).toBe('number');
    expect(sources[0]?.root.type).toBe('number');
    expect(sources[1]?.root.description).toBe('shown on top');
    // A tool without an output schema and no run yet: one untyped result.
    expect(sources.find((s) => s.id === 'sum')?.root).toMatchObject({ type: 'any', children: [] });
  });

  it('offers tool nodes not connected yet that could feed this one without a cycle, marked, after the rest', () => {
    const graph = {
      ...GRAPH,
      nodes: [...GRAPH.nodes, { id: 'lone', type: 'tool', data: { tool: 'summarise' } }],
    };
    const forMail = sourcesFor({ nodeId: 'mail', graph, inputSchema: INPUT_SCHEMA, tools: TOOLS });
    expect(forMail.map((s) => `${s.id}${s.unconnected ? '?' : ''}`)).toEqual([
      'count',
      'title',
      'sum',
      'fetch',
      'lone?',
    ]);
    // For fetch: sum, mail and other are downstream (a cycle), lone is free.
    const forFetch = sourcesFor({ nodeId: 'fetch', graph, inputSchema: INPUT_SCHEMA, tools: TOOLS });
    expect(forFetch.filter((s) => s.kind === 'node').map((s) => s.id)).toEqual(['lone']);
  });

  it('uses a pinned result before the last run, and the last run for tools that declare nothing', () => {
    const graph = {
      ...GRAPH,
      nodes: GRAPH.nodes.map((n) =>
        n.id === 'fetch' ? { ...n, data: { ...(n.data as object), pinned: { result: { total: 7 } } } } : n,
      ),
    };
    const sources = sourcesFor({
      nodeId: 'mail',
      graph,
      inputSchema: INPUT_SCHEMA,
      tools: TOOLS,
      results: { fetch: { total: 1 }, sum: { text: 'short' } },
      inputs: { count: 3 },
    });
    const byId = (id: string) => sources.find((s) => s.id === id)!;
    expect(fieldAt(byId('fetch').root, ['total'])?.lastRun).toBe(7);
    expect(fieldAt(byId('sum').root, ['text'])).toMatchObject({ type: 'text', lastRun: 'short' });
    expect(byId('count').root.lastRun).toBe(3);
    expect('lastRun' in byId('title').root).toBe(false);
  });
});
