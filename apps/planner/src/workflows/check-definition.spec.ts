import { AppError, type PlanIssue, type ToolDescriptor } from '@switchyard/contracts';
import { checkDefinition, definitionRefused, type DefinitionInput } from './check-definition';

const tools: ToolDescriptor[] = [
  {
    name: 'read_file',
    description: 'Reads a file',
    inputSchema: { type: 'object', properties: { filePath: { type: 'string' } }, required: ['filePath'] },
    effect: 'read',
    idempotent: true,
    source: 'builtin',
  },
  {
    name: 'send_mail',
    description: 'Sends a mail',
    inputSchema: { type: 'object', properties: { to: { type: 'string' }, body: {} }, required: ['to'] },
    effect: 'external',
    idempotent: false,
    source: 'builtin',
  },
];

const inputSchema = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };

async function check(input: Partial<DefinitionInput>, catalog = tools) {
  let asked = 0;
  const result = await checkDefinition({ inputSchema, ...input }, async () => {
    asked += 1;
    return catalog;
  });
  return { result, asked };
}

async function issues(input: Partial<DefinitionInput>): Promise<PlanIssue[]> {
  const { result } = await check(input);
  if (result.ok) throw new Error('expected issues');
  return result.issues;
}

const readStep = { id: 'read', tool: 'read_file', arguments: { filePath: '{{inputs.path}}' } };
const mailStep = {
  id: 'mail',
  tool: 'send_mail',
  arguments: { to: 'a@example.com', body: '{{node.read.result}}' },
  dependsOn: ['read'],
};

