import { z } from 'zod';
import { NumberedPageQuery, numberedPageOf } from './identity';
import { AgentPlan, PlanIssue, RetryPolicy } from './plan';
import { PluginId } from './plugins';
import { Budget, PermissionMode, RunStatus } from './runs';
import { RunFilesInput } from './files';

/** Tools that run a published workflow are named `run_workflow_<workflow id>`. */
export const WORKFLOW_TOOL_PREFIX = 'run_workflow_';

export function workflowToolName(workflowId: string): string {
  return `${WORKFLOW_TOOL_PREFIX}${workflowId}`;
}

/** The workflow id in a `run_workflow_<id>` tool name, or undefined. */
export function workflowIdOfTool(tool: string): string | undefined {
  if (!tool.startsWith(WORKFLOW_TOOL_PREFIX)) return undefined;
  const id = tool.slice(WORKFLOW_TOOL_PREFIX.length);
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id) ? id : undefined;
}

/**
 * The authored canvas graph, stored verbatim (unknown fields kept). Tool nodes compile to plan steps
 * (node id = step id), edges to `dependsOn`; the one `start` node stands for the inputs (edges out of it
 * are kept, not compiled; edges into it are refused); notes and other node types are kept but not compiled.
 */
export const FlowNode = z
  .object({
    id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64'),
    type: z
      .string()
      .min(1)
      .max(64)
      .describe(
        '"tool" nodes become steps; "start" stands for the inputs; "note" and others are kept as drawn',
      ),
    position: z.object({ x: z.number(), y: z.number() }).passthrough().optional(),
    data: z
      .object({
        tool: z.string().max(300).optional(),
        arguments: z.record(z.string(), z.unknown()).optional(),
        description: z.string().max(4_000).optional(),
        requiresApproval: z.boolean().optional(),
        retry: RetryPolicy.optional(),
        pinned: z.object({ result: z.unknown() }).optional(),
      })
      .passthrough()
      .default({}),
  })
  .passthrough();
export type FlowNode = z.infer<typeof FlowNode>;

export const FlowEdge = z
  .object({ id: z.string().max(200).optional(), source: z.string().max(64), target: z.string().max(64) })
  .passthrough();
export type FlowEdge = z.infer<typeof FlowEdge>;

export const FlowGraph = z
  .object({
    nodes: z.array(FlowNode).max(500),
    edges: z.array(FlowEdge).max(2_000).default([]),
    notes: z.array(z.unknown()).max(500).optional(),
  })
  .passthrough();
export type FlowGraph = z.infer<typeof FlowGraph>;

/** A JSON Schema object describing the inputs (`{{inputs.x}}`). */
export const InputSchema = z
  .object({ type: z.literal('object'), properties: z.record(z.string(), z.unknown()).default({}) })
  .passthrough()
  .default({ type: 'object', properties: {} });
export type InputSchema = z.infer<typeof InputSchema>;

const Name = z.string().trim().min(1).max(200);

export const CreateWorkflowBody = z
  .object({
    name: Name,
    description: z.string().max(10_000).default(''),
    inputSchema: InputSchema,
    plan: z
      .unknown()
      .optional()
      .describe('an AgentPlan; ignored when a graph is given (the graph is compiled)'),
    graph: z.unknown().optional().describe('the canvas graph, stored verbatim and compiled into the plan'),
  })
  .strict()
  .refine((b) => b.plan !== undefined || b.graph !== undefined, {
    message: 'give a plan, a graph, or both',
    path: ['plan'],
  });
export type CreateWorkflowBody = z.infer<typeof CreateWorkflowBody>;

export const UpdateWorkflowBody = z
  .object({
    revision: z.number().int().min(1).describe('the revision this edit is based on'),
    name: Name,
    description: z.string().max(10_000).default(''),
    inputSchema: InputSchema,
    plan: z.unknown().optional(),
    graph: z.unknown().optional(),
  })
  .strict()
  .refine((b) => b.plan !== undefined || b.graph !== undefined, {
    message: 'give a plan, a graph, or both',
    path: ['plan'],
  });
export type UpdateWorkflowBody = z.infer<typeof UpdateWorkflowBody>;

export const RevisionBody = z.object({ revision: z.number().int().min(1) }).strict();
export type RevisionBody = z.infer<typeof RevisionBody>;

export const RevisionQuery = z.object({ revision: z.coerce.number().int().min(1) });

