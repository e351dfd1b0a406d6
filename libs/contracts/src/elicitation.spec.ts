import {
  checkElicitationContent,
  formDefaults,
  formFields,
  InputAnswerBody,
  RequestedSchema,
  type RequestedSchema as Schema,
} from './elicitation';

/** Every kind of field of the spec's forms, SEP-1330's enum forms included. */
const schema: Schema = RequestedSchema.parse({
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 2, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    site: { type: 'string', format: 'uri' },
    day: { type: 'string', format: 'date' },
    at: { type: 'string', format: 'date-time' },
    age: { type: 'integer', minimum: 0, maximum: 150, default: 30 },
    score: { type: 'number', minimum: 0, maximum: 10 },
    color: { type: 'string', enum: ['red', 'green'], default: 'green' },
    legacy: { type: 'string', enum: ['a', 'b'], enumNames: ['Alpha', 'Beta'] },
    plan: {
      type: 'string',
      oneOf: [
        { const: 'free', title: 'Free' },
        { const: 'pro', title: 'Professional' },
      ],
    },
    tags: { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['x', 'y', 'z'] } },
    sizes: {
      type: 'array',
      items: {
        anyOf: [
          { const: 's', title: 'Small' },
          { const: 'l', title: 'Large' },
        ],
      },
      default: ['s'],
    },
    ok: { type: 'boolean', default: true },
  },
  required: ['name', 'email', 'age'],
});

describe('elicitation forms', () => {
  it('turns every field kind into a form field: selects for enums, checkboxes for lists, defaults kept', () => {
    const fields = formFields(schema);
    expect(fields.map((f) => [f.name, f.kind, f.required])).toEqual([
      ['name', 'text', true],
      ['email', 'text', true],
      ['site', 'text', false],
      ['day', 'text', false],
      ['at', 'text', false],
      ['age', 'number', true],
      ['score', 'number', false],
      ['color', 'select', false],
      ['legacy', 'select', false],
      ['plan', 'select', false],
      ['tags', 'multiselect', false],
      ['sizes', 'multiselect', false],
      ['ok', 'boolean', false],
    ]);
    const byName = new Map(fields.map((f) => [f.name, f]));
    expect(byName.get('name')).toMatchObject({ label: 'Your name', minLength: 2, maxLength: 5 });
    expect(byName.get('legacy')).toMatchObject({
      options: [
        { value: 'a', label: 'Alpha' },
        { value: 'b', label: 'Beta' },
      ],
    });
    expect(byName.get('plan')).toMatchObject({
      options: [
        { value: 'free', label: 'Free' },
        { value: 'pro', label: 'Professional' },
      ],
    });
    expect(byName.get('sizes')).toMatchObject({ options: [{ value: 's', label: 'Small' }, { value: 'l' }] });
    expect(formDefaults(schema)).toEqual({ age: 30, color: 'green', sizes: ['s'], ok: true });
  });

  it('accepts a fitting answer and fills in the defaults of fields left out', () => {
    const { content, issues } = checkElicitationContent(schema, {
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/x',
      day: '2024-02-29',
      at: '2026-01-31T09:30:00Z',
      score: 2.5,
      legacy: 'b',
      plan: 'pro',
      tags: ['x', 'z'],
    });
    expect(issues).toEqual([]);
    expect(content).toEqual({
      name: 'Ada',
      email: 'ada@example.com',
      site: 'https://example.com/x',
      day: '2024-02-29',
      at: '2026-01-31T09:30:00Z',
      age: 30,
      score: 2.5,
      color: 'green',
      legacy: 'b',
      plan: 'pro',
      tags: ['x', 'z'],
      sizes: ['s'],
      ok: true,
    });
  });

  it('names every bad field by its path: required, types, ranges, lengths, formats, choices, unknown keys', () => {
    const { issues } = checkElicitationContent(schema, {
      name: 'A',
      site: 'not a uri',
      day: '2023-02-29',
      at: '2026-01-31 09:30',
      age: 30.5,
      score: 11,
      color: 'purple',
      plan: 'Professional',
      tags: [],
      sizes: ['s', 's'],
      ok: 'yes',
      extra: 1,
    });
    expect(Object.fromEntries(issues.map((i) => [i.path, i.message]))).toEqual({
      'content.extra': 'is not a field of this form',
      'content.name': 'must be at least 2 characters',
      'content.email': 'is required',
      'content.site': 'must be an absolute URI (such as https://example.com/page)',
      'content.day': 'must be a date as YYYY-MM-DD',
      'content.at': 'must be a date and time as RFC 3339 (such as 2026-01-31T09:30:00Z)',
      'content.age': 'must be a whole number',
      'content.score': 'must be at most 10',
      'content.color': 'must be one of "red", "green"',
      'content.plan': 'must be one of "free", "pro"',
      'content.tags': 'must have at least 1 choice',
      'content.sizes': 'must not list a choice twice',
      'content.ok': 'must be true or false',
    });
    expect(
      checkElicitationContent(schema, { name: 'Adalovelace', email: 'nope', tags: ['w', 'x', 'y'] }).issues,
    ).toEqual([
      { path: 'content.name', message: 'must be at most 5 characters' },
      { path: 'content.email', message: 'must be an email address' },
      { path: 'content.tags', message: '"w" is not one of the choices' },
    ]);
    expect(
      checkElicitationContent(schema, { name: 'Ada', email: 'a@b.co', tags: ['x', 'y', 'z'] }).issues,
    ).toEqual([{ path: 'content.tags', message: 'must have at most 2 choices' }]);
  });

  it('takes content only with accept', () => {
    expect(InputAnswerBody.safeParse({ action: 'decline' }).success).toBe(true);
    expect(InputAnswerBody.safeParse({ action: 'accept', content: { a: 1 } }).success).toBe(true);
    const bad = InputAnswerBody.safeParse({ action: 'cancel', content: { a: 1 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({
      path: ['content'],
      message: 'content goes only with accept',
    });
    expect(InputAnswerBody.safeParse({ action: 'maybe' }).success).toBe(false);
    expect(InputAnswerBody.safeParse({ action: 'accept', extra: 1 }).success).toBe(false);
  });
});
