import { PluginManifest } from '@switchyard/contracts';
import type { PluginRow } from '@switchyard/server-db-tools';
import type { McpConnection } from '../mcp/mcp-connection';
import { manifestIssues } from './bundle-loader';
import { pluginDescriptors } from './plugin-tools.service';

const manifest = (over: Record<string, unknown> = {}) =>
  PluginManifest.parse({
    id: 'office-pack',
    version: '1.0.0',
    server: { command: 'node', args: ['${root}/server.js'] },
    tools: {
      excel_execute: { effect: 'write', idempotent: true },
      confirm_send: { effect: 'external', requiresApproval: true },
    },
    flowNodes: [
      {
        tool: 'excel_execute',
        label: 'Split a workbook',
        help: 'Writes one file per value of the column.',
        outputs: { type: 'object', properties: { files: { type: 'array' } } },
        examples: [{ files: ['a.xlsx'] }],
      },
    ],
    ...over,
  });

describe('manifest checks beyond the schema', () => {
  it('accepts a consistent manifest', () => {
    expect(manifestIssues(manifest())).toEqual([]);
  });

  it('names each problem by its path', () => {
    const m = manifest({
      tools: { mcp__x: { effect: 'read' }, run_workflow_y: { effect: 'read' }, ok_tool: { effect: 'read' } },
      flowNodes: [
        { tool: 'ghost', label: 'G', outputs: {} },
        { tool: 'ok_tool', label: 'A', outputs: {} },
        { tool: 'ok_tool', label: 'B', outputs: {} },
      ],
      settings: [
        { key: 'k', label: 'K' },
        { key: 'k', label: 'K again' },
      ],
      server: { command: '${root}/../escape' },
    });
    expect(manifestIssues(m)).toEqual([
      { path: 'tools.mcp__x', message: 'names starting with mcp__ are reserved' },
      { path: 'tools.run_workflow_y', message: 'names starting with run_workflow_ are reserved' },
      { path: 'flowNodes.0.tool', message: "ghost is not one of the manifest's tools" },
      { path: 'flowNodes.2.tool', message: 'ok_tool already has a flow node' },
      { path: 'settings.1.key', message: 'k is declared twice' },
      { path: 'server.command', message: 'must stay inside the bundle' },
    ]);
  });

  it('refuses shell syntax in the command and unknown keys (the schema)', () => {
    expect(PluginManifest.safeParse({ ...manifest(), server: { command: 'node; rm -rf /' } }).success).toBe(
      false,
    );
    expect(PluginManifest.safeParse({ ...manifest(), extra: 1 }).success).toBe(false);
  });
});

describe('plugin tools in the catalog', () => {
  const row = { id: 'office-pack', manifest: manifest() } as PluginRow;
  const conn = {
    tools: [
      { name: 'excel_execute', description: 'Split', inputSchema: { $schema: 'x', type: 'object' } },
      {
        name: 'confirm_send',
        description: 'Send',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
      },
      { name: 'not_in_manifest', description: 'hidden', inputSchema: { type: 'object' } },
    ],
  } as unknown as McpConnection;

  it('shows only manifest tools, with its metadata and the flow node as output schema', () => {
    expect(pluginDescriptors(row, conn)).toEqual([
      {
        name: 'excel_execute',
        description: 'Split\n\nWrites one file per value of the column.',
        inputSchema: { type: 'object' },
        effect: 'write',
        idempotent: true,
        source: 'plugin',
        plugin: 'office-pack',
        outputSchema: {
          type: 'object',
          properties: { files: { type: 'array' } },
          examples: [{ files: ['a.xlsx'] }],
        },
      },
      {
        name: 'confirm_send',
        description: 'Send',
        inputSchema: { type: 'object' },
        effect: 'external',
        idempotent: false,
        source: 'plugin',
        plugin: 'office-pack',
        requiresApproval: true,
        outputSchema: { type: 'object' },
      },
    ]);
  });
});
