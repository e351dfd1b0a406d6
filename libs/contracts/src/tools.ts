import { z } from 'zod';
import { InputAsker } from './elicitation';
import { InvocationFile } from './files';

/** What a tool does to the world: decides approval defaults and whether retries are safe. */
export const ToolEffect = z.enum(['read', 'write', 'external']);
export type ToolEffect = z.infer<typeof ToolEffect>;

export const ToolSource = z.enum(['builtin', 'mcp', 'workflow', 'plugin']);
export type ToolSource = z.infer<typeof ToolSource>;

/** One orchestrable tool as the catalog shows it (to the planner, the executor and the UI). */
export const ToolDescriptor = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()).describe('JSON Schema of the arguments'),
  effect: ToolEffect,
  idempotent: z.boolean(),
  source: ToolSource,
  requiresApproval: z
    .boolean()
    .optional()
    .describe('ask before every call in every permission mode but full access (plugin tools can declare it)'),
  outputSchema: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'JSON Schema of the value a successful call stands for in {{node.<id>.result}} references (with `examples` where the tool can give them); absent: unknown',
    ),
  plugin: z.string().optional().describe('the plugin that provides the tool (source "plugin")'),
  fileAccess: z
    .enum(['sandbox', 'host'])
    .optional()
    .describe(
      "a plugin tool that may see the run's file grants (manifest permissions.files and an admin's grant): in its sandbox, or on the host when plugins run unsandboxed; absent: only built-ins see grants",
    ),
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

/** One sampling request an MCP server made during a call, as its step records it (docs/mcp-sampling.md). */
export const SamplingNote = z.object({
  model: z.string(),
  inputTokens: z.number().int().min(0),
  outputTokens: z.number().int().min(0),
  stopReason: z.string().optional(),
  durationMs: z.number().min(0),
});
export type SamplingNote = z.infer<typeof SamplingNote>;

export const ToolResult = z.object({
  content: z.array(ToolContent),
  /** The tool ran and reports a failure the caller (a model) can act on. */
  isError: z.boolean(),
  /** Output was cut to the configured cap. */
  truncated: z.boolean(),
  /** For tools that run programs: whether it ran inside the command sandbox (recorded on the step). */
  sandboxed: z.boolean().optional(),
  /** The MCP server asked the model during the call (sampling/createMessage): one note per request. */
  sampling: z.array(SamplingNote).max(100).optional(),
  /**
   * The value the call stands for in `{{node.<id>.result}}` references, when the tool gives one beside
   * content written for people (a table and its rows, MCP structured content); else it is read from
   * the content. What the descriptor's `outputSchema` describes.
   */
  value: z.unknown().optional(),
});
export type ToolResult = z.infer<typeof ToolResult>;

export const InvokeToolRequest = z.object({
  tool: z.string().min(1).max(300),
  arguments: z.record(z.string(), z.unknown()).default({}),
  /** Per-call timeout; capped by the registry's TOOL_TIMEOUT_MS. */
  timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
  /** Lets the caller cancel the call later (TOOL_CANCEL_SUBJECT); unique per call. */
  invocationId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,100}$/)
    .optional(),
  /** For workflow tools: the permission mode of the calling run (its nested run cannot ask anyone). */
  permissionMode: z.enum(['ask', 'approve-for-me', 'full-access']).optional(),
  /** The run making the call (its file grants live under the run's files directory). */
  runId: z.string().uuid().optional(),
  /**
   * Set by the executor only, for plugin tools eligible for file grants: the run's grants to bind
   * into the plugin's sandbox. Ignored for other tools; each hostPath is checked by the registry.
   */
  files: z.array(InvocationFile).max(50).optional(),
  /**
   * Set by the executor only: the run step or chat call the tool is called for. An MCP server's
   * input request (elicitation) during the call goes to that run's or chat's replica, which shows it
   * to the person or declines it (an unattended run); without it a request is declined.
   */
  asker: InputAsker.optional(),
});
export type InvokeToolRequest = z.infer<typeof InvokeToolRequest>;

/** A direct call over HTTP: nobody is behind it to answer a server's input request (no `asker`). */
export const DirectInvokeBody = InvokeToolRequest.omit({ asker: true });
export type DirectInvokeBody = z.infer<typeof DirectInvokeBody>;

/**
 * Broadcast (every registry replica hears it; the one running the call aborts it): a command's
 * process group is killed, an MCP server gets notifications/cancelled, a wait stops.
 */
export const CancelInvocation = z.object({ invocationId: z.string().min(1).max(100) });
export type CancelInvocation = z.infer<typeof CancelInvocation>;
export const TOOL_CANCEL_SUBJECT = 'events.registry.invocation.cancel';
