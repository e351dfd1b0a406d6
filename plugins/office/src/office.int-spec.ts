import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import ExcelJS from 'exceljs';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PLUGIN_MANIFEST_FILE, PluginEnv, PluginManifest } from '@switchyard/contracts';
import { buildOfficeServer } from '../build';
import { inputJsonSchemaOf, type OfficeToolName } from './schemas';

/**
 * The office pack as the plugin host runs it: the bundled server (built here into a folder with no
 * node_modules anywhere above it) spoken to over stdio by the MCP client, its settings, data folder and
 * root in SWITCHYARD_PLUGIN_*, mail delivered to a real SMTP server listening on loopback.
 */

const manifest = PluginManifest.parse(
  JSON.parse(readFileSync(join(__dirname, '..', PLUGIN_MANIFEST_FILE), 'utf8')),
);

interface Received {
  readonly envelope: string[];
  readonly mail: ParsedMail;
}

let root: string;
let bundle: string;
let smtp: SMTPServer;
let smtpPort: number;
const received: Received[] = [];
const logins: { user: string; pass: string }[] = [];
/** Recipients the SMTP server refuses, and subjects whose whole message it refuses (per test). */
const refused = new Set<string>();
const refusedSubjects = new Set<string>();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'office-plugin-'));
  bundle = await buildOfficeServer(join(root, 'bundle', 'dist', 'server.cjs'));
  smtp = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authMethods: ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, cb) {
      logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
      if (auth.username === 'reports@example.com' && auth.password === 's3cret')
        cb(null, { user: auth.username });
      else cb(new Error('invalid credentials'));
    },
    onRcptTo(address, _session, cb) {
      if (refused.has(address.address)) cb(new Error('mailbox unavailable'));
      else cb();
    },
    onData(stream, session, cb) {
      simpleParser(stream)
        .then((mail) => {
          if (refusedSubjects.has(mail.subject ?? '')) return cb(new Error('message refused'));
          received.push({ envelope: session.envelope.rcptTo.map((r) => r.address), mail });
          cb();
        })
        .catch(cb);
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  smtpPort = (smtp.server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await rm(root, { recursive: true, force: true });
});

const accounts = () => [
  {
    id: 'reports',
    label: 'Reports <reports@example.com>',
    host: '127.0.0.1',
    port: smtpPort,
    secure: false,
    starttls: 'never',
    user: 'reports@example.com',
    from: 'Reports <reports@example.com>',
    bcc: ['archive@example.com'],
  },
  {
    id: 'nopass',
    host: '127.0.0.1',
    port: smtpPort,
    starttls: 'never',
    user: 'x@example.com',
    from: 'x@example.com',
  },
];
const groups = [
  {
    id: 'managers',
    label: 'Regional managers',
    recipients: {
      north: ['north@example.com'],
      South: ['south1@example.com', 'south2@example.com'],
      West: ['west@example.com'],
    },
    cc: ['boss@example.com'],
  },
  { id: 'north-only', recipients: { North: ['north@example.com'] } },
];

/**
 * The server inside bubblewrap the way a plugin host confines it: only system libraries, node, the
 * bundle (read-only, /plugin), the data folder (/data) and the granted files (/files); no network.
 */
