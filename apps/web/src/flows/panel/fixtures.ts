import type { ToolDescriptor } from '@switchyard/contracts';
import type { GraphLike, ToolWithOutput } from './fields';

/** A small flow for the panel's tests: start → fetch → total, a loose `other` node, a note. */
export const FETCH_OUTPUT = {
  type: 'object',
  properties: {
    items: {
      type: 'array',
      description: 'what was found',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string', examples: ['widget'] },
          price: { type: 'number', example: 9.5 },
        },
      },
    },
    total: { type: 'integer' },
  },
};

export const INPUT_SCHEMA = {
  type: 'object',
  properties: {
    count: { type: 'integer', title: 'How many' },
    title: { type: 'string', description: 'shown on top' },
  },
  required: ['count'],
};

function tool(
  name: string,
  extra: Partial<ToolDescriptor> & { outputSchema?: unknown } = {},
): ToolWithOutput {
  return {
    name,
    description: `${name} does things`,
    inputSchema: { type: 'object', properties: {} },
    effect: 'read',
    idempotent: true,
    source: 'builtin',
    ...extra,
  };
}

export const TOOLS: ToolWithOutput[] = [
  tool('http_fetch', { outputSchema: FETCH_OUTPUT }),
  tool('summarise'),
  tool('send_mail', { effect: 'external', idempotent: false }),
];

export const GRAPH: GraphLike = {
  nodes: [
    { id: 'start', type: 'start', data: {} },
    { id: 'fetch', type: 'tool', data: { tool: 'http_fetch', label: 'Fetch prices' } },
    { id: 'sum', type: 'tool', data: { tool: 'summarise' } },
    { id: 'mail', type: 'tool', data: { tool: 'send_mail' } },
    { id: 'other', type: 'tool', data: { tool: 'summarise' } },
    { id: 'n1', type: 'note', data: { text: 'hello' } },
  ],
  edges: [
    { source: 'start', target: 'fetch' },
    { source: 'fetch', target: 'sum' },
    { source: 'sum', target: 'mail' },
    { source: 'n1', target: 'mail' },
    // Downstream of mail: mail cannot reference it (the edge would close a cycle).
    { source: 'mail', target: 'other' },
  ],
};