describe('checkDefinition', () => {
  it('accepts a valid plan and fills in its defaults', async () => {
    const { result } = await check({ plan: { goal: 'Mail {{inputs.path}}', steps: [readStep, mailStep] } });
    expect(result).toEqual({
      ok: true,
      graph: null,
      plan: {
        goal: 'Mail {{inputs.path}}',
        steps: [
          { ...readStep, dependsOn: [], description: '' },
          { ...mailStep, description: '' },
        ],
      },
    });
  });

  it('compiles a graph, which wins over a plan, and keeps the graph as sent', async () => {
    const graph = {
      nodes: [
        { id: 'mail', type: 'tool', data: { tool: 'send_mail', arguments: mailStep.arguments } },
        { id: 'read', type: 'tool', data: { tool: 'read_file', arguments: readStep.arguments } },
        { id: 'sticky', type: 'note', data: { text: 'hi' } },
      ],
      edges: [{ source: 'read', target: 'mail' }],
    };
    const { result } = await check({ graph, plan: { goal: 'the goal', steps: [{ id: 'x', tool: 'nope' }] } });
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.graph).toBe(graph);
    expect(result.plan.goal).toBe('the goal');
    expect(result.plan.steps.map((s) => [s.id, s.dependsOn])).toEqual([
      ['read', []],
      ['mail', ['read']],
    ]);
  });

  it('refuses undeclared inputs, unknown tools, bad references and cycles, with paths', async () => {
    expect(
      await issues({
        plan: {
          steps: [
            { id: 'a', tool: 'read_file', arguments: { filePath: '{{inputs.folder}}' }, dependsOn: ['b'] },
            { id: 'b', tool: 'read_file', arguments: { filePath: 'x' }, dependsOn: ['a'] },
            { id: 'c', tool: 'format_disk', arguments: {} },
            { id: 'd', tool: 'read_file', arguments: { filePath: '{{steps.9.result}}' } },
          ],
        },
      }),
    ).toEqual([
      expect.objectContaining({ path: '$.steps[0].dependsOn', code: 'cycle' }),
      {
        path: '$.steps[0].arguments.filePath',
        code: 'unknown_input',
        message: '{{inputs.folder}}: the inputs declare no folder',
      },
      { path: '$.steps[2].tool', code: 'unknown_tool', message: 'no tool named format_disk in the catalog' },
      expect.objectContaining({ path: '$.steps[3].arguments.filePath', code: 'dangling_reference' }),
    ]);
  });

  it('refuses more than 64 steps', async () => {
    const steps = Array.from({ length: 65 }, (_, i) => ({ ...readStep, id: `s${i}` }));
    expect(await issues({ plan: { steps } })).toEqual([expect.objectContaining({ code: 'too_many_steps' })]);
  });

  it('refuses retries of a tool that is neither read nor idempotent, and attempts outside 1-5', async () => {
    expect(
      await issues({ plan: { steps: [readStep, { ...mailStep, retry: { attempts: 3, backoffMs: 10 } }] } }),
    ).toEqual([expect.objectContaining({ path: '$.steps[1].retry', code: 'retry_not_allowed' })]);
    expect(await issues({ plan: { steps: [{ ...readStep, retry: { attempts: 6 } }] } })).toEqual([
      expect.objectContaining({ path: '$.steps[0].retry.attempts', code: 'invalid' }),
    ]);
    const { result } = await check({
      plan: { steps: [{ ...readStep, retry: { attempts: 5, backoffMs: 1 } }] },
    });
    expect(result.ok).toBe(true);
  });

  it('refuses a run_workflow_ step once, as nesting, whether or not the catalog has it', async () => {
    const nested = { id: 'inner', tool: 'run_workflow_0b4c2a9e-5f7e-4a63-9a57-3c1d1b0f6d11', arguments: {} };
    const expected = [
      {
        path: '$.steps[1].tool',
        code: 'invalid',
        message: `${nested.tool} runs a workflow; workflows cannot be nested in a workflow`,
      },
    ];
    expect(await issues({ plan: { steps: [readStep, nested] } })).toEqual(expected);
    const inCatalog = [
      ...tools,
      {
        ...tools[0],
        name: nested.tool,
        inputSchema: { type: 'object' },
        source: 'workflow',
      } as ToolDescriptor,
    ];
    const { result } = await check({ plan: { steps: [readStep, nested] } }, inCatalog);
    expect(result).toEqual({ ok: false, issues: expected });
  });

  it('points the issues of a compiled graph at its nodes', async () => {
    const graph = {
      nodes: [
        { id: 'mail', type: 'tool', data: { tool: 'send_mail', arguments: { to: '{{inputs.who}}' } } },
        { id: 'read', type: 'tool', data: { tool: 'read_file', arguments: readStep.arguments } },
        { id: 'nest', type: 'tool', data: { tool: 'run_workflow_x', arguments: {} } },
      ],
      edges: [{ source: 'read', target: 'mail' }],
    };
    expect(await issues({ graph })).toEqual([
      expect.objectContaining({ path: '$.graph.nodes[2].data.tool', code: 'invalid' }),
      expect.objectContaining({ path: '$.graph.nodes[0].data.arguments.to', code: 'unknown_input' }),
    ]);
  });

  it('refuses a graph that does not compile without asking for the catalog', async () => {
    const { result, asked } = await check({ graph: { nodes: [{ id: 'a', type: 'tool', data: {} }] } });
    expect(result).toEqual({
      ok: false,
      issues: [{ path: '$.graph.nodes[0].data.tool', code: 'invalid', message: 'node a has no tool' }],
    });
    expect(asked).toBe(0);
  });

  it('refuses an input schema that does not compile, alongside the other issues', async () => {
    const bad = { type: 'object', properties: { path: { type: 'text' } } };
    const found = await issues({ inputSchema: bad, plan: { steps: [{ ...readStep, tool: 'nope' }] } });
    expect(found.map((i) => [i.path, i.code])).toEqual([
      ['$.inputSchema', 'invalid'],
      ['$.steps[0].tool', 'unknown_tool'],
    ]);
  });

  it('asks for a plan or a graph', async () => {
    expect(await issues({ graph: null })).toEqual([
      { path: '$.plan', code: 'invalid', message: 'give a plan, a graph, or both' },
    ]);
  });
});

describe('definitionRefused', () => {
  it('lists every issue and names the first in the message', () => {
    const list: PlanIssue[] = [
      { path: '$.steps[0].tool', code: 'unknown_tool', message: 'no tool named x in the catalog' },
      { path: '$.steps[1].retry', code: 'retry_not_allowed', message: 'no' },
    ];
    const err = definitionRefused(list);
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe('validation_failed');
    expect(err.message).toBe(
      'the workflow is invalid: $.steps[0].tool: no tool named x in the catalog (and 1 more)',
    );
    expect(err.issues).toEqual([
      { path: '$.steps[0].tool', message: 'unknown_tool: no tool named x in the catalog' },
      { path: '$.steps[1].retry', message: 'retry_not_allowed: no' },
    ]);
    expect(err.details).toEqual({ issues: list });
  });
});
