import { WORKFLOW_TOOL_PREFIX, type ToolDescriptor } from '@switchyard/contracts';
import type { PortType } from './types';

/**
 * The canvas's colours, in one place: each node kind's colour tints its card (the card is the colour
 * darkened by 80%, the badge and the input bar take it whole, edges blend source → target), and each
 * port type has its own. The CSS reads the same values through `--node-color` on each card.
 */
export type NodeKind =
  'start' | 'note' | 'files' | 'command' | 'web' | 'sql' | 'tasks' | 'flow' | 'mcp' | 'workflow' | 'tool';

export const NODE_COLORS: Record<NodeKind, string> = {
  start: '#7ee787',
  note: '#fee440',
  files: '#64b5f6',
  command: '#ff7f7f',
  web: '#4dd0e1',
  sql: '#ffb938',
  tasks: '#9c89b8',
  flow: '#4ddbbb',
  mcp: '#e4b7ff',
  workflow: '#a3b18a',
  tool: '#d4a373',
};

export const PORT_COLORS: Record<PortType, string> = {
  text: '#7ee787',
  number: '#64b5f6',
  boolean: '#ffb938',
  object: '#e4b7ff',
  list: '#ff8fab',
  file: '#4dd0e1',
  any: '#8b8b8b',
};

const BUILTIN_KIND: Record<string, NodeKind> = {
  read_file: 'files',
  list_directory: 'files',
  write_file: 'files',
  edit_file: 'files',
  delete_file: 'files',
  execute_command: 'command',
  web_fetch: 'web',
  query_all_tables: 'sql',
  query_table_schema: 'sql',
  execute_sql_query: 'sql',
  wait: 'flow',
};

/** The palette group and colour of a tool. */
export function kindOfTool(name: string, source?: ToolDescriptor['source']): NodeKind {
  const builtin = BUILTIN_KIND[name];
  if (builtin) return builtin;
  if (name.startsWith('task_')) return 'tasks';
  if (source === 'workflow' || name.startsWith(WORKFLOW_TOOL_PREFIX)) return 'workflow';
  if (source === 'mcp' || name.startsWith('mcp__')) return 'mcp';
  return 'tool';
}

export function kindOfNode(
  type: string | undefined,
  tool: string | undefined,
  source?: ToolDescriptor['source'],
): NodeKind {
  if (type === 'start') return 'start';
  if (type === 'note') return 'note';
  return kindOfTool(tool ?? '', source);
}

/** MUI's darken: each channel scaled by (1 - amount). */
export function darken(hex: string, amount: number): string {
  const n = Number.parseInt(hex.slice(1), 16);
  const ch = (shift: number) => Math.round(((n >> shift) & 0xff) * (1 - amount));
  return `rgb(${ch(16)}, ${ch(8)}, ${ch(0)})`;
}