export const WorkflowIdParam = z.object({ id: z.string().uuid() });
export const WorkflowVersionParam = z.object({ id: z.string().uuid(), n: z.coerce.number().int().min(1) });

/** The newest run the caller started from a workflow (by hand, as a tool, as a task or on a schedule). */
export const WorkflowLastRun = z.object({
  id: z.string().uuid(),
  status: RunStatus,
  createdAt: z.string(),
});
export type WorkflowLastRun = z.infer<typeof WorkflowLastRun>;

export const WorkflowSummary = z.object({
  id: z.string().uuid(),
  ownerId: z.string().uuid(),
  name: z.string(),
  description: z.string(),
  revision: z.number().int(),
  publishedVersion: z.number().int().nullable().describe('the version the catalog and tool calls run'),
  tool: z.string().nullable().describe('run_workflow_<id> while published'),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastRun: WorkflowLastRun.nullable().describe('the newest run you started from this workflow, if any'),
});
export type WorkflowSummary = z.infer<typeof WorkflowSummary>;

export const Workflow = WorkflowSummary.extend({
  inputSchema: z.record(z.string(), z.unknown()),
  plan: AgentPlan,
  graph: z.unknown().nullable(),
});
export type Workflow = z.infer<typeof Workflow>;

export const WorkflowListQuery = NumberedPageQuery.extend({
  q: z.string().max(200).optional().describe('text in the name or description'),
});
export type WorkflowListQuery = z.infer<typeof WorkflowListQuery>;

export const WorkflowPage = numberedPageOf(WorkflowSummary);
export type WorkflowPage = z.infer<typeof WorkflowPage>;

export const WorkflowVersion = z.object({
  workflowId: z.string().uuid(),
  version: z.number().int(),
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  plan: AgentPlan,
  graph: z.unknown().nullable(),
  createdAt: z.string(),
});
export type WorkflowVersion = z.infer<typeof WorkflowVersion>;

export const WorkflowVersionList = z.object({
  items: z.array(WorkflowVersion.omit({ plan: true, graph: true, inputSchema: true })),
});
export type WorkflowVersionList = z.infer<typeof WorkflowVersionList>;

/** A definition shipped with the platform, instantiated as a new draft of the caller's. */
export const WorkflowTemplate = z.object({
  id: z.string().regex(/^[a-z0-9-]{1,64}$/),
  name: z.string(),
  description: z.string(),
  category: z.string().optional().describe('a gallery group: files, automation, …'),
  requires: z
    .array(PluginId)
    .optional()
    .describe(
      'plugins whose tools the template uses: until an admin installs and enables them, the gallery shows it as needing them and instantiating it is refused',
    ),
  inputSchema: z.record(z.string(), z.unknown()),
  graph: FlowGraph.describe('the canvas graph: a start node, tool nodes with positions, edges, notes'),
});
export type WorkflowTemplate = z.infer<typeof WorkflowTemplate>;

export const WorkflowTemplateList = z.object({ items: z.array(WorkflowTemplate) });
export type WorkflowTemplateList = z.infer<typeof WorkflowTemplateList>;

export const WorkflowTemplateParam = z.object({ id: z.string().regex(/^[a-z0-9-]{1,64}$/) });

export const InstantiateTemplateBody = z
  .object({ name: Name.optional().describe("the new workflow's name; default: the template's") })
  .strict();
export type InstantiateTemplateBody = z.infer<typeof InstantiateTemplateBody>;

export const RunWorkflowBody = z
  .object({
    inputs: z.record(z.string(), z.unknown()).default({}),
    permissionMode: PermissionMode.default('ask'),
    planApproval: z
      .boolean()
      .default(true)
      .describe('pause for approval of the plan first (false: the person starting the run approves it)'),
    files: RunFilesInput.optional().describe(
      'workspace paths (strings) or file grants (docs/files.md); switchyard-file and shared-directory inputs are filled from them',
    ),
    version: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('a published version to run; default: the current draft'),
    budget: Budget.optional(),
  })
  .strict();
export type RunWorkflowBody = z.infer<typeof RunWorkflowBody>;

/** What the executor needs to run a workflow: a definition, resolved by the planner. */
export const ResolvedWorkflow = z.object({
  workflowId: z.string().uuid(),
  version: z.number().int().nullable().describe('null: the draft'),
  name: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  plan: AgentPlan,
});
export type ResolvedWorkflow = z.infer<typeof ResolvedWorkflow>;

export const WorkflowIssues = z.object({ issues: z.array(PlanIssue) });
