import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BatchStore } from './batch-store';
import { ToolError } from './errors';
import { analyseWorkbook, splitWorkbook } from './excel';
import { confirmSend, stageBatch } from './mail';
import { checkDataDir } from './paths';
import { OFFICE_TOOLS, type OfficeToolName } from './schemas';
import { readSettings } from './settings';

/**
 * The office pack's MCP server (stdio). It runs inside the plugin sandbox: the bundle read-only
 * (SWITCHYARD_PLUGIN_ROOT), its private data directory writable (SWITCHYARD_PLUGIN_DATA: staged
 * batches), the admin's settings in SWITCHYARD_PLUGIN_CONFIG, and only the files a run granted.
 * Every failure is a tool error with a sentence; nothing a caller sends can stop the server.
 */

function dataDir(): string {
  const dir = process.env['SWITCHYARD_PLUGIN_DATA'];
  if (!dir)
    throw new ToolError('SWITCHYARD_PLUGIN_DATA is not set: the host gives the plugin no data directory');
  return checkDataDir(dir);
}

const failure = (message: string): CallToolResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
});

function success(value: Record<string, unknown>, text: string): CallToolResult {
  return {
    content: [
      { type: 'text', text },
      { type: 'text', text: JSON.stringify(value) },
    ],
    structuredContent: value,
  };
}

async function guarded(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof ToolError) return failure(err.message);
    return failure(`the office plugin failed unexpectedly: ${(err as Error).message}`);
  }
}

type Handler = (args: never) => Promise<CallToolResult>;

const handlers: Record<OfficeToolName, Handler> = {
  excel_complex_config: (args: Parameters<typeof analyseWorkbook>[0]) =>
    guarded(async () => {
      const out = await analyseWorkbook(args);
      const s = out.selected;
      return success(
        out,
        `${out.file}: ${out.sheets.length} sheet(s); ${s.name} has ${s.rowCount} rows under header row ${s.headerRow}, columns ${s.columns.map((c) => `${c.name} (${c.type}, ${c.distinctCount} distinct)`).join(', ')}`,
      );
    }),
  excel_execute: (args: Parameters<typeof splitWorkbook>[0]) =>
    guarded(async () => {
      const out = await splitWorkbook(args);
      return success(
        out,
        `wrote ${out.files.length} part(s) of ${out.sheet} by ${out.column} into ${out.outputDir}`,
      );
    }),
  email_accounts_list: () =>
    guarded(async () => {
      const items = readSettings(process.env).accounts.map((a) => ({
        value: a.id,
        label: a.label ?? a.from,
      }));
      return success({ items }, `${items.length} account(s)`);
    }),
  email_tags_list: () =>
    guarded(async () => {
      const items = readSettings(process.env).groups.map((g) => ({ value: g.id, label: g.label ?? g.id }));
      return success({ items }, `${items.length} recipient group(s)`);
    }),
  email_send_batch: (args: Parameters<typeof stageBatch>[0]) =>
    guarded(async () => {
      const out = await stageBatch(args, readSettings(process.env), new BatchStore(dataDir()));
      const c = out.confirmation;
      return success(
        out,
        `staged ${c.messages.length} message(s) from ${c.from} as ${c.confirmationId}; nothing is sent until confirm_send`,
      );
    }),
  confirm_send: (args: Parameters<typeof confirmSend>[0]) =>
    guarded(async () => {
      const { output, problem } = await confirmSend(
        args,
        readSettings(process.env),
        new BatchStore(dataDir()),
      );
      if (problem) return { ...failure(problem), structuredContent: output };
      const text =
        output.status === 'already_sent'
          ? `nothing sent: all ${output.alreadySent} message(s) of ${output.confirmationId} were sent by an earlier call`
          : `sent ${output.sent} message(s) of ${output.confirmationId}${output.alreadySent ? ` (${output.alreadySent} were sent earlier)` : ''}`;
      const rejected = output.messages.flatMap((m) => m.rejected);
      return success(output, rejected.length ? `${text}; the relay refused ${rejected.join(', ')}` : text);
    }),
};

export function createServer(): McpServer {
  const server = new McpServer({ name: 'switchyard-office', version: '1.0.0' });
  for (const [name, tool] of Object.entries(OFFICE_TOOLS) as [
    OfficeToolName,
    (typeof OFFICE_TOOLS)[OfficeToolName],
  ][]) {
    const handler = handlers[name] as (args: unknown) => Promise<CallToolResult>;
    server.registerTool(
      name,
      { description: tool.description, inputSchema: tool.input, outputSchema: tool.output },
      (args: unknown) => handler(args),
    );
  }
  return server;
}

async function main(): Promise<void> {
  const server = createServer();
  await server.connect(new StdioServerTransport());
}

main().catch((err: unknown) => {
  process.stderr.write(`office plugin: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
