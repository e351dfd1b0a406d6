import { z } from 'zod';
import { OwnerName } from './identity';
import { PermissionMode } from './runs';

/**
 * Switchyard as an MCP server (`/mcp`, Streamable HTTP): each owner's published workflows as tools
 * `run_workflow_<id>`, background tasks as `task_*` tools, and the owner's runs as resources
 * `switchyard://runs/{id}`. See docs/mcp-server.md.
 */

/** The MCP protocol revisions `/mcp` is tested against (the SDK also answers older ones). */
export const MCP_PROTOCOL_REVISIONS = ['2025-06-18', '2025-11-25'] as const;

/** A run as an MCP resource: `switchyard://runs/<run id>`. */
export const RUN_RESOURCE_PREFIX = 'switchyard://runs/';
export const RUN_RESOURCE_TEMPLATE = 'switchyard://runs/{runId}';

export function runResourceUri(runId: string): string {
  return `${RUN_RESOURCE_PREFIX}${runId}`;
}

/** The run id in a `switchyard://runs/<id>` URI, or undefined. */
export function runIdOfResource(uri: string): string | undefined {
  if (!uri.startsWith(RUN_RESOURCE_PREFIX)) return undefined;
  const id = uri.slice(RUN_RESOURCE_PREFIX.length);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? id : undefined;
}

export const McpExposedWorkflows = z
  .union([z.literal('all'), z.array(z.string().uuid()).max(500)])
  .describe('"all": every published workflow of the owner; else only these (each still has to be published)');
export type McpExposedWorkflows = z.infer<typeof McpExposedWorkflows>;

/** An owner's MCP access; an owner without a stored row has the defaults (enabled, "ask", all). */
export const McpAccess = z.object({
  owner: OwnerName,
  enabled: z
    .boolean()
    .describe("whether this owner's tokens may use /mcp (an admin turns it off or on; default on)"),
  permissionMode: PermissionMode.describe(
    'the mode of every run an MCP client starts; nobody can answer an approval there, so under "ask" a non-read step no allow rule covers is refused',
  ),
  exposedWorkflows: McpExposedWorkflows,
  updatedAt: z.string().nullable().describe('null: never changed, the defaults apply'),
});
export type McpAccess = z.infer<typeof McpAccess>;

export const McpAccessQuery = z.object({
  owner: OwnerName.optional().describe("admins only: another owner's settings"),
});
export type McpAccessQuery = z.infer<typeof McpAccessQuery>;

export const McpAccessBody = z
  .object({
    enabled: z.boolean().optional().describe('admins only; left out: unchanged'),
    permissionMode: PermissionMode.optional(),
    exposedWorkflows: McpExposedWorkflows.optional(),
  })
  .strict();
export type McpAccessBody = z.infer<typeof McpAccessBody>;

/**
 * A workflow was published, unpublished or deleted (planner), or an owner's MCP access changed
 * (gateway): open MCP sessions of that owner tell their clients the tool list changed.
 */
export const WORKFLOWS_CHANGED_SUBJECT = 'events.planner.workflows.changed';
export const WorkflowsChanged = z.object({
  ownerId: z.string().uuid(),
  workflowId: z.string().uuid().optional(),
  published: z.boolean().optional(),
});
export type WorkflowsChanged = z.infer<typeof WorkflowsChanged>;

export const MCP_ACCESS_CHANGED_SUBJECT = 'events.gateway.mcp.access.changed';
export const McpAccessChanged = z.object({ ownerId: z.string().uuid() });
export type McpAccessChanged = z.infer<typeof McpAccessChanged>;

/** Executor: start the published version unattended for an MCP tool call; answers once the run exists. */
export const StartPublishedRequest = z.object({
  workflowId: z.string().uuid(),
  inputs: z.record(z.string(), z.unknown()),
  permissionMode: PermissionMode,
});
export type StartPublishedRequest = z.infer<typeof StartPublishedRequest>;

export const StartedPublished = z.object({
  runId: z.string().uuid(),
  name: z.string(),
  steps: z.number().int().min(0).describe("the plan's step count (progress total)"),
});
export type StartedPublished = z.infer<typeof StartedPublished>;

/** The structured result of a `run_workflow_<id>` call (its MCP outputSchema). */
export const McpWorkflowResult = z.object({
  runId: z.string().uuid(),
  status: z.literal('completed'),
  result: z.unknown().describe("the run's result: the result of each final step"),
});
export type McpWorkflowResult = z.infer<typeof McpWorkflowResult>;
