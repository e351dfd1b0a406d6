import { fileGrantsOf, initialValues, inputFieldsOf, readInputs } from './run-form';

/** The run form's model: which widget each input gets, its first value, and what it reads back as. */

const schema = {
  type: 'object',
  required: ['report', 'rows'],
  properties: {
    report: { type: 'string', format: 'file', title: 'Report file' },
    rows: { type: 'array', items: { type: 'number' }, examples: [[1, 2]] },
    options: { type: 'object', default: { dryRun: true } },
    level: { type: 'integer', enum: [1, 2, 3], default: 2 },
    notify: { type: 'boolean', default: true },
    free: {},
  },
};

test('each input gets the widget of its type, its title as label, its example as placeholder', () => {
  expect(inputFieldsOf(schema).map((f) => [f.name, f.kind, f.label, f.required, f.placeholder])).toEqual([
    ['report', 'file', 'Report file', true, undefined],
    ['rows', 'list', 'rows', true, '[1,2]'],
    ['options', 'object', 'options', false, undefined],
    ['level', 'enum', 'level', false, undefined],
    ['notify', 'boolean', 'notify', false, undefined],
    ['free', 'text', 'free', false, undefined],
  ]);
});

test('defaults fill the form, and an untouched form reads back as those defaults', () => {
  const fields = inputFieldsOf(schema);
  const raw = initialValues(schema, fields);
  expect(raw).toEqual({
    report: '',
    rows: '',
    options: '{\n  "dryRun": true\n}',
    level: '1',
    notify: true,
    free: '',
  });
  const read = readInputs(schema, fields, raw);
  expect(read.inputs).toEqual({ options: { dryRun: true }, level: 2, notify: true });
  expect(read.issues.map((i) => [i.name, i.kind])).toEqual([
    ['report', 'required'],
    ['rows', 'required'],
  ]);
});

test('text that does not parse is its own reason, not also "required"; a wrong JSON shape is the server’s reason', () => {
  const fields = inputFieldsOf(schema);
  const raw = { ...initialValues(schema, fields), report: 'in/a.xlsx', rows: '[1, 2' };
  const bad = readInputs(schema, fields, raw);
  expect(bad.issues.map((i) => [i.name, i.kind])).toEqual([['rows', 'notJson']]);

  const shape = readInputs(schema, fields, { ...raw, rows: '{"a": 1}' });
  expect(shape.issues).toEqual([{ name: 'rows', kind: 'server', message: 'expected array, got object' }]);

  const good = readInputs(schema, fields, { ...raw, rows: '[3]', free: 'x' });
  expect(good.issues).toEqual([]);
  expect(good.inputs).toEqual({
    report: 'in/a.xlsx',
    rows: [3],
    options: { dryRun: true },
    level: 2,
    notify: true,
    free: 'x',
  });
});

test('a number field: blank is not given, text is refused, a decimal for an integer is the server’s refusal', () => {
  const s = { type: 'object', properties: { n: { type: 'integer' } } };
  const fields = inputFieldsOf(s);
  expect(readInputs(s, fields, { n: '  ' })).toEqual({ inputs: {}, issues: [] });
  expect(readInputs(s, fields, { n: 'ten' }).issues.map((i) => i.kind)).toEqual(['notNumber']);
  expect(readInputs(s, fields, { n: '1.5' }).issues).toEqual([
    { name: 'n', kind: 'server', message: 'expected integer, got number' },
  ]);
  expect(readInputs(s, fields, { n: '7' }).inputs).toEqual({ n: 7 });
});

describe('file inputs and live choices', () => {
  const files = {
    type: 'object',
    required: ['book', 'out', 'account'],
    properties: {
      book: { type: 'string', format: 'switchyard-file', title: 'Workbook' },
      out: { type: 'string', 'x-switchyard-auto': 'shared-directory' },
      account: { type: 'string', 'x-switchyard-enum': { tool: 'email_accounts_list', valueField: 'id' } },
      path: { type: 'string', format: 'file' },
    },
  };

  test('an upload picker, an automatic folder, a live dropdown; a plain file path stays a text field', () => {
    expect(inputFieldsOf(files).map((f) => [f.name, f.kind])).toEqual([
      ['book', 'upload'],
      ['out', 'directory'],
      ['account', 'choice'],
      ['path', 'file'],
    ]);
    expect(inputFieldsOf(files)[2]?.source).toEqual({ tool: 'email_accounts_list', valueField: 'id' });
  });

  test('the folder needs nothing; the upload and the choice are required until given', () => {
    const fields = inputFieldsOf(files);
    const empty = readInputs(files, fields, initialValues(files, fields));
    expect(empty.inputs).toEqual({ out: '@file:out' });
    expect(empty.issues.filter((i) => i.kind === 'required').map((i) => i.name)).toEqual(['book', 'account']);
    expect(fileGrantsOf(fields, initialValues(files, fields))).toEqual([]);
  });

  test('an uploaded file becomes a grant of its input and the input its @file: placeholder; a choice keeps its value type', () => {
    const fields = inputFieldsOf(files);
    const raw = { ...initialValues(files, fields), book: 'f1', account: JSON.stringify(7) };
    const read = readInputs(files, fields, raw);
    expect(read.issues).toEqual([
      { name: 'account', kind: 'server', message: 'expected string, got number' },
    ]);
    expect(read.inputs).toEqual({ book: '@file:book', out: '@file:out', account: 7 });
    expect(fileGrantsOf(fields, raw)).toEqual([{ name: 'book', refs: ['f1'] }]);
  });
});

test('a text whose default or example spans lines is multi-line, and keeps its line breaks', () => {
  const letter = {
    type: 'object',
    properties: {
      subject: { type: 'string', default: '{value}: figures' },
      body: { type: 'string', default: 'Hello,\n\nattached.' },
      note: { type: 'string', examples: ['one\ntwo'] },
    },
  };
  const fields = inputFieldsOf(letter);
  expect(fields.map((f) => [f.name, f.multiline ?? false])).toEqual([
    ['subject', false],
    ['body', true],
    ['note', true],
  ]);
  expect(readInputs(letter, fields, initialValues(letter, fields)).inputs).toEqual({
    subject: '{value}: figures',
    body: 'Hello,\n\nattached.',
  });
});