async function connectSandboxed(config: Record<string, string>, files: string): Promise<Client> {
  const data = await mkdtemp(join(root, 'data-'));
  const system = ['/usr', '/lib', '/lib64', '/bin'].filter((d) => existsSync(d));
  const transport = new StdioClientTransport({
    command: 'bwrap',
    args: [
      ...system.flatMap((d) => ['--ro-bind', d, d]),
      ...['--ro-bind', realpathSync(process.execPath), '/node'],
      ...['--ro-bind', join(root, 'bundle'), '/plugin'],
      ...['--bind', data, '/data'],
      ...['--bind', files, '/files'],
      ...['--proc', '/proc', '--dev', '/dev', '--unshare-all', '--die-with-parent', '--chdir', '/plugin'],
      '/node',
      '/plugin/dist/server.cjs',
    ],
    env: {
      PATH: '/usr/bin:/bin',
      [PluginEnv.root]: '/plugin',
      [PluginEnv.data]: '/data',
      [PluginEnv.config]: JSON.stringify(config),
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'office-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const canSandbox = spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', 'true']).status === 0;

async function connect(config: Record<string, string>, dataDir?: string): Promise<Client> {
  const data = dataDir ?? (await mkdtemp(join(root, 'data-')));
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bundle],
    cwd: join(root, 'bundle'),
    env: {
      PATH: process.env['PATH'] ?? '',
      [PluginEnv.root]: join(root, 'bundle'),
      [PluginEnv.data]: data,
      [PluginEnv.config]: JSON.stringify(config),
    },
    stderr: 'pipe',
  });
  const client = new Client({ name: 'office-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const settings = () => ({
  accounts: JSON.stringify(accounts()),
  passwords: JSON.stringify({ reports: 's3cret' }),
  groups: JSON.stringify(groups),
});

async function call(
  client: Client,
  name: OfficeToolName,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

async function ok<T = Record<string, unknown>>(
  client: Client,
  name: OfficeToolName,
  args: Record<string, unknown>,
): Promise<T> {
  const result = await call(client, name, args);
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return result.structuredContent as T;
}

async function refusal(client: Client, name: OfficeToolName, args: Record<string, unknown>): Promise<string> {
  const result = await call(client, name, args);
  expect(result.isError).toBe(true);
  const [first] = result.content;
  return first?.type === 'text' ? first.text : JSON.stringify(first);
}

const REGIONS = [
  ['North', 'Tea', 120.5, new Date('2026-01-05T00:00:00Z')],
  ['South', 'Coffee', 80, new Date('2026-01-06T00:00:00Z')],
  ['West', 'Cocoa', 42.25, new Date('2026-01-07T00:00:00Z')],
  ['South', 'Juice', 300, new Date('2026-01-08T00:00:00Z')],
  ['North', 'Coffee', 15, new Date('2026-01-09T00:00:00Z')],
  ['South', 'Tea', 64, new Date('2026-01-10T00:00:00Z')],
] as const;

/** A workbook as people make them: a merged title row above a styled header, six rows in three regions. */
async function makeWorkbook(path: string): Promise<void> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Sales');
  ws.addRow(['Sales report, January']);
  ws.mergeCells('A1:D1');
  ws.getCell('A1').font = { bold: true, size: 14 };
  const header = ws.addRow(['Region', 'Product', 'Amount', 'Date']);
  header.eachCell((c) => {
    c.font = { bold: true };
    c.fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFDDEEFF' } };
  });
  for (const r of REGIONS) ws.addRow([...r]);
  ws.getColumn(2).width = 24;
  wb.addWorksheet('Notes').addRow(['nothing to see']);
  await wb.xlsx.writeFile(path);
}

async function rowsOf(
  content: Buffer | string,
): Promise<{ title: unknown; header: unknown[]; rows: unknown[][]; ws: ExcelJS.Worksheet }> {
  const wb = new ExcelJS.Workbook();
  if (typeof content === 'string') await wb.xlsx.readFile(content);
  else await wb.xlsx.load(content as unknown as ArrayBuffer);
  const ws = wb.worksheets[0] as ExcelJS.Worksheet;
  const values = (n: number) => (ws.getRow(n).values as unknown[]).slice(1);
  const rows: unknown[][] = [];
  for (let r = 3; r <= ws.rowCount; r++) rows.push(values(r));
  return { title: ws.getCell('A1').value, header: values(2), rows, ws };
}

const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
function expectMatchesManifest(tool: OfficeToolName, value: unknown): void {
  const node = manifest.flowNodes.find((n) => n.tool === tool);
  const validate = ajv.compile(node?.outputs ?? {});
  expect([validate(value), validate.errors ?? null]).toEqual([true, null]);
}

