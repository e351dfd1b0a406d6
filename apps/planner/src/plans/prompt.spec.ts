import type { ToolDescriptor } from '@switchyard/contracts';
import { validatePlan } from '@switchyard/plan';
import { correctionPrompt, EXAMPLE_PLAN, planJsonSchema, systemPrompt, userPrompt } from './prompt';

const tools: ToolDescriptor[] = [
  {
    name: 'read_file',
    description: 'Reads a file\n  of the workspace.',
    inputSchema: {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { filePath: { type: 'string' } },
      required: ['filePath'],
      additionalProperties: false,
    },
    effect: 'read',
    idempotent: true,
    source: 'builtin',
  },
  {
    name: 'mcp__github__create_issue',
    description: 'Opens an issue',
    inputSchema: { type: 'object', properties: { title: { type: 'string' } } },
    effect: 'external',
    idempotent: false,
    source: 'mcp',
  },
];

describe('planner prompt', () => {
  const system = systemPrompt(tools);

  it('derives the plan schema from AgentPlan (input side)', () => {
    const schema = planJsonSchema();
    expect(schema['$schema']).toBeUndefined();
    expect(schema).toMatchObject({ type: 'object', required: ['steps'], additionalProperties: false });
    const step = (schema['properties'] as { steps: { items: { required: string[] } } }).steps.items;
    // arguments, dependsOn and description have defaults, so the model may leave them out
    expect(step.required).toEqual(['id', 'tool']);
    expect(system).toContain(JSON.stringify(schema));
  });

  it('lists every tool with its effect, description and argument schema', () => {
    expect(system).toContain('- read_file [read]: Reads a file of the workspace.');
    expect(system).toContain(
      'arguments: {"type":"object","properties":{"filePath":{"type":"string"}},"required":["filePath"],"additionalProperties":false}',
    );
    expect(system).toContain('- mcp__github__create_issue [external]: Opens an issue');
    expect(system).toContain('arguments: {"type":"object","properties":{"title":{"type":"string"}}}');
    expect(systemPrompt([])).toContain('(no tools are available)');
    const idempotentWrite = { ...tools[1], name: 'put_object', effect: 'write', idempotent: true } as const;
    expect(systemPrompt([idempotentWrite])).toContain('- put_object [write, idempotent]: Opens an issue');
  });

  it('explains the rules and the whole reference grammar', () => {
    for (const text of [
      '{{steps.N.result}}',
      '{{last.result}}',
      '{{node.<id>.result.a.b[0]}}',
      '{{inputs.name}}',
      'counted from 0',
      'directly or transitively',
      'with its JSON type',
      'run in parallel',
      'at most 64 steps',
      '`dependsOn` lists the ids of the steps that must finish before this step starts',
    ]) {
      expect(system).toContain(text);
    }
    expect(system.trim().endsWith('no Markdown code fence.')).toBe(true);
    expect(system).toContain('Answer with only the JSON object of the plan');
  });

  it('shows an example that is itself a valid plan', () => {
    const anyArgs = { inputSchema: { type: 'object' } };
    const exampleTools = ['search_notes', 'count_items', 'save_text'].map((name) => ({ name, ...anyArgs }));
    expect(validatePlan(JSON.parse(EXAMPLE_PLAN), { tools: exampleTools })).toMatchObject({ ok: true });
    expect(system).toContain(EXAMPLE_PLAN);
  });

  it('gives the goal, the files and the input names', () => {
    expect(userPrompt({ goal: '  Summarise the notes ' })).toBe('Goal:\nSummarise the notes');
    const full = userPrompt({
      goal: 'Summarise',
      files: ['notes/a.md', 'b.txt'],
      inputNames: ['files', 'topic'],
    });
    expect(full).toContain('- notes/a.md\n- b.txt');
    expect(full).toContain('{{inputs.files}}');
    expect(full).toContain('Inputs of the run, usable as {{inputs.<name>}}: files, topic');
    const unbound = userPrompt({ goal: 'g', files: ['a'], inputNames: [] });
    expect(unbound).not.toContain('{{inputs.files}}');
    expect(unbound).toContain('do not use {{inputs.…}} references');
  });

  it("names the run's file grants and how to pass them, never a path", () => {
    const text = userPrompt({
      goal: 'Split the workbook',
      grants: [
        { name: 'book', kind: 'refs', directory: false, writable: false },
        { name: 'out', kind: 'shared', directory: true, writable: true },
      ],
    });
    expect(text).toContain('write "@file:<name>" in an argument');
    expect(text).toContain('- book: a file, uploaded, read-only');
    expect(text).toContain('- out: a folder, a shared folder for this run, writable');
    expect(userPrompt({ goal: 'g' })).not.toContain('@file:');
  });

  it('asks for a corrected complete plan, quoting every issue', () => {
    const text = correctionPrompt([
      { path: '$.steps[0].tool', code: 'unknown_tool', message: 'no tool named nope in the catalog' },
      { path: '$', code: 'invalid', message: 'x' },
    ]);
    expect(text).toContain('- $.steps[0].tool: no tool named nope in the catalog\n- $: x');
    expect(text).toContain('complete corrected plan');
  });
});
