import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { analyseWorkbook, splitWorkbook } from './excel';
import { SplitInput } from './schemas';

/** The workbook logic on real files, without the server: headers, types, filters, names, formulas. */

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'office-excel-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function save(
  name: string,
  rows: unknown[][],
  edit?: (ws: ExcelJS.Worksheet) => void,
): Promise<string> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Data');
  for (const r of rows) ws.addRow(r);
  edit?.(ws);
  const path = join(dir, name);
  await wb.xlsx.writeFile(path);
  return path;
}

async function valuesOf(path: string): Promise<unknown[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const ws = wb.worksheets[0] as ExcelJS.Worksheet;
  const out: unknown[][] = [];
  ws.eachRow((row) => out.push((row.values as unknown[]).slice(1)));
  return out;
}

const split = (input: Record<string, unknown>) => splitWorkbook(SplitInput.parse(input));

describe('workbook analysis and splitting', () => {
  it('finds the header under notes, names blank and repeated headers, and types each column', async () => {
    const path = await save('typed.xlsx', [
      ['Quarterly figures'],
      ['(confidential)'],
      ['Team', 'Score', null, 'Score', 'Active', 'Mixed'],
      ['a', 1, 'x', 2.5, true, 1],
      ['b', 2, null, 3, false, 'one'],
      ['a', 3, 'y', 4, true, null],
    ]);
    const { selected } = await analyseWorkbook({ file: path });
    expect(selected.headerRow).toBe(3);
    expect(selected.rowCount).toBe(3);
    expect(selected.columns.map((c) => [c.name, c.letter, c.type, c.distinctCount, c.emptyCount])).toEqual([
      ['Team', 'A', 'string', 2, 0],
      ['Score', 'B', 'integer', 3, 0],
      ['Column C', 'C', 'string', 2, 1],
      ['Score (2)', 'D', 'number', 3, 0],
      ['Active', 'E', 'boolean', 2, 0],
      ['Mixed', 'F', 'mixed', 2, 1],
    ]);
    // Asked for explicitly, the header is where the caller says.
    expect((await analyseWorkbook({ file: path, headerRow: 1 })).selected.rowCount).toBe(5);
  });

  it('filters with every kind of operator, keeps blanks only when asked, and writes formulas as values', async () => {
    const path = await save(
      'orders.xlsx',
      [
        ['Region', 'Amount', 'Due', 'Note', 'Double'],
        ['North', 10, new Date('2026-01-01T00:00:00Z'), 'urgent order', null],
        ['South', 20, new Date('2026-02-01T00:00:00Z'), 'normal', null],
        [null, 30, new Date('2026-03-01T00:00:00Z'), 'no region', null],
        ['north ', 40, new Date('2026-04-01T00:00:00Z'), 'URGENT too', null],
      ],
      (ws) => {
        for (let r = 2; r <= 5; r++)
          ws.getCell(`E${r}`).value = { formula: `B${r}*2`, result: Number(ws.getCell(`B${r}`).value) * 2 };
      },
    );
    const out = join(dir, 'orders');
    const urgent = await split({
      file: path,
      splitColumn: 'Region',
      outputDir: out,
      filters: [{ column: 'Note', op: 'contains', value: 'urgent' }],
    });
    // Values group trimmed and case-insensitively; the first spelling names the part.
    expect(urgent.files.map((f) => [f.value, f.rows])).toEqual([['North', 2]]);
    expect(await valuesOf(urgent.files[0]!.path)).toEqual([
      ['Region', 'Amount', 'Due', 'Note', 'Double'],
      ['North', 10, new Date('2026-01-01T00:00:00Z'), 'urgent order', 20],
      ['north ', 40, new Date('2026-04-01T00:00:00Z'), 'URGENT too', 80],
    ]);

    const cases: [Record<string, unknown>[], boolean, [unknown, number][]][] = [
      [
        [{ column: 'Due', op: 'lt', value: '2026-03-01' }],
        false,
        [
          ['North', 1],
          ['South', 1],
        ],
      ],
      [
        [
          { column: 'Amount', op: 'gte', value: 20 },
          { column: 'Region', op: 'notIn', value: ['South'] },
        ],
        false,
        [['north ', 1]],
      ],
      [[{ column: 'Region', op: 'empty' }], true, [['', 1]]],
      [[{ column: 'Amount', op: 'equals', value: '30' }], false, []],
      [[{ column: 'Region', op: 'in', value: ['SOUTH', 'nowhere'] }], false, [['South', 1]]],
    ];
    for (const [filters, includeBlank, expected] of cases) {
      const got = await split({
        file: path,
        splitColumn: 'Region',
        outputDir: join(dir, 'cases'),
        filters,
        includeBlank,
      });
      expect([filters, got.files.map((f) => [f.value, f.rows])]).toEqual([filters, expected]);
      expect(got.writtenRows + got.skippedRows).toBe(got.totalRows);
    }
  });

  it('names parts safely and distinctly, whatever the values', async () => {
    const path = await save('names.xlsx', [['Who'], ['A/B'], ['A_B'], ['..'], ['Zoë & co']]);
    const out = join(dir, 'names');
    const got = await split({ file: path, splitColumn: 'Who', outputDir: out, fileName: '{value}.xlsx' });
    expect(got.files.map((f) => f.path.slice(out.length + 1))).toEqual([
      'A_B.xlsx',
      'A_B-2.xlsx',
      'blank.xlsx',
      'Zoë _ co.xlsx',
    ]);
    expect((await readdir(out)).sort()).toEqual(
      ['A_B-2.xlsx', 'A_B.xlsx', 'Zoë _ co.xlsx', 'blank.xlsx'].sort(),
    );
  });
});
