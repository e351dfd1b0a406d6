import type { PlanIssue } from '@switchyard/contracts';
import { validatePlan } from './validate';

const tools = [
  {
    name: 'read_file',
    inputSchema: {
      type: 'object',
      properties: { filePath: { type: 'string' } },
      required: ['filePath'],
      additionalProperties: false,
    },
  },
  {
    name: 'wait',
    inputSchema: {
      type: 'object',
      properties: { ms: { type: 'integer', minimum: 0 }, value: {} },
      required: ['ms'],
      additionalProperties: false,
    },
  },
  {
    name: 'sum',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
];

const step = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  tool: 'wait',
  arguments: { ms: 0 },
  ...extra,
});

function issues(plan: unknown, opts: { inputNames?: string[] } = {}): PlanIssue[] {
  const r = validatePlan(plan, { tools, ...opts });
  return r.ok ? [] : r.issues;
}

describe('validatePlan', () => {
  it('accepts a valid plan with references of every kind', () => {
    const plan = {
      steps: [
        step('a', { arguments: { ms: 0, value: { files: ['x.txt'] } } }),
        step('b', {
          tool: 'read_file',
          arguments: { filePath: '{{steps.0.result.files[0]}}' },
          dependsOn: ['a'],
        }),
        step('c', {
          tool: 'sum',
          arguments: { a: '{{last.result}}', b: '{{node.a.result.count}}' },
          dependsOn: ['b'],
        }),
        step('d', {
          arguments: { ms: '{{inputs.delay}}', value: 'got {{node.c.result}} for {{inputs.user}}' },
          dependsOn: ['c'],
        }),
      ],
    };
    const r = validatePlan(plan, { tools, inputNames: ['delay', 'user'] });
    expect(r).toMatchObject({ ok: true });
  });

  it.each<[string, unknown, Partial<PlanIssue>]>([
    [
      'a cycle, listing it',
      {
        steps: [
          step('a', { dependsOn: ['c'] }),
          step('b', { dependsOn: ['a'] }),
          step('c', { dependsOn: ['b'] }),
        ],
      },
      { code: 'cycle', message: 'dependency cycle: a → c → b → a', path: '$.steps[0].dependsOn' },
    ],
    [
      'a self-dependency',
      { steps: [step('a', { dependsOn: ['a'] })] },
      { code: 'self_dependency', path: '$.steps[0].dependsOn[0]' },
    ],
    [
      'a missing dependency',
      { steps: [step('a', { dependsOn: ['ghost'] })] },
      { code: 'missing_dependency', path: '$.steps[0].dependsOn[0]' },
    ],
    ['duplicate ids', { steps: [step('a'), step('a')] }, { code: 'duplicate_id', path: '$.steps[1].id' }],
    [
      'an unknown tool',
      { steps: [step('a', { tool: 'rm_rf' })] },
      { code: 'unknown_tool', path: '$.steps[0].tool' },
    ],
    [
      'a missing required argument',
      { steps: [step('a', { tool: 'read_file', arguments: {} })] },
      { code: 'invalid_arguments', path: '$.steps[0].arguments.filePath' },
    ],
    [
      'a mistyped argument',
      { steps: [step('a', { arguments: { ms: 'soon' } })] },
      { code: 'invalid_arguments', path: '$.steps[0].arguments.ms' },
    ],
    [
      'an unknown argument',
      { steps: [step('a', { arguments: { ms: 1, extra: true } })] },
      { code: 'invalid_arguments', path: '$.steps[0].arguments' },
    ],
    [
      'a malformed reference',
      {
        steps: [
          step('a'),
          step('b', { arguments: { ms: 0, value: '{{steps.zero.result}}' }, dependsOn: ['a'] }),
        ],
      },
      { code: 'malformed_reference', path: '$.steps[1].arguments.value' },
    ],
    [
      'unbalanced braces',
      { steps: [step('a', { arguments: { ms: 0, value: 'oops {{inputs.x' } })] },
      { code: 'malformed_reference' },
    ],
    [
      'a dangling step index',
      {
        steps: [
          step('a'),
          step('b', { arguments: { ms: 0, value: '{{steps.5.result}}' }, dependsOn: ['a'] }),
        ],
      },
      { code: 'dangling_reference' },
    ],
    [
      'a dangling node id',
      { steps: [step('a', { arguments: { ms: 0, value: '{{node.nope.result}}' } })] },
      { code: 'dangling_reference' },
    ],
    [
      'last.result on the first step',
      { steps: [step('a', { arguments: { ms: 0, value: '{{last.result}}' } })] },
      { code: 'dangling_reference', message: '{{last.result}}: the first step has no previous step' },
    ],
    [
      'a reference to its own result',
      { steps: [step('a', { arguments: { ms: 0, value: '{{node.a.result}}' } })] },
      { code: 'dangling_reference' },
    ],
    [
      'a reference to a step that is not a dependency',
      { steps: [step('a'), step('b', { arguments: { ms: 0, value: '{{node.a.result}}' } })] },
      { code: 'reference_not_a_dependency', path: '$.steps[1].arguments.value' },
    ],
    [
      'an undeclared input',
      { steps: [step('a', { arguments: { ms: '{{inputs.nope}}' } })] },
      { code: 'unknown_input' },
    ],
    [
      '65 steps',
      { steps: Array.from({ length: 65 }, (_, i) => step(`s${i}`)) },
      { code: 'too_many_steps', path: '$.steps' },
    ],
    [
      'a huge plan',
      { steps: [step('a', { arguments: { ms: 0, value: 'x'.repeat(300_000) } })] },
      { code: 'too_large', path: '$' },
    ],
    [
      'deeply nested arguments',
      { steps: [step('a', { arguments: { ms: 0, value: JSON.parse('['.repeat(40) + ']'.repeat(40)) } })] },
      { code: 'too_large', path: '$.steps[0].arguments' },
    ],
    [
      'arguments nested 3,000 levels (refused, not a stack overflow)',
      {
        steps: [step('a', { arguments: { ms: 0, value: JSON.parse('['.repeat(3000) + ']'.repeat(3000)) } })],
      },
      { code: 'too_large', path: '$.steps[0].arguments' },
    ],
    ['no steps', { steps: [] }, { code: 'invalid', path: '$.steps' }],
    ['a bad step id', { steps: [step('has space')] }, { code: 'invalid', path: '$.steps[0].id' }],
    [
      'an unknown field',
      { steps: [step('a', { shell: 'rm -rf /' })] },
      { code: 'invalid', path: '$.steps[0]' },
    ],
    [
      'a retry outside 1–5',
      { steps: [step('a', { retry: { attempts: 9 } })] },
      { code: 'invalid', path: '$.steps[0].retry.attempts' },
    ],
    ['not an object', 'steps: please', { code: 'invalid', path: '$' }],
  ])('refuses %s', (_, plan, expected) => {
    const found = issues(plan, { inputNames: ['delay'] });
    expect(found).toEqual(expect.arrayContaining([expect.objectContaining(expected)]));
  });

  it('treats an exact placeholder as valid for any schema type', () => {
    const plan = {
      steps: [
        step('a'),
        step('b', { tool: 'sum', arguments: { a: '{{node.a.result}}', b: 2 }, dependsOn: ['a'] }),
      ],
    };
    expect(issues(plan)).toEqual([]);
  });

  it('still checks a placeholder inside text as a string', () => {
    const plan = {
      steps: [
        step('a'),
        step('b', { tool: 'sum', arguments: { a: 'n={{node.a.result}}', b: 2 }, dependsOn: ['a'] }),
      ],
    };
    expect(issues(plan)).toEqual([
      expect.objectContaining({ code: 'invalid_arguments', path: '$.steps[1].arguments.a' }),
    ]);
  });

  it('reports every problem, not just the first', () => {
    const plan = { steps: [step('a', { tool: 'nope' }), step('a', { dependsOn: ['ghost'] })] };
    expect(
      issues(plan)
        .map((i) => i.code)
        .sort(),
    ).toEqual(['duplicate_id', 'missing_dependency', 'unknown_tool']);
  });

  it('allows references through transitive dependencies', () => {
    const plan = {
      steps: [
        step('a'),
        step('b', { dependsOn: ['a'] }),
        step('c', { arguments: { ms: 0, value: '{{node.a.result}}' }, dependsOn: ['b'] }),
      ],
    };
    expect(issues(plan)).toEqual([]);
  });

  describe('effects', () => {
    const typed = [
      { name: 'look', effect: 'read' as const, idempotent: false, inputSchema: { type: 'object' } },
      { name: 'put', effect: 'write' as const, idempotent: true, inputSchema: { type: 'object' } },
      { name: 'send', effect: 'external' as const, idempotent: false, inputSchema: { type: 'object' } },
    ];
    const run = (plan: unknown, readOnly = false) => {
      const r = validatePlan(plan, { tools: typed, readOnly });
      return r.ok ? [] : r.issues.map((i) => [i.path, i.code]);
    };

    it('refuses non-read steps in a read-only plan, naming each', () => {
      const plan = {
        steps: [
          { id: 'a', tool: 'look' },
          { id: 'b', tool: 'put' },
          { id: 'c', tool: 'send' },
        ],
      };
      expect(run(plan, true)).toEqual([
        ['$.steps[1].tool', 'not_read_only'],
        ['$.steps[2].tool', 'not_read_only'],
      ]);
      expect(run(plan, false)).toEqual([]);
    });

    it('allows retries only of read or idempotent tools, and 1 to 5 attempts', () => {
      const retry = (tool: string, attempts: number) => ({ steps: [{ id: 'a', tool, retry: { attempts } }] });
      expect(run(retry('look', 3))).toEqual([]);
      expect(run(retry('put', 5))).toEqual([]);
      expect(run(retry('send', 2))).toEqual([['$.steps[0].retry', 'retry_not_allowed']]);
      expect(run(retry('send', 1))).toEqual([]);
      expect(run(retry('look', 6))).toEqual([['$.steps[0].retry.attempts', 'invalid']]);
      expect(run(retry('look', 0))).toEqual([['$.steps[0].retry.attempts', 'invalid']]);
    });
  });

  it('validates against schemas that arrive as fresh objects each time (no per-object compile cache)', () => {
    const fresh = () => JSON.parse(JSON.stringify(tools)) as typeof tools;
    for (let i = 0; i < 3; i++) {
      const r = validatePlan(
        { steps: [{ id: 'a', tool: 'wait', arguments: { ms: -1 } }] },
        { tools: fresh() },
      );
      expect(r.ok).toBe(false);
    }
  });
});

describe('validatePlan where code generation is forbidden (a strict Content-Security-Policy)', () => {
  it('reports the tools whose arguments it could not check instead of passing them silently', () => {
    jest.isolateModules(() => {
      const realFunction = globalThis.Function;
      // What a browser does under `script-src 'self'`: new Function throws an EvalError.
      const forbidden = function () {
        throw new EvalError(
          "Refused to evaluate a string as JavaScript because 'unsafe-eval' is not allowed",
        );
      } as unknown as FunctionConstructor;
      globalThis.Function = forbidden;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { validatePlan: validate } = require('./validate') as typeof import('./validate');
        const tools = [
          {
            name: 'strict_tool',
            inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
          },
        ];
        const result = validate(
          { steps: [{ id: 'a', tool: 'strict_tool', arguments: { n: 'x' } }] },
          { tools },
        );
        expect(result.uncheckedTools).toEqual(['strict_tool']);
      } finally {
        globalThis.Function = realFunction;
      }
    });
  });
});
