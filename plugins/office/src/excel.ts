import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import ExcelJS from 'exceljs';
import { ToolError } from './errors';
import { checkFile, checkPath } from './paths';
import type {
  AnalyseInput,
  AnalyseOutput,
  CellValue,
  ColumnInfo,
  PartFile,
  RowFilter,
  SheetInfo,
  SplitInput,
  SplitOutput,
} from './schemas';

/** Workbooks beyond this are refused: exceljs holds the whole workbook in memory. */
export const MAX_WORKBOOK_BYTES = 50 * 1024 * 1024;
/** Rows above this one are not considered for the header. */
const HEADER_SCAN_ROWS = 20;
const SAMPLES = 5;

type Plain = CellValue | Date;

/** A cell's value as data: rich text as its text, formulas as their result, errors as their code. */
function plain(value: ExcelJS.CellValue | undefined): Plain {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string') return value.trim() === '' ? null : value;
  if (typeof value === 'number' || typeof value === 'boolean' || value instanceof Date) return value;
  if ('richText' in value) return plain(value.richText.map((t) => t.text).join(''));
  if ('formula' in value || 'sharedFormula' in value)
    return plain((value as ExcelJS.CellFormulaValue).result as ExcelJS.CellValue);
  if ('hyperlink' in value) return plain(value.text as ExcelJS.CellValue);
  if ('error' in value) return value.error;
  return null;
}

function asCellValue(v: Plain): CellValue {
  return v instanceof Date ? v.toISOString() : v;
}

/** The text a value is grouped and compared by. */
function keyOf(v: Plain): string {
  if (v === null) return '';
  if (v instanceof Date) return v.toISOString();
  return String(v).trim().toLocaleLowerCase();
}

type Kind = 'string' | 'integer' | 'number' | 'date' | 'boolean';

function kindOf(v: Exclude<Plain, null>): Kind {
  if (v instanceof Date) return 'date';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v === 'boolean') return 'boolean';
  return 'string';
}

function typeOf(kinds: Set<Kind>): ColumnInfo['type'] {
  if (kinds.size === 0) return 'empty';
  if (kinds.size === 1) return [...kinds][0] as Kind;
  if (kinds.size === 2 && kinds.has('integer') && kinds.has('number')) return 'number';
  return 'mixed';
}

function letterOf(column: number): string {
  let n = column;
  let s = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    s = String.fromCharCode(65 + r) + s;
    n = Math.floor((n - 1) / 26);
  }
  return s;
}

async function readWorkbook(file: string): Promise<{ path: string; workbook: ExcelJS.Workbook }> {
  const path = checkPath(file, 'the workbook');
  await checkFile(path, 'the workbook', MAX_WORKBOOK_BYTES);
  const workbook = new ExcelJS.Workbook();
  try {
    await workbook.xlsx.readFile(path);
  } catch (err) {
    throw new ToolError(
      `${path} is not an Excel workbook (.xlsx) that can be read: ${(err as Error).message.split('\n')[0]}`,
    );
  }
  return { path, workbook };
}

/** A merged range's value counts once, at its top-left cell (exceljs repeats it in every cell). */
function valueOf(cell: ExcelJS.Cell): Plain {
  return cell.isMerged && cell.master.address !== cell.address ? null : plain(cell.value);
}

function rowValues(ws: ExcelJS.Worksheet, row: number, columns: number): Plain[] {
  const r = ws.getRow(row);
  return Array.from({ length: columns }, (_, i) => valueOf(r.getCell(i + 1)));
}

/**
 * The header is the first row, among the top ones, that fills at least half the width of the widest
 * of them with text only: a title or a note above the table has fewer cells, a data row has numbers.
 * Without such a row, the first row with any value.
 */
function detectHeader(ws: ExcelJS.Worksheet, columns: number): number {
  const last = Math.min(ws.rowCount, HEADER_SCAN_ROWS);
  const rows = Array.from({ length: last }, (_, i) => rowValues(ws, i + 1, columns));
  const filled = rows.map((r) => r.filter((v) => v !== null));
  const widest = Math.max(0, ...filled.map((f) => f.length));
  if (widest === 0) return 0;
  const textRow = filled.findIndex(
    (f) => f.length >= Math.max(1, Math.ceil(widest / 2)) && f.every((v) => typeof v === 'string'),
  );
  return (textRow >= 0 ? textRow : filled.findIndex((f) => f.length > 0)) + 1;
}

