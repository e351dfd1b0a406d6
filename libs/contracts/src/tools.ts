import { z } from 'zod';

/** What a tool does to the world: decides approval defaults and whether retries are safe. */
export const ToolEffect = z.enum(['read', 'write', 'external']);
export type ToolEffect = z.infer<typeof ToolEffect>;

export const ToolSource = z.enum(['builtin', 'mcp', 'workflow']);
export type ToolSource = z.infer<typeof ToolSource>;

/** One orchestrable tool as the catalog shows it (to the planner, the executor and the UI). */
export const ToolDescriptor = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()).describe('JSON Schema of the arguments'),
  effect: ToolEffect,
  idempotent: z.boolean(),
  source: ToolSource,
});
export type ToolDescriptor = z.infer<typeof ToolDescriptor>;

export const ToolCatalog = z.object({ tools: z.array(ToolDescriptor) });
export type ToolCatalog = z.infer<typeof ToolCatalog>;

/** MCP-shaped content blocks; built-ins return text. */
export const ToolContent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('json'), json: z.unknown() }),
]);
export type ToolContent = z.infer<typeof ToolContent>;

export const ToolResult = z.object({
  content: z.array(ToolContent),
  /** The tool ran and reports a failure the caller (a model) can act on. */
  isError: z.boolean(),
  /** Output was cut to the configured cap. */
  truncated: z.boolean(),
});
export type ToolResult = z.infer<typeof ToolResult>;

export const InvokeToolRequest = z.object({
  tool: z.string().min(1).max(300),
  arguments: z.record(z.string(), z.unknown()).default({}),
  /** Per-call timeout; capped by the registry's TOOL_TIMEOUT_MS. */
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
});
export type InvokeToolRequest = z.infer<typeof InvokeToolRequest>;