describe('the office plugin server', () => {
  let workbook: string;
  let shared: string;
  let client: Client;

  beforeAll(async () => {
    const files = join(root, 'files');
    shared = join(files, 'shared');
    await mkdir(shared, { recursive: true });
    workbook = join(files, 'sales.xlsx');
    await makeWorkbook(workbook);
    client = await connect(settings());
  });

  afterAll(async () => {
    await client.close();
  });

  it("lists the manifest's tools with the schemas its flow nodes declare, and the examples fit them", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(Object.keys(manifest.tools).sort());
    expect(manifest.flowNodes.map((n) => n.tool).sort()).toEqual(Object.keys(manifest.tools).sort());
    for (const t of tools) {
      // What the template's check derives without a server is what the server publishes.
      expect(t.inputSchema).toEqual(inputJsonSchemaOf(t.name as OfficeToolName));
      expect(t.outputSchema).toBeDefined();
      for (const example of manifest.flowNodes.find((n) => n.tool === t.name)?.examples ?? [])
        expectMatchesManifest(t.name as OfficeToolName, example);
    }
    expect(manifest.tools['confirm_send']).toEqual({
      effect: 'external',
      idempotent: true,
      requiresApproval: true,
    });
    expect(manifest.server).toEqual({ command: 'node', args: ['${root}/dist/server.cjs'] });
  });

  it('splits a three-region workbook and sends each part to its region once, after staging', async () => {
    const analysed = await ok<{
      selected: { name: string; headerRow: number; rowCount: number; columns: Record<string, unknown>[] };
      sheets: unknown[];
    }>(client, 'excel_complex_config', { file: workbook });
    expectMatchesManifest('excel_complex_config', analysed);
    expect(analysed.sheets).toHaveLength(2);
    expect(analysed.selected).toMatchObject({ name: 'Sales', headerRow: 2, rowCount: 6 });
    expect(analysed.selected.columns.map((c) => [c['name'], c['type'], c['distinctCount']])).toEqual([
      ['Region', 'string', 3],
      ['Product', 'string', 4],
      ['Amount', 'number', 6],
      ['Date', 'date', 6],
    ]);
    expect(analysed.selected.columns[0]?.['samples']).toEqual(['North', 'South', 'West']);

    const split = await ok<{ files: { path: string; value: string; rows: number }[]; skippedRows: number }>(
      client,
      'excel_execute',
      {
        file: workbook,
        sheet: analysed.selected.name,
        headerRow: analysed.selected.headerRow,
        splitColumn: 'Region',
        outputDir: shared,
      },
    );
    expectMatchesManifest('excel_execute', split);
    expect(split.files).toEqual([
      { path: join(shared, 'sales-North.xlsx'), value: 'North', rows: 2 },
      { path: join(shared, 'sales-South.xlsx'), value: 'South', rows: 3 },
      { path: join(shared, 'sales-West.xlsx'), value: 'West', rows: 1 },
    ]);
    expect((await readdir(shared)).sort()).toEqual([
      'sales-North.xlsx',
      'sales-South.xlsx',
      'sales-West.xlsx',
    ]);
    const south = await rowsOf(join(shared, 'sales-South.xlsx'));
    expect(south.title).toBe('Sales report, January');
    expect(south.header).toEqual(['Region', 'Product', 'Amount', 'Date']);
    expect(south.rows.map((r) => r.slice(0, 3))).toEqual([
      ['South', 'Coffee', 80],
      ['South', 'Juice', 300],
      ['South', 'Tea', 64],
    ]);
    // Styles and layout travel with the rows.
    expect(south.ws.getCell('A2').fill).toMatchObject({ fgColor: { argb: 'FFDDEEFF' } });
    expect(south.ws.getCell('A1').font).toMatchObject({ bold: true, size: 14 });
    expect(south.ws.getColumn(2).width).toBe(24);
    expect(south.ws.getCell('B1').isMerged).toBe(true);

    const staged = await ok<{
      confirmation: { confirmationId: string; messages: { to: string[]; subject: string; value: string }[] };
    }>(client, 'email_send_batch', {
      account: 'reports',
      group: 'managers',
      parts: split.files,
      subject: 'Sales {value} ({rows} rows)',
      body: 'Hello,\n\nthe {value} figures are attached: {file}.\n',
    });
    expectMatchesManifest('email_send_batch', staged);
    const { confirmationId } = staged.confirmation;
    expect(staged.confirmation.messages.map((m) => [m.value, m.to, m.subject])).toEqual([
      ['North', ['north@example.com'], 'Sales North (2 rows)'],
      ['South', ['south1@example.com', 'south2@example.com'], 'Sales South (3 rows)'],
      ['West', ['west@example.com'], 'Sales West (1 rows)'],
    ]);
    expect(received).toHaveLength(0);
    // Staging the same content again (a retried step) gives the same batch, not a second one.
    const again = await ok<{ confirmation: { confirmationId: string } }>(client, 'email_send_batch', {
      account: 'reports',
      group: 'managers',
      parts: split.files,
      subject: 'Sales {value} ({rows} rows)',
      body: 'Hello,\n\nthe {value} figures are attached: {file}.\n',
    });
    expect(again.confirmation.confirmationId).toBe(confirmationId);

    const sent = await ok<{ status: string; sent: number; messages: { status: string }[] }>(
      client,
      'confirm_send',
      { confirmationId },
    );
    expectMatchesManifest('confirm_send', sent);
    expect([sent.status, sent.sent, sent.messages.map((m) => m.status)]).toEqual([
      'sent',
      3,
      ['sent', 'sent', 'sent'],
    ]);
    expect(received).toHaveLength(3);
    expect(logins.at(-1)).toEqual({ user: 'reports@example.com', pass: 's3cret' });
    const byRegion = new Map(received.map((r) => [r.mail.subject?.split(' ')[1], r]));
    for (const [region, to, count] of [
      ['North', ['north@example.com'], 2],
      ['South', ['south1@example.com', 'south2@example.com'], 3],
      ['West', ['west@example.com'], 1],
    ] as const) {
      const got = byRegion.get(region);
      expect(got).toBeDefined();
      expect(got?.envelope.sort()).toEqual([...to, 'archive@example.com', 'boss@example.com'].sort());
      expect(got?.mail.text).toContain(`the ${region} figures are attached: sales-${region}.xlsx.`);
      expect(got?.mail.attachments.map((a) => a.filename)).toEqual([`sales-${region}.xlsx`]);
      const part = await rowsOf(got?.mail.attachments[0]?.content as Buffer);
      expect(part.rows).toHaveLength(count);
      expect(part.rows.every((r) => r[0] === region)).toBe(true);
    }

    // Idempotent by confirmation id: the second call sends nothing and says so.
    const second = await call(client, 'confirm_send', { confirmationId });
    expect(second.isError).toBeFalsy();
    expect(second.structuredContent).toMatchObject({ status: 'already_sent', sent: 0, alreadySent: 3 });
    expect((second.content[0] as { text: string }).text).toMatch(
      /^nothing sent: all 3 message\(s\) of cnf_\w+ were sent by an earlier call$/,
    );
    expect(received).toHaveLength(3);
  });

  it('filters rows before splitting and refuses what it cannot do with a sentence', async () => {
    const out = join(shared, 'filtered');
    const split = await ok<{ files: { value: string; rows: number }[]; skippedRows: number }>(
      client,
      'excel_execute',
      {
        file: workbook,
        splitColumn: 'region',
        outputDir: out,
        filters: [{ column: 'Amount', op: 'gte', value: 64 }],
        fileName: '{value}.xlsx',
      },
    );
    expect(split.files.map((f) => [f.value, f.rows])).toEqual([
      ['North', 1],
      ['South', 3],
    ]);
    expect(split.skippedRows).toBe(2);

    const text = join(root, 'files', 'notes.xlsx');
    await writeFile(text, 'just text, not a workbook');
    const cases: [OfficeToolName, Record<string, unknown>, RegExp][] = [
      [
        'excel_complex_config',
        { file: join(root, 'files', 'missing.xlsx') },
        /missing\.xlsx does not exist$/,
      ],
      [
        'excel_complex_config',
        { file: text },
        /notes\.xlsx is not an Excel workbook \(\.xlsx\) that can be read/,
      ],
      [
        'excel_complex_config',
        { file: 'files/sales.xlsx' },
        /^the workbook must be an absolute path; got "files\/sales\.xlsx"$/,
      ],
      [
        'excel_complex_config',
        { file: `${root}/files/../files/sales.xlsx` },
        /^the workbook may not contain "\.\." segments/,
      ],
      [
        'excel_complex_config',
        { file: workbook, sheet: 'Nope' },
        /^the workbook has no sheet "Nope"; its sheets: Sales, Notes$/,
      ],
      [
        'excel_execute',
        { file: workbook, splitColumn: 'Country', outputDir: shared },
        /^the split column "Country" is not a column of sheet Sales; its columns: Region, Product, Amount, Date$/,
      ],
      [
        'excel_execute',
        { file: workbook, splitColumn: 'Region', outputDir: '../../etc' },
        /^the output folder must be an absolute path/,
      ],
      [
        'excel_execute',
        { file: workbook, splitColumn: 'Region', outputDir: `${shared}/../..` },
        /may not contain "\.\." segments/,
      ],
      [
        'excel_execute',
        { file: workbook, splitColumn: 'Region', outputDir: shared, fileName: '../{value}.xlsx' },
        /may not contain/,
      ],
      [
        'excel_execute',
        {
          file: workbook,
          splitColumn: 'Region',
          outputDir: shared,
          filters: [{ column: 'Amount', op: 'in', value: 3 }],
        },
        /^filters\[0\] \(in\) needs a list as its value$/,
      ],
      [
        'email_send_batch',
        {
          account: 'nobody',
          group: 'managers',
          parts: [{ path: workbook, value: 'North' }],
          subject: 's',
          body: 'b',
        },
        /^there is no e-mail account "nobody"; configured: reports, nopass$/,
      ],
      [
        'email_send_batch',
        {
          account: 'reports',
          group: 'nobody',
          parts: [{ path: workbook, value: 'North' }],
          subject: 's',
          body: 'b',
        },
        /^there is no recipient group "nobody"; configured: managers, north-only$/,
      ],
      [
        'email_send_batch',
        {
          account: 'nopass',
          group: 'managers',
          parts: [{ path: workbook, value: 'North' }],
          subject: 's',
          body: 'b',
        },
        /no password for it; an admin must set one$/,
      ],
      [
        'email_send_batch',
        {
          account: 'reports',
          group: 'north-only',
          parts: [
            { path: workbook, value: 'North' },
            { path: workbook, value: 'East' },
          ],
          subject: 's',
          body: 'b',
        },
        /^group north-only has no recipients for "East"; add them to the group, give it a fallback, or set skipUnmatched$/,
      ],
      [
        'email_send_batch',
        {
          account: 'reports',
          group: 'managers',
          parts: [{ path: '/etc/../etc/passwd', value: 'North' }],
          subject: 's',
          body: 'b',
        },
        /^parts\[0\]\.path may not contain "\.\." segments/,
      ],
      [
        'email_send_batch',
        {
          account: 'reports',
          group: 'managers',
          parts: [{ path: workbook, value: 'North' }],
          subject: 'Sales {region}',
          body: 'b',
        },
        /^the subject uses \{region\}; it may use \{value\}, \{rows\}, \{file\}, \{date\}$/,
      ],
      ['confirm_send', { confirmationId: '../../etc/passwd' }, /is not a confirmation id/],
      [
        'confirm_send',
        { confirmationId: `cnf_${'0'.repeat(32)}` },
        /^there is no staged batch cnf_0+; stage one with email_send_batch first$/,
      ],
    ];
    for (const [tool, args, message] of cases) {
      const got = await refusal(client, tool, args);
      expect([tool, got]).toEqual([tool, expect.stringMatching(message)]);
    }
    // Arguments of the wrong shape are refused by the schema, and the server lives on.
    expect(await refusal(client, 'excel_execute', { file: workbook })).toMatch(/splitColumn/);
    expect((await ok<{ items: unknown[] }>(client, 'email_accounts_list', {})).items).toHaveLength(2);
    expect(received).toHaveLength(3);
  });

  it('lists accounts and groups for dropdowns, and names a broken setting', async () => {
    expect(await ok(client, 'email_accounts_list', {})).toEqual({
      items: [
        { value: 'reports', label: 'Reports <reports@example.com>' },
        { value: 'nopass', label: 'x@example.com' },
      ],
    });
    expect(await ok(client, 'email_tags_list', {})).toEqual({
      items: [
        { value: 'managers', label: 'Regional managers' },
        { value: 'north-only', label: 'north-only' },
      ],
    });
    const broken = await connect({
      ...settings(),
      groups: '[{"id":"g","recipients":{"North":["not-an-address"]}}]',
    });
    try {
      expect(await refusal(broken, 'email_tags_list', {})).toMatch(
        /^the plugin setting groups\.0\.recipients\.North\.0 is invalid: .+; an admin must fix it$/,
      );
      expect(await refusal(broken, 'email_accounts_list', {})).toMatch(/groups\.0\.recipients/);
    } finally {
      await broken.close();
    }
    const notJson = await connect({ accounts: '[{' });
    try {
      expect(await refusal(notJson, 'email_accounts_list', {})).toMatch(
        /^the plugin setting "accounts" is not valid JSON/,
      );
    } finally {
      await notJson.close();
    }
  });

  // Where the host cannot sandbox (no user namespaces), the plugin host's own tests say so.
  (canSandbox ? it : it.skip)(
    'works inside bubblewrap with nothing but its own bundle: self-contained, and blind outside its grants',
    async () => {
      const files = await mkdtemp(join(root, 'granted-'));
      await makeWorkbook(join(files, 'sales.xlsx'));
      const boxed = await connectSandboxed(settings(), files);
      try {
        const analysed = await ok<{ selected: { headerRow: number; rowCount: number } }>(
          boxed,
          'excel_complex_config',
          { file: '/files/sales.xlsx' },
        );
        expect(analysed.selected).toMatchObject({ headerRow: 2, rowCount: 6 });
        const split = await ok<{ files: { path: string }[] }>(boxed, 'excel_execute', {
          file: '/files/sales.xlsx',
          splitColumn: 'Region',
          outputDir: '/files/out',
        });
        expect(split.files.map((f) => f.path)).toEqual([
          '/files/out/sales-North.xlsx',
          '/files/out/sales-South.xlsx',
          '/files/out/sales-West.xlsx',
        ]);
        expect((await readdir(join(files, 'out'))).sort()).toEqual(
          split.files.map((f) => f.path.slice('/files/out/'.length)),
        );
        const staged = await ok<{ confirmation: { messages: unknown[] } }>(boxed, 'email_send_batch', {
          account: 'reports',
          group: 'managers',
          parts: split.files,
          subject: 'Boxed {value}',
          body: 'b',
        });
        expect(staged.confirmation.messages).toHaveLength(3);
        // The workbook outside the grant does not exist in there.
        expect(await refusal(boxed, 'excel_complex_config', { file: workbook })).toBe(
          `the workbook ${workbook} does not exist`,
        );
      } finally {
        await boxed.close();
      }
    },
  );

  it('retries only failed messages, and never resends one whose earlier send was interrupted unless asked', async () => {
    const data = await mkdtemp(join(root, 'data-'));
    const own = await connect(settings(), data);
    try {
      const split = await ok<{ files: unknown[] }>(own, 'excel_execute', {
        file: workbook,
        splitColumn: 'Region',
        outputDir: join(shared, 'retry'),
      });
      const staged = await ok<{ confirmation: { confirmationId: string } }>(own, 'email_send_batch', {
        account: 'reports',
        group: 'managers',
        parts: split.files,
        subject: 'Retry {value}',
        body: 'b',
      });
      const id = staged.confirmation.confirmationId;
      // The data folder holds every owner's staged batches: no tool reads or writes in it, nor in the bundle.
      const stagedCopy = join(data, 'batches', id, '0-sales-North.xlsx');
      expect(existsSync(stagedCopy)).toBe(true);
      for (const [tool, args] of [
        ['excel_complex_config', { file: stagedCopy }],
        ['excel_complex_config', { file: join(root, 'bundle', 'dist', 'server.cjs') }],
        ['excel_execute', { file: workbook, splitColumn: 'Region', outputDir: join(data, 'batches', id) }],
        [
          'email_send_batch',
          {
            account: 'reports',
            group: 'managers',
            parts: [{ path: stagedCopy, value: 'West' }],
            subject: 's',
            body: 'b',
          },
        ],
      ] as [OfficeToolName, Record<string, unknown>][]) {
        expect(await refusal(own, tool, args)).toMatch(
          / is inside the plugin's own directories; give a file or folder of the run$/,
        );
      }
      const before = received.length;
      refusedSubjects.add('Retry West');
      const partial = await call(own, 'confirm_send', { confirmationId: id });
      expect(partial.isError).toBe(true);
      expect((partial.content[0] as { text: string }).text).toMatch(
        /^2 of 3 messages of cnf_\w+ are sent; 1 failed \(first: .*message refused.*\); calling confirm_send again retries only those$/,
      );
      expect(received.length - before).toBe(2);
      refusedSubjects.clear();
      refused.add('boss@example.com');
      const retried = await ok<{ sent: number; alreadySent: number; messages: { rejected: string[] }[] }>(
        own,
        'confirm_send',
        { confirmationId: id },
      );
      expect([retried.sent, retried.alreadySent]).toEqual([1, 2]);
      // A refused recipient among accepted ones: delivered to the others, and said.
      expect(retried.messages.map((m) => m.rejected)).toEqual([[], [], ['boss@example.com']]);
      refused.clear();
      expect(
        received
          .slice(before)
          .map((r) => r.mail.subject)
          .sort(),
      ).toEqual(['Retry North', 'Retry South', 'Retry West']);

      // A crash between "sending" and "sent": the state on disk says sending. Not resent by default.
      const other = await ok<{ confirmation: { confirmationId: string } }>(own, 'email_send_batch', {
        account: 'reports',
        group: 'managers',
        parts: split.files,
        subject: 'Crash {value}',
        body: 'b',
      });
      const crashId = other.confirmation.confirmationId;
      const file = join(data, 'batches', `${crashId}.json`);
      const stored = JSON.parse(await readFile(file, 'utf8')) as { messages: { state: string }[] };
      (stored.messages[0] as { state: string }).state = 'sending';
      await writeFile(file, JSON.stringify(stored));
      const mark = received.length;
      const cautious = await call(own, 'confirm_send', { confirmationId: crashId });
      expect(cautious.isError).toBe(true);
      expect((cautious.content[0] as { text: string }).text).toMatch(
        /1 were being sent when an earlier call was interrupted/,
      );
      expect(
        received
          .slice(mark)
          .map((r) => r.mail.subject)
          .sort(),
      ).toEqual(['Crash South', 'Crash West']);
      const forced = await ok<{ sent: number; status: string }>(own, 'confirm_send', {
        confirmationId: crashId,
        resendUncertain: true,
      });
      expect([forced.status, forced.sent]).toEqual(['sent', 1]);
      expect(
        received
          .slice(mark)
          .map((r) => r.mail.subject)
          .sort(),
      ).toEqual(['Crash North', 'Crash South', 'Crash West']);
    } finally {
      await own.close();
    }
    // A fresh process over the same data directory: the batch is still sent.
    const restarted = await connect(settings(), data);
    try {
      const batches = (await readdir(join(data, 'batches'))).filter((n) => n.endsWith('.json'));
      const count = received.length;
      for (const name of batches) {
        const again = await ok<{ status: string; sent: number }>(restarted, 'confirm_send', {
          confirmationId: name.replace('.json', ''),
        });
        expect([again.status, again.sent]).toEqual(['already_sent', 0]);
      }
      expect(received.length).toBe(count);
    } finally {
      await restarted.close();
    }
  });
});
