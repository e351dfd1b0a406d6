import { checkInputs, checkInputSchema, inputNamesOf } from './inputs';

const schema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    count: { type: 'integer' },
    ratio: { type: 'number' },
    dryRun: { type: 'boolean' },
    options: { type: 'object' },
    tags: { type: 'array' },
    note: { type: ['string', 'null'] },
    mode: { enum: ['fast', 'slow'] },
    anything: {},
  },
  required: ['name', 'count', 'mode'],
};

describe('checkInputs', () => {
  it('accepts inputs of the declared types, and extra inputs', () => {
    expect(
      checkInputs(schema, {
        name: 'n',
        count: 3,
        ratio: 2,
        dryRun: false,
        options: { a: 1 },
        tags: [],
        note: null,
        mode: 'slow',
        anything: [1, 'x'],
        extra: 'allowed',
      }),
    ).toEqual([]);
    expect(checkInputs(schema, { name: 'n', count: 1, mode: 'fast', ratio: 0.5, note: 'text' })).toEqual([]);
  });

  it('lists every missing required field and every mistyped field', () => {
    expect(
      checkInputs(schema, {
        count: 1.5,
        ratio: '2',
        dryRun: 'yes',
        options: [],
        tags: { a: 1 },
        note: 3,
        mode: 'medium',
      }),
    ).toEqual([
      { path: 'inputs.name', message: 'required' },
      { path: 'inputs.count', message: 'expected integer, got number' },
      { path: 'inputs.ratio', message: 'expected number, got string' },
      { path: 'inputs.dryRun', message: 'expected boolean, got string' },
      { path: 'inputs.options', message: 'expected object, got array' },
      { path: 'inputs.tags', message: 'expected array, got object' },
      { path: 'inputs.note', message: 'expected string or null, got number' },
      { path: 'inputs.mode', message: 'must be one of "fast", "slow"' },
    ]);
  });

  it('treats null as a value of type null, not as missing', () => {
    expect(checkInputs(schema, { name: null, count: 1, mode: 'fast' })).toEqual([
      { path: 'inputs.name', message: 'expected string, got null' },
    ]);
  });

  it('lists all required fields of an empty input', () => {
    expect(checkInputs(schema, {}).map((i) => i.path)).toEqual([
      'inputs.name',
      'inputs.count',
      'inputs.mode',
    ]);
  });

  it('accepts anything for a schema without properties', () => {
    expect(checkInputs({ type: 'object' }, { a: 1 })).toEqual([]);
  });
});

describe('inputNamesOf', () => {
  it('names the declared properties', () => {
    expect(inputNamesOf(schema)).toEqual([
      'name',
      'count',
      'ratio',
      'dryRun',
      'options',
      'tags',
      'note',
      'mode',
      'anything',
    ]);
    expect(inputNamesOf({ type: 'object' })).toEqual([]);
  });
});

describe('checkInputSchema', () => {
  it('accepts a JSON Schema, also one with an $id used twice', () => {
    const withId = { $id: 'https://example.com/in', type: 'object', properties: { a: { type: 'string' } } };
    expect(checkInputSchema(withId)).toEqual([]);
    expect(checkInputSchema(withId)).toEqual([]);
    expect(checkInputSchema(schema)).toEqual([]);
  });

  it('refuses a schema that does not compile', () => {
    expect(checkInputSchema({ type: 'object', properties: { a: { type: 'strnig' } } })).toEqual([
      {
        path: '$.inputSchema',
        code: 'invalid',
        message: expect.stringContaining('not a usable JSON Schema'),
      },
    ]);
    expect(
      checkInputSchema({ type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }),
    ).toEqual([expect.objectContaining({ path: '$.inputSchema', code: 'invalid' })]);
  });
});

describe('checkInputSchema where code generation is forbidden (a strict Content-Security-Policy)', () => {
  it('leaves the schema to the server instead of calling a good schema unusable', () => {
    jest.isolateModules(() => {
      const realFunction = globalThis.Function;
      globalThis.Function = function () {
        throw new EvalError(
          "Refused to evaluate a string as JavaScript because 'unsafe-eval' is not allowed",
        );
      } as unknown as FunctionConstructor;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        const { checkInputSchema: check } = require('./inputs') as typeof import('./inputs');
        expect(check({ type: 'object', properties: { who: { type: 'string' } } })).toEqual([]);
      } finally {
        globalThis.Function = realFunction;
      }
    });
  });
});
