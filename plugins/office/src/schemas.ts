import { z } from 'zod';

/**
 * The office pack's tools: arguments and results as zod schemas. The server registers them with the
 * MCP SDK (which publishes them as JSON Schema in tools/list); `inputJsonSchemaOf` gives the same JSON
 * Schema without a server, for checks of plans that call these tools (the template's test).
 */

const AbsolutePath = z.string().min(1).max(4_096);

const CellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const ColumnType = z.enum(['string', 'integer', 'number', 'date', 'boolean', 'mixed', 'empty']);

export const ColumnInfo = z.object({
  index: z.number().int().describe('1-based column number'),
  letter: z.string().describe('the column letter: A, B, …'),
  name: z.string().describe('the header text (or "Column <letter>" when the header cell is empty)'),
  type: ColumnType,
  distinctCount: z.number().int().describe('distinct non-empty values'),
  emptyCount: z.number().int(),
  samples: z.array(CellValue).describe('up to 5 distinct values, in order of appearance'),
});

export const SheetInfo = z.object({
  name: z.string(),
  headerRow: z.number().int().describe('1-based row of the headers (0: the sheet is empty)'),
  rowCount: z.number().int().describe('data rows below the header'),
  columns: z.array(ColumnInfo),
});

export const AnalyseInput = z
  .object({
    file: AbsolutePath.describe('absolute path of the .xlsx workbook'),
    sheet: z.string().max(200).optional().describe('the sheet to select; default: the first with data'),
    headerRow: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .optional()
      .describe('1-based header row; default: detected'),
  })
  .strict();

export const AnalyseOutput = z.object({
  file: z.string(),
  sheets: z.array(SheetInfo),
  selected: SheetInfo.describe('the requested sheet, or the first one with data'),
});

export const RowFilter = z
  .object({
    column: z.string().min(1).max(200).describe('a header name'),
    op: z.enum([
      'equals',
      'notEquals',
      'contains',
      'in',
      'notIn',
      'empty',
      'notEmpty',
      'gt',
      'gte',
      'lt',
      'lte',
    ]),
    value: z
      .union([CellValue, z.array(CellValue).max(1_000)])
      .optional()
      .describe('compared with the cell; a list for in/notIn; none for empty/notEmpty'),
  })
  .strict();

export const SplitInput = z
  .object({
    file: AbsolutePath.describe('absolute path of the .xlsx workbook'),
    sheet: z.string().max(200).optional().describe('default: the first sheet with data'),
    headerRow: z.number().int().min(1).max(1_000).optional().describe('default: detected'),
    splitColumn: z.string().min(1).max(200).describe('the header of the column to split by'),
    outputDir: AbsolutePath.describe(
      "absolute path of the folder to write the parts into (the run's shared folder)",
    ),
    filters: z.array(RowFilter).max(20).default([]).describe('rows must match every filter'),
    includeBlank: z
      .boolean()
      .default(false)
      .describe('also write a part for rows whose split value is empty (value "")'),
    fileName: z
      .string()
      .max(200)
      .default('{base}-{value}.xlsx')
      .describe('name of each part: {base} (the workbook name), {value}, {sheet}; ends in .xlsx'),
  })
  .strict();

export const PartFile = z.object({
  path: z.string().describe('absolute path of the part'),
  value: CellValue.describe('the split value of its rows'),
  rows: z.number().int().describe('data rows in the part'),
});

export const SplitOutput = z.object({
  outputDir: z.string(),
  sheet: z.string(),
  column: z.string(),
  files: z.array(PartFile),
  totalRows: z.number().int().describe('data rows read'),
  writtenRows: z.number().int().describe('data rows written into parts'),
  skippedRows: z.number().int().describe('rows left out by the filters or for a blank split value'),
});

export const ListItem = z.object({ value: z.string(), label: z.string() });
export const ListOutput = z.object({ items: z.array(ListItem) });
export const EmptyInput = z.object({}).strict();

export const StageInput = z
  .object({
    account: z.string().min(1).max(100).describe('the sending account (an id from email_accounts_list)'),
    group: z.string().min(1).max(100).describe('the recipient group (an id from email_tags_list)'),
    parts: z
      .array(PartFile.extend({ rows: z.number().int().optional() }))
      .min(1)
      .max(500)
      .describe('the files to send, one message each: excel_execute’s files'),
    subject: z
      .string()
      .min(1)
      .max(500)
      .describe(
        'subject template: {value}, {rows}, {file}, {date} ({{value}} … too, when given through an input)',
      ),
    body: z.string().max(50_000).describe('plain-text body template, same placeholders as the subject'),
    skipUnmatched: z
      .boolean()
      .default(false)
      .describe('leave out parts whose value has no recipients in the group (default: refuse the batch)'),
  })
  .strict();

