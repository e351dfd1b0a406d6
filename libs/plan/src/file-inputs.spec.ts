import { bindFileInputs, bindFilePlaceholders, fileInputsOf, fileNamesIn } from './file-inputs';

const schema = {
  type: 'object',
  properties: {
    workbook: { type: 'string', format: 'switchyard-file' },
    out: { type: 'string', 'x-switchyard-auto': 'shared-directory' },
    account: { type: 'string', 'x-switchyard-enum': { tool: 'email_accounts_list', valueField: 'id' } },
    region: { type: 'string' },
  },
  required: ['workbook', 'out'],
};

describe('file inputs', () => {
  it('finds picker, shared-directory and enum inputs', () => {
    const f = fileInputsOf(schema);
    expect(f.pickers).toEqual(['workbook']);
    expect(f.sharedDirectories).toEqual(['out']);
    expect([...f.enums]).toEqual([['account', { tool: 'email_accounts_list', valueField: 'id' }]]);
  });

  it('ignores a malformed x-switchyard-enum', () => {
    const f = fileInputsOf({
      properties: { a: { 'x-switchyard-enum': 'tool' }, b: { 'x-switchyard-enum': {} } },
    });
    expect(f.enums.size).toBe(0);
  });

  it('gives a shared-directory input its own directory and a picker its grant, both as @file:', () => {
    const b = bindFileInputs(schema, { region: 'north' }, [{ name: 'workbook', refs: ['x'] }] as never);
    expect(b.issues).toEqual([]);
    expect(b.inputs).toEqual({ region: 'north', workbook: '@file:workbook', out: '@file:out' });
    expect(b.grants).toEqual([
      { name: 'workbook', refs: ['x'] },
      { name: 'out', createSharedDirectory: true },
    ]);
  });

  it('leaves a picker without a grant unset, so a required one is reported missing', () => {
    const b = bindFileInputs(schema, {}, []);
    expect(b.inputs).toEqual({ out: '@file:out' });
  });

  it('refuses values typed for run-filled inputs and grants of the wrong kind', () => {
    const b = bindFileInputs(schema, { workbook: '/etc/passwd', out: '/tmp' }, [
      { name: 'out', nativePath: 'x', writable: false },
      { name: 'workbook', createSharedDirectory: true },
    ]);
    expect(b.issues.map((i) => i.path).sort()).toEqual([
      'files.out',
      'files.workbook',
      'inputs.out',
      'inputs.workbook',
    ]);
  });
});

describe('@file: placeholders', () => {
  it('finds names in nested strings, exact and embedded', () => {
    expect([...fileNamesIn({ a: '@file:in', b: ['cat @file:out/x.txt and @file:in'], c: 3 })].sort()).toEqual(
      ['in', 'out'],
    );
  });

  it('binds exact and embedded placeholders, leaving keys and other values alone', () => {
    const bound = bindFilePlaceholders(
      { path: '@file:out', cmd: 'wc -l @file:in/a.csv', '@file:key': 1, n: 2, list: ['@file:in'] },
      (n) => `/run/switchyard/files/${n}`,
    );
    expect(bound).toEqual({
      path: '/run/switchyard/files/out',
      cmd: 'wc -l /run/switchyard/files/in/a.csv',
      '@file:key': 1,
      n: 2,
      list: ['/run/switchyard/files/in'],
    });
  });

  it('takes the longest name: @file:input is not @file:in followed by "put"', () => {
    expect(bindFilePlaceholders('@file:input', (n) => `<${n}>`)).toBe('<input>');
  });

  it('lets the binder refuse a name', () => {
    expect(() =>
      bindFilePlaceholders('@file:nope', () => {
        throw new Error('no grant nope');
      }),
    ).toThrow('no grant nope');
  });
});
