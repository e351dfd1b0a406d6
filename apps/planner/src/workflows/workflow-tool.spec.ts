import type { ToolEffect } from '@switchyard/contracts';
import type { PublishedWorkflow } from '@switchyard/server-db-workflows';
import { workflowEffect, workflowTool } from './workflow-tool';

const effects = new Map<string, ToolEffect>([
  ['read_file', 'read'],
  ['list_dir', 'read'],
  ['write_file', 'write'],
  ['web_fetch', 'external'],
]);

const workflow = (tools: string[], over: Partial<PublishedWorkflow> = {}): PublishedWorkflow => ({
  workflowId: '0b4c2a9e-5f7e-4a63-9a57-3c1d1b0f6d11',
  version: 2,
  name: 'Tidy notes',
  description: 'Reads and tidies the notes',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  plan: {
    steps: tools.map((tool, i) => ({ id: `s${i}`, tool, arguments: {}, dependsOn: [], description: '' })),
  },
  effect: 'read',
  ...over,
});

describe('workflowTool', () => {
  it('describes a published workflow as a catalog tool with its input schema', () => {
    expect(workflowTool(workflow(['read_file']))).toEqual({
      name: 'run_workflow_0b4c2a9e-5f7e-4a63-9a57-3c1d1b0f6d11',
      description: 'Run the workflow "Tidy notes": Reads and tidies the notes',
      inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      effect: 'read',
      idempotent: false,
      source: 'workflow',
    });
    expect(workflowTool(workflow(['read_file'], { description: ' ' })).description).toBe(
      'Run the workflow "Tidy notes"',
    );
  });

  it('shows the effect the version was published with', () => {
    expect(workflowTool(workflow(['read_file'], { effect: 'external' })).effect).toBe('external');
  });
});

describe('workflowEffect', () => {
  it.each([
    [['read_file', 'list_dir'], 'read'],
    [['read_file', 'write_file'], 'write'],
    [['write_file', 'web_fetch', 'read_file'], 'external'],
    [['read_file', 'gone_tool'], 'external'],
  ])('takes the effect of %j as %s', (tools, effect) => {
    expect(workflowEffect(workflow(tools).plan, effects)).toBe(effect);
  });
});