export const StagedMessage = z.object({
  index: z.number().int(),
  value: CellValue,
  to: z.array(z.string()),
  cc: z.array(z.string()),
  bcc: z.array(z.string()),
  subject: z.string(),
  attachment: z.object({ name: z.string(), bytes: z.number().int(), sha256: z.string() }),
  rows: z.number().int().nullable(),
});

export const StageOutput = z.object({
  confirmation: z.object({
    confirmationId: z.string().describe('what confirm_send takes'),
    account: z.string(),
    from: z.string(),
    group: z.string(),
    status: z.enum(['staged', 'sending', 'sent', 'partially_sent']),
    messages: z.array(StagedMessage),
  }),
  skipped: z.array(z.object({ value: CellValue, path: z.string(), reason: z.string() })),
});

export const ConfirmInput = z
  .object({
    confirmationId: z.string().min(1).max(100).describe('from email_send_batch'),
    resendUncertain: z
      .boolean()
      .default(false)
      .describe('also send messages whose earlier send was interrupted (they may have been delivered)'),
  })
  .strict();

export const MessageStatus = z.enum(['sent', 'already_sent', 'failed', 'uncertain']);

export const ConfirmOutput = z.object({
  confirmationId: z.string(),
  status: z.enum(['sent', 'already_sent', 'partially_sent']),
  sent: z.number().int().describe('messages sent by this call'),
  alreadySent: z.number().int().describe('messages an earlier call sent (not sent again)'),
  failed: z.number().int(),
  uncertain: z.number().int().describe('interrupted earlier; not resent unless resendUncertain'),
  messages: z.array(
    z.object({
      index: z.number().int(),
      value: CellValue,
      to: z.array(z.string()),
      status: MessageStatus,
      rejected: z.array(z.string()).describe('recipients the relay refused when the others accepted it'),
      messageId: z.string().nullable(),
      sentAt: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
});

export type AnalyseInput = z.infer<typeof AnalyseInput>;
export type AnalyseOutput = z.infer<typeof AnalyseOutput>;
export type SheetInfo = z.infer<typeof SheetInfo>;
export type ColumnInfo = z.infer<typeof ColumnInfo>;
export type RowFilter = z.infer<typeof RowFilter>;
export type SplitInput = z.infer<typeof SplitInput>;
export type SplitOutput = z.infer<typeof SplitOutput>;
export type PartFile = z.infer<typeof PartFile>;
export type ListOutput = z.infer<typeof ListOutput>;
export type StageInput = z.infer<typeof StageInput>;
export type StageOutput = z.infer<typeof StageOutput>;
export type StagedMessage = z.infer<typeof StagedMessage>;
export type ConfirmInput = z.infer<typeof ConfirmInput>;
export type ConfirmOutput = z.infer<typeof ConfirmOutput>;
export type CellValue = z.infer<typeof CellValue>;

/** Every tool of the pack: its description, arguments and result. */
export const OFFICE_TOOLS = {
  excel_complex_config: {
    description:
      'Analyse an .xlsx workbook: its sheets, the header row (detected), and per column the inferred type, distinct and empty counts and a few sample values.',
    input: AnalyseInput,
    output: AnalyseOutput,
  },
  excel_execute: {
    description:
      'Split a sheet by a column: one workbook per distinct value (header rows and styles kept), optionally filtering rows, written into an output folder. Returns the files.',
    input: SplitInput,
    output: SplitOutput,
  },
  email_accounts_list: {
    description: 'The sending accounts an admin configured, as {value, label} items.',
    input: EmptyInput,
    output: ListOutput,
  },
  email_tags_list: {
    description: 'The recipient groups an admin configured, as {value, label} items.',
    input: EmptyInput,
    output: ListOutput,
  },
  email_send_batch: {
    description:
      "Stage one e-mail per part (the part as attachment, recipients from the group by the part's value). Sends nothing: returns confirmation.confirmationId for confirm_send.",
    input: StageInput,
    output: StageOutput,
  },
  confirm_send: {
    description:
      'Send a staged batch over SMTP. Each message is sent at most once: a second call with the same confirmation id sends nothing again.',
    input: ConfirmInput,
    output: ConfirmOutput,
  },
} as const;

export type OfficeToolName = keyof typeof OFFICE_TOOLS;

/** The JSON Schema of a tool's arguments, as the MCP SDK publishes it in tools/list. */
export function inputJsonSchemaOf(tool: OfficeToolName): Record<string, unknown> {
  return z.toJSONSchema(OFFICE_TOOLS[tool].input, { target: 'draft-7', io: 'input' }) as Record<
    string,
    unknown
  >;
}
