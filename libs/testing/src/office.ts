import { existsSync } from 'node:fs';
import { join, sep } from 'node:path';
import ExcelJS from 'exceljs';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { ApiResponse } from './http';

/**
 * What the office pack's end-to-end tests share (the API suite and the browser test): a real SMTP
 * server on loopback that keeps what it receives, a three-region workbook made with exceljs, and the
 * admin's steps that install and configure the pack from its built bundle in `plugins/office`.
 */

// libs/testing/src from sources (jest), dist/libs/testing/src when compiled (benchmarks).
const ROOT = __dirname.includes(`${sep}dist${sep}`)
  ? (__dirname.split(`${sep}dist${sep}`)[0] as string)
  : join(__dirname, '..', '..', '..');

/** The office pack's bundle folder as `npm run build` leaves it (manifest + dist/server.cjs). */
export const OFFICE_BUNDLE_DIR = join(ROOT, 'plugins', 'office');

export const SMTP_USER = 'reports@example.com';
export const SMTP_PASSWORD = 'app-password';

export interface ReceivedMail {
  /** The envelope's recipients (to, cc and bcc alike), as the relay was told them. */
  readonly rcptTo: string[];
  readonly mail: ParsedMail;
}

/** A real SMTP relay (`smtp-server`) on 127.0.0.1 that signs in one user and keeps every message. */
export class SmtpSink {
  private constructor(
    private readonly server: SMTPServer,
    /** Every message accepted, in the order they arrived. */
    readonly received: ReceivedMail[],
  ) {}

  static async start(): Promise<SmtpSink> {
    const received: ReceivedMail[] = [];
    const server = new SMTPServer({
      secure: false,
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      logger: false,
      onAuth(auth, _session, cb) {
        if (auth.username === SMTP_USER && auth.password === SMTP_PASSWORD) cb(null, { user: SMTP_USER });
        else cb(new Error('invalid credentials'));
      },
      onData(stream, session, cb) {
        simpleParser(stream)
          .then((mail) => {
            received.push({ rcptTo: session.envelope.rcptTo.map((r) => r.address), mail });
            cb();
          })
          .catch(cb);
      },
    });
    const sink = new SmtpSink(server, received);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get port(): number {
    return (this.server.server.address() as { port: number }).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** The workbook's data rows: three regions, the same as the office pack's own integration test. */
export const OFFICE_ROWS = [
  ['North', 'Tea', 120.5],
  ['South', 'Coffee', 80],
  ['West', 'Cocoa', 42.25],
  ['South', 'Juice', 300],
  ['North', 'Coffee', 15],
  ['South', 'Tea', 64],
] as const;

/** Who gets which region in the `regional-managers` group (`cc` on every message). */
export const OFFICE_RECIPIENTS = {
  North: ['north@example.com'],
  South: ['south1@example.com', 'south2@example.com'],
  West: ['west@example.com'],
} as const;
export const OFFICE_CC = 'head-of-sales@example.com';

/** A workbook as people make them: a merged title row above a bold header, six rows in three regions. */
export async function regionWorkbook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Sales');
  ws.addRow(['Sales report, January']);
  ws.mergeCells('A1:C1');
  ws.addRow(['Region', 'Product', 'Amount']).font = { bold: true };
  for (const r of OFFICE_ROWS) ws.addRow([...r]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** An .xlsx attachment read back: its first sheet's header (row 2) and data rows (row 3 on). */
export async function workbookRows(content: Buffer): Promise<{ header: unknown[]; rows: unknown[][] }> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(content as unknown as ArrayBuffer);
  const ws = wb.worksheets[0] as ExcelJS.Worksheet;
  const values = (n: number) => (ws.getRow(n).values as unknown[]).slice(1);
  const rows: unknown[][] = [];
  for (let r = 3; r <= ws.rowCount; r++) rows.push(values(r));
  return { header: values(2), rows };
}

/** The pack's three settings (docs/office-pack.md) for one account on `smtpPort` and one group. */
export function officeSettings(smtpPort: number): Record<'accounts' | 'passwords' | 'groups', string> {
  return {
    accounts: JSON.stringify([
      {
        id: 'reports',
        label: 'Reports <reports@example.com>',
        host: '127.0.0.1',
        port: smtpPort,
        starttls: 'never',
        user: SMTP_USER,
        from: 'Reports <reports@example.com>',
      },
    ]),
    passwords: JSON.stringify({ reports: SMTP_PASSWORD }),
    groups: JSON.stringify([
      {
        id: 'regional-managers',
        label: 'Regional managers',
        recipients: OFFICE_RECIPIENTS,
        cc: [OFFICE_CC],
      },
    ]),
  };
}

type Call = (method: string, path: string, body?: unknown) => Promise<ApiResponse>;

/**
 * Installs the office pack from its built bundle as an admin does (install, grant network and run
 * files, settings, enable) and answers the enabled plugin's view; any refusal throws with the answer.
 */
export async function installOfficePlugin(adminCall: Call, smtpPort: number): Promise<ApiResponse> {
  if (!existsSync(join(OFFICE_BUNDLE_DIR, 'dist', 'server.cjs')))
    throw new Error(`${OFFICE_BUNDLE_DIR}/dist/server.cjs is missing: run npm run build`);
  const steps: Array<[string, string, unknown?]> = [
    ['POST', '/api/plugins', { path: OFFICE_BUNDLE_DIR }],
    ['PUT', '/api/plugins/office/grants', { network: true, files: true }],
    ['PUT', '/api/plugins/office/settings', { values: officeSettings(smtpPort) }],
    ['POST', '/api/plugins/office/enable'],
  ];
  let last: ApiResponse | undefined;
  for (const [method, path, body] of steps) {
    last = await adminCall(method, path, body);
    if (last.status >= 300) throw new Error(`${method} ${path} answered ${last.status}: ${last.text}`);
  }
  return last as ApiResponse;
}