interface Table {
  readonly ws: ExcelJS.Worksheet;
  readonly headerRow: number;
  readonly names: string[];
  /** Row numbers of the non-empty data rows. */
  readonly dataRows: number[];
}

function tableOf(ws: ExcelJS.Worksheet, headerRow?: number): Table {
  const columns = ws.columnCount;
  const header = headerRow ?? detectHeader(ws, columns);
  if (headerRow !== undefined && headerRow > ws.rowCount)
    throw new ToolError(`sheet ${ws.name} has ${ws.rowCount} rows; there is no header row ${headerRow}`);
  const seen = new Map<string, number>();
  const names =
    header === 0
      ? []
      : rowValues(ws, header, columns).map((v, i) => {
          const base = v === null ? `Column ${letterOf(i + 1)}` : String(asCellValue(v)).trim();
          const n = (seen.get(base) ?? 0) + 1;
          seen.set(base, n);
          return n === 1 ? base : `${base} (${n})`;
        });
  const dataRows: number[] = [];
  if (header > 0) {
    for (let r = header + 1; r <= ws.rowCount; r++)
      if (rowValues(ws, r, columns).some((v) => v !== null)) dataRows.push(r);
  }
  return { ws, headerRow: header, names, dataRows };
}

function describeSheet(table: Table): SheetInfo {
  const { ws, names, dataRows } = table;
  const columns: ColumnInfo[] = names.map((name, i) => {
    const kinds = new Set<Kind>();
    const distinct = new Map<string, CellValue>();
    let empty = 0;
    for (const r of dataRows) {
      const v = valueOf(ws.getRow(r).getCell(i + 1));
      if (v === null) {
        empty++;
        continue;
      }
      kinds.add(kindOf(v));
      const k = keyOf(v);
      if (!distinct.has(k)) distinct.set(k, asCellValue(v));
    }
    return {
      index: i + 1,
      letter: letterOf(i + 1),
      name,
      type: typeOf(kinds),
      distinctCount: distinct.size,
      emptyCount: empty,
      samples: [...distinct.values()].slice(0, SAMPLES),
    };
  });
  return { name: ws.name, headerRow: table.headerRow, rowCount: dataRows.length, columns };
}

function sheetOf(workbook: ExcelJS.Workbook, name: string | undefined): ExcelJS.Worksheet {
  if (workbook.worksheets.length === 0) throw new ToolError('the workbook has no sheets');
  if (name === undefined) {
    return (
      workbook.worksheets.find((ws) => ws.actualRowCount > 0) ?? (workbook.worksheets[0] as ExcelJS.Worksheet)
    );
  }
  const ws = workbook.worksheets.find((w) => w.name === name);
  if (!ws)
    throw new ToolError(
      `the workbook has no sheet ${JSON.stringify(name)}; its sheets: ${workbook.worksheets.map((w) => w.name).join(', ')}`,
    );
  return ws;
}

export async function analyseWorkbook(input: AnalyseInput): Promise<AnalyseOutput> {
  const { path, workbook } = await readWorkbook(input.file);
  const selectedSheet = sheetOf(workbook, input.sheet);
  const sheets = workbook.worksheets.map((ws) =>
    describeSheet(tableOf(ws, ws === selectedSheet ? input.headerRow : undefined)),
  );
  const selected = sheets[workbook.worksheets.indexOf(selectedSheet)] as SheetInfo;
  return { file: path, sheets, selected };
}

function columnIndex(table: Table, name: string, what: string): number {
  let i = table.names.indexOf(name);
  if (i < 0)
    i = table.names.findIndex((n) => n.trim().toLocaleLowerCase() === name.trim().toLocaleLowerCase());
  if (i < 0)
    throw new ToolError(
      `${what} ${JSON.stringify(name)} is not a column of sheet ${table.ws.name}; its columns: ${table.names.join(', ')}`,
    );
  return i + 1;
}

