import { newRow, rowProblems, rowsOf, schemaOf } from './start-schema';
import { portTypeOf } from '../types';

describe('the start node table and its schema', () => {
  it('reads a schema into rows and writes the same schema back', () => {
    const schema = {
      type: 'object',
      $comment: 'kept',
      properties: {
        count: { type: 'integer', title: 'How many', minimum: 1, examples: [3, 4] },
        mode: { type: 'string', enum: ['fast', 'slow'], format: 'hostname' },
        report: { type: 'string', format: 'switchyard-file', description: 'the sheet' },
        anything: { description: 'no type' },
        flags: { type: 'array', items: { type: 'boolean' } },
      },
      required: ['count', 'report'],
    };
    const rows = rowsOf(schema);
    expect(rows.map((r) => [r.name, r.kind, r.required, r.options, r.example])).toEqual([
      ['count', 'number', true, '', '3'],
      ['mode', 'text', false, 'fast, slow', ''],
      ['report', 'file', true, '', ''],
      ['anything', 'any', false, '', ''],
      ['flags', 'list', false, '', ''],
    ]);
    expect(rowProblems(rows).size).toBe(0);
    expect(schemaOf(rows, schema)).toEqual(schema);
  });

  it('changing a row type drops what no longer fits and keeps the rest', () => {
    const rows = rowsOf({
      type: 'object',
      properties: { mode: { type: 'string', enum: ['a'], format: 'email', description: 'd' } },
    });
    const changed = rows.map((r) => ({ ...r, kind: 'number' as const }));
    expect(schemaOf(changed)).toEqual({
      type: 'object',
      properties: { mode: { type: 'number', description: 'd' } },
    });
    expect(rowProblems([{ ...changed[0]!, options: '1, x' }]).get(changed[0]!.key)).toEqual([
      'options_invalid',
    ]);
  });

  it('names must be identifiers and unique; new rows get a free name', () => {
    const rows = rowsOf({ type: 'object', properties: { input2: { type: 'string' } } });
    const more = [...rows, newRow(rows)];
    expect(more.map((r) => r.name)).toEqual(['input2', 'input3']);
    const bad = [
      { ...more[0]!, name: 'a-b' },
      { ...more[1]!, name: '' },
      { ...newRow(more), name: 'ok_1' },
      { ...newRow(more), name: 'ok_1' },
    ];
    expect([...rowProblems(bad).values()]).toEqual([['name_invalid'], ['name_empty'], ['name_duplicate']]);
  });

  it('file inputs are file ports, enum-only inputs are typed from their values', () => {
    expect(portTypeOf({ type: 'string', format: 'switchyard-file' })).toBe('file');
    expect(portTypeOf({ enum: ['csv', 'json'] })).toBe('text');
    expect(portTypeOf({ enum: [1, 2] })).toBe('number');
    expect(portTypeOf({ enum: [1, 'a'] })).toBe('any');
  });
});