function comparable(v: Plain | undefined): number | undefined {
  if (v === null || v === undefined) return undefined;
  if (v instanceof Date) return v.getTime();
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    const n = Number(v.trim());
    if (v.trim() !== '' && Number.isFinite(n)) return n;
    const d = Date.parse(v);
    return Number.isNaN(d) ? undefined : d;
  }
  return undefined;
}

function same(cell: Plain, wanted: CellValue): boolean {
  const a = comparable(cell);
  const b = comparable(wanted);
  if (a !== undefined && b !== undefined && typeof wanted !== 'boolean') return a === b;
  return keyOf(cell) === keyOf(wanted);
}

type Predicate = (row: ExcelJS.Row) => boolean;

function compileFilter(table: Table, f: RowFilter, at: number): Predicate {
  const col = columnIndex(table, f.column, `filters[${at}].column`);
  const cell = (row: ExcelJS.Row) => valueOf(row.getCell(col));
  const needs = (ok: boolean, what: string) => {
    if (!ok) throw new ToolError(`filters[${at}] (${f.op}) needs ${what} as its value`);
  };
  switch (f.op) {
    case 'empty':
      return (row) => cell(row) === null;
    case 'notEmpty':
      return (row) => cell(row) !== null;
    case 'in':
    case 'notIn': {
      needs(Array.isArray(f.value), 'a list');
      const list = f.value as CellValue[];
      const hit = (row: ExcelJS.Row) => list.some((w) => same(cell(row), w));
      return f.op === 'in' ? hit : (row) => !hit(row);
    }
    case 'equals':
    case 'notEquals':
    case 'contains': {
      needs(f.value !== undefined && !Array.isArray(f.value), 'one value');
      const wanted = f.value as CellValue;
      if (f.op === 'contains') return (row) => keyOf(cell(row)).includes(keyOf(wanted));
      return f.op === 'equals' ? (row) => same(cell(row), wanted) : (row) => !same(cell(row), wanted);
    }
    default: {
      const bound = comparable(f.value as Plain);
      needs(bound !== undefined && !Array.isArray(f.value), 'a number or a date');
      const test = {
        gt: (a: number) => a > (bound as number),
        gte: (a: number) => a >= (bound as number),
        lt: (a: number) => a < (bound as number),
        lte: (a: number) => a <= (bound as number),
      }[f.op];
      return (row) => {
        const a = comparable(cell(row));
        return a !== undefined && test(a);
      };
    }
  }
}

/** Formulas are written as their results: moved rows would point their references elsewhere. */
function writable(value: ExcelJS.CellValue): ExcelJS.CellValue {
  if (value && typeof value === 'object' && ('formula' in value || 'sharedFormula' in value)) {
    const result = (value as ExcelJS.CellFormulaValue).result;
    return result === undefined || (typeof result === 'object' && result !== null && 'error' in result)
      ? null
      : (result as ExcelJS.CellValue);
  }
  return value;
}

function copyRow(from: ExcelJS.Row, to: ExcelJS.Row, columns: number): void {
  if (from.height) to.height = from.height;
  for (let c = 1; c <= columns; c++) {
    const src = from.getCell(c);
    const dst = to.getCell(c);
    dst.value = writable(src.value);
    if (src.style && Object.keys(src.style).length) dst.style = structuredClone(src.style) as ExcelJS.Style;
  }
}

const SAFE = /[^\p{L}\p{N} ._()-]+/gu;

function safePart(text: string): string {
  const s = text.replace(SAFE, '_').replace(/\s+/g, ' ').trim().replace(/^\.+/, '').slice(0, 80);
  return s === '' ? 'blank' : s;
}

function fileNameOf(pattern: string, base: string, value: CellValue, sheet: string): string {
  const name = pattern.replace(/\{(base|value|sheet)\}/g, (_, k: string) =>
    safePart(k === 'base' ? base : k === 'sheet' ? sheet : value === null ? '' : String(value)),
  );
  return name.toLowerCase().endsWith('.xlsx') ? name : `${name}.xlsx`;
}

function checkFileNamePattern(pattern: string): void {
  if (/[\\/\0]/.test(pattern) || pattern.includes('..'))
    throw new ToolError(`fileName ${JSON.stringify(pattern)} may not contain "/", "\\" or ".."`);
  const unknown = [...pattern.matchAll(/\{([A-Za-z_]+)\}/g)]
    .map((m) => m[1])
    .filter((k) => !['base', 'value', 'sheet'].includes(k as string));
  if (unknown.length)
    throw new ToolError(`fileName uses {${unknown[0]}}; it may use {base}, {value} and {sheet}`);
  if (!pattern.includes('{value}'))
    throw new ToolError('fileName must contain {value}, or every part would get the same name');
}

function writePart(table: Table, rows: number[], columns: number): ExcelJS.Workbook {
  const src = table.ws;
  const out = new ExcelJS.Workbook();
  const ws = out.addWorksheet(src.name, {
    properties: structuredClone(src.properties),
    views: structuredClone(src.views),
    pageSetup: structuredClone(src.pageSetup),
  });
  for (let c = 1; c <= columns; c++) {
    const from = src.getColumn(c);
    const to = ws.getColumn(c);
    if (from.width) to.width = from.width;
    if (from.hidden) to.hidden = true;
  }
  // The rows above the data (a title, notes, the header), with the merges among them.
  for (let r = 1; r <= table.headerRow; r++) copyRow(src.getRow(r), ws.getRow(r), columns);
  const merges = (src.model as { merges?: string[] }).merges ?? [];
  for (const range of merges) {
    const last = Number(/(\d+)$/.exec(range)?.[1]);
    if (last <= table.headerRow) ws.mergeCells(range);
  }
  rows.forEach((r, i) => copyRow(src.getRow(r), ws.getRow(table.headerRow + 1 + i), columns));
  if (src.autoFilter) {
    ws.autoFilter = {
      from: { row: table.headerRow, column: 1 },
      to: { row: table.headerRow + rows.length, column: columns },
    };
  }
  return out;
}

export async function splitWorkbook(input: SplitInput): Promise<SplitOutput> {
  const outputDir = checkPath(input.outputDir, 'the output folder');
  checkFileNamePattern(input.fileName);
  const { path, workbook } = await readWorkbook(input.file);
  const table = tableOf(sheetOf(workbook, input.sheet), input.headerRow);
  if (table.headerRow === 0) throw new ToolError(`sheet ${table.ws.name} is empty`);
  const col = columnIndex(table, input.splitColumn, 'the split column');
  const predicates = input.filters.map((f, i) => compileFilter(table, f, i));
  const columns = table.ws.columnCount;

  const groups = new Map<string, { value: CellValue; rows: number[] }>();
  let skipped = 0;
  for (const r of table.dataRows) {
    const row = table.ws.getRow(r);
    if (!predicates.every((p) => p(row))) {
      skipped++;
      continue;
    }
    const v = valueOf(row.getCell(col));
    if (v === null && !input.includeBlank) {
      skipped++;
      continue;
    }
    const k = keyOf(v);
    const group = groups.get(k) ?? { value: v === null ? '' : asCellValue(v), rows: [] };
    group.rows.push(r);
    groups.set(k, group);
  }

  try {
    await mkdir(outputDir, { recursive: true });
  } catch (err) {
    throw new ToolError(`the output folder ${outputDir} cannot be created here: ${(err as Error).message}`);
  }
  const base = basename(path, extname(path));
  const used = new Set<string>();
  const files: PartFile[] = [];
  for (const { value, rows } of groups.values()) {
    let name = fileNameOf(input.fileName, base, value, table.ws.name);
    for (let n = 2; used.has(name.toLowerCase()); n++)
      name = fileNameOf(input.fileName, base, value, table.ws.name).replace(/\.xlsx$/i, `-${n}.xlsx`);
    used.add(name.toLowerCase());
    const target = join(outputDir, name);
    const temp = join(outputDir, `.${name}.${process.pid}.tmp`);
    try {
      await writePart(table, rows, columns).xlsx.writeFile(temp);
      await rename(temp, target);
    } catch (err) {
      await rm(temp, { force: true });
      throw new ToolError(`cannot write ${target}: ${(err as Error).message}`);
    }
    files.push({ path: target, value, rows: rows.length });
  }
  const written = files.reduce((n, f) => n + f.rows, 0);
  return {
    outputDir,
    sheet: table.ws.name,
    column: table.names[col - 1] as string,
    files,
    totalRows: table.dataRows.length,
    writtenRows: written,
    skippedRows: skipped,
  };
}
