import { z } from 'zod';
import { ErrorCode, FieldIssue } from './errors';
import {
  Permission,
  CreateTokenBody,
  CreatedToken,
  IdParam,
  Me,
  TokenListQuery,
  TokenPage,
  ApiTokenInfo,
} from './identity';
import { PlatformHealth, ServiceHealth, ServiceNameParam } from './services';
import { InvokeToolRequest, ToolDescriptor, ToolResult } from './tools';
import { StreamQuery } from './run-events';
import {
  EvaluateBody,
  Hook,
  HookBody,
  HookIdParam,
  HookList,
  PermissionDecision,
  PermissionSettings,
  RuleLists,
  RuleScopeQuery,
} from './permissions';
import {
  ApproveBody,
  ApproveQuery,
  BatchBody,
  RewindBody,
  RunControlReply,
  RunDetail,
  RunIdParam,
  RunListQuery,
  RunPage,
  StartedBatch,
  StartedRun,
  StartRunBody,
} from './runs';
import {
  Agent,
  AgentIdParam,
  AgentListQuery,
  AgentPage,
  CreateAgentBody,
  ToolSet,
  UpdateAgentBody,
} from './agents';
import {
  CreateMcpToolBody,
  DeletedMcpTools,
  McpToolAllQuery,
  McpToolIdParam,
  McpToolIdsParam,
  McpToolList,
  McpToolListQuery,
  McpToolOptions,
  McpToolPage,
  McpToolRecord,
  McpToolStatusQuery,
  McpToolTestResult,
  UpdateMcpToolBody,
} from './mcp-tools';

/** RFC 9457 problem details, with our stable `code`. */
export const Problem = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: ErrorCode,
  instance: z.string().optional(),
  correlationId: z.string(),
  errors: z.array(FieldIssue).optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Problem = z.infer<typeof Problem>;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * One HTTP route: the gateway registers its handler from this, validates with these schemas and the
 * OpenAPI document is generated from the same object, so the docs cannot drift from the code.
 */
export interface RouteDef {
  readonly method: HttpMethod;
  /** OpenAPI-style path, `{param}` placeholders. */
  readonly path: string;
  readonly summary: string;
  readonly tag: string;
  /** `public` routes need no token. */
  readonly auth:
    | 'public'
    | { readonly permission: Permission }
    | { readonly anyOf: readonly Permission[] }
    | 'authenticated';
  /** Media type of a successful response; JSON unless said. */
  readonly produces?: 'application/json' | 'text/csv' | 'text/event-stream';
  /** The SSE stream is the one route that also accepts `?token=` (EventSource cannot set headers). */
  readonly queryToken?: boolean;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  readonly status?: number;
  readonly errors: readonly ErrorCode[];
}

function route<const R extends RouteDef>(r: R): R {
  return r;
}

export const Routes = {
  health: route({
    method: 'GET',
    path: '/api/health',
    summary: 'Health of every service and of NATS, Postgres and Redis; 503 names what is down',
    tag: 'system',
    auth: 'public',
    response: PlatformHealth,
    errors: ['unavailable'],
  }),
  service: route({
    method: 'GET',
    path: '/api/services/{name}',
    summary: 'Ask one service, over NATS, for its own health and identity',
    tag: 'system',
    auth: { permission: 'system:service:query' },
    params: ServiceNameParam,
    response: ServiceHealth,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  me: route({
    method: 'GET',
    path: '/api/me',
    summary: 'The caller: owner, role and permissions',
    tag: 'identity',
    auth: 'authenticated',
    response: Me,
    errors: ['unauthenticated'],
  }),
  createToken: route({
    method: 'POST',
    path: '/api/tokens',
    summary: 'Create an API token (for yourself, or as admin for any owner, creating the owner if needed)',
    tag: 'identity',
    auth: { permission: 'identity:token:create' },
    body: CreateTokenBody,
    response: CreatedToken,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  listTokens: route({
    method: 'GET',
    path: '/api/tokens',
    summary: 'List API tokens (secrets are never shown again), newest first',
    tag: 'identity',
    auth: { permission: 'identity:token:list' },
    query: TokenListQuery,
    response: TokenPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  revokeToken: route({
    method: 'DELETE',
    path: '/api/tokens/{id}',
    summary: 'Revoke an API token; it stops working at once on every gateway replica within the cache TTL',
    tag: 'identity',
    auth: { permission: 'identity:token:revoke' },
    params: IdParam,
    response: ApiTokenInfo,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  toolCatalog: route({
    method: 'GET',
    path: '/api/agent/tools',
    summary:
      'The tools the caller may orchestrate, as a JSON array: name, description, inputSchema (JSON Schema), effect, idempotent, source',
    tag: 'tools',
    auth: { permission: 'mcp:tool:list' },
    response: z.array(ToolDescriptor),
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  runStart: route({
    method: 'POST',
    path: '/api/agent/run',
    summary:
      'Start a run: with `workflow` (an AgentPlan) the plan is validated before any tool runs and no model is needed; ' +
      'without it the configured model drafts the plan (plan_token events), then the run waits for plan approval unless config.planApproval is false',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    body: StartRunBody,
    response: StartedRun,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'model_not_configured', 'unavailable'],
  }),
  runBatch: route({
    method: 'POST',
    path: '/api/agent/batch',
    summary:
      'Start 1–8 independent runs at once; each keeps its own approvals, cancel, history and stream. ' +
      'capabilityMode "read-only" refuses, before any tool runs, a plan with a non-read step. Nothing starts if any run is refused',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    body: BatchBody,
    response: StartedBatch,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'model_not_configured', 'unavailable'],
  }),
  runApprove: route({
    method: 'POST',
    path: '/api/agent/{runId}/approve',
    summary:
      'Release the waiting gate (plan or step). With no body the plan is approved as is; a body holding an edited AgentPlan is ' +
      'validated and adopted first (at a step gate, steps that already started must stay unchanged)',
    tag: 'runs',
    auth: { permission: 'agent:run:approve' },
    params: RunIdParam,
    query: ApproveQuery,
    body: ApproveBody,
    response: RunControlReply,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  runCancel: route({
    method: 'POST',
    path: '/api/agent/{runId}/cancel',
    summary:
      'Cancel cooperatively: no new steps start, in-flight tool calls are aborted, the stream ends with `cancelled` (never `complete`)',
    tag: 'runs',
    auth: { permission: 'agent:run:cancel' },
    params: RunIdParam,
    response: RunControlReply,
    status: 200,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  runList: route({
    method: 'GET',
    path: '/api/agent/runs',
    summary: "The caller's runs, newest first; q searches goal, summary and error text",
    tag: 'runs',
    auth: { permission: 'agent:run:list' },
    query: RunListQuery,
    response: RunPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  runGet: route({
    method: 'GET',
    path: '/api/agent/runs/{runId}',
    summary: "A run's plan, step executions (with results) and audit events",
    tag: 'runs',
    auth: { permission: 'agent:run:list' },
    params: RunIdParam,
    response: RunDetail,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  runResume: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/resume',
    summary:
      'Resume a failed, cancelled or interrupted run in place: completed steps are reused, the rest run again after the restored plan is reviewed',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    response: StartedRun,
    status: 200,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  runFork: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/fork',
    summary: "Copy a finished run's plan into a new run that waits for plan review; nothing is reused",
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    response: StartedRun,
    status: 200,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  runRewind: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/rewind',
    summary:
      'New run with the first keepSteps steps of a finished run and their completed executions, waiting for plan review. ' +
      'Side effects of the dropped steps are NOT undone: the review gate is where you account for them',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    body: RewindBody,
    response: StartedRun,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  permissionsGet: route({
    method: 'GET',
    path: '/api/settings/permissions',
    summary:
      'Your permission rules (allow, ask, deny; one matcher per line), with the global rules that apply on top; ?scope=global for the global lists',
    tag: 'settings',
    auth: { permission: 'settings:permissions:read' },
    query: RuleScopeQuery,
    response: PermissionSettings,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  permissionsPut: route({
    method: 'PUT',
    path: '/api/settings/permissions',
    summary:
      'Replace your rules (or, for admins, ?scope=global). Every bad line is reported with its list, line number and why; nothing is saved when one is bad. ' +
      'Matchers: Command(git status), Command(git:*), Tool(excel_*), Effect(read), Mcp(github__*), mcp__github, WebFetch(domain:example.com)',
    tag: 'settings',
    auth: { permission: 'settings:permissions:edit' },
    query: RuleScopeQuery,
    body: RuleLists,
    response: PermissionSettings,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  permissionsEvaluate: route({
    method: 'POST',
    path: '/api/agent/permissions/evaluate',
    summary:
      'What the gate would decide for this tool call by you, and why: pre-tool-use hooks → deny → ask → allow → permission-mode default',
    tag: 'settings',
    auth: { permission: 'settings:permissions:read' },
    body: EvaluateBody,
    response: PermissionDecision,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  hookList: route({
    method: 'GET',
    path: '/api/settings/hooks',
    summary: 'Your hooks and the global ones',
    tag: 'settings',
    auth: { permission: 'settings:hooks:read' },
    response: HookList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  hookCreate: route({
    method: 'POST',
    path: '/api/settings/hooks',
    summary:
      'Add a hook. Command hooks run on the executor host: admins only. HTTP hook URLs get the same address checks as web_fetch',
    tag: 'settings',
    auth: { permission: 'settings:hooks:edit' },
    body: HookBody,
    response: Hook,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'conflict', 'unavailable'],
  }),
  hookUpdate: route({
    method: 'PUT',
    path: '/api/settings/hooks/{id}',
    summary: 'Replace a hook',
    tag: 'settings',
    auth: { permission: 'settings:hooks:edit' },
    params: HookIdParam,
    body: HookBody,
    response: Hook,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  hookDelete: route({
    method: 'DELETE',
    path: '/api/settings/hooks/{id}',
    summary: 'Delete a hook',
    tag: 'settings',
    auth: { permission: 'settings:hooks:edit' },
    params: HookIdParam,
    response: Hook,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  runStream: route({
    method: 'GET',
    path: '/api/agent/stream',
    summary:
      'Server-sent events of a run: replays from Last-Event-ID (or the start), then follows live with no gap or duplicate; ' +
      'frames are named after the event type with id = sequence; a comment heartbeat every 15 s; ends after a terminal event',
    tag: 'runs',
    auth: { permission: 'agent:run:list' },
    queryToken: true,
    query: StreamQuery,
    response: z.string(),
    produces: 'text/event-stream',
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  toolInvoke: route({
    method: 'POST',
    path: '/api/agent/tools/invoke',
    summary:
      'Call one catalog tool directly (admin diagnostics: runs outside any agent run and its approval gates)',
    tag: 'tools',
    auth: { permission: 'mcp:tool:test' },
    body: InvokeToolRequest,
    response: ToolResult,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'tool_failed',
      'timeout',
      'unavailable',
    ],
  }),
  agentList: route({
    method: 'GET',
    path: '/api/agents',
    summary: 'Your agents, paged',
    tag: 'agents',
    auth: { permission: 'agent:agent:list' },
    query: AgentListQuery,
    response: AgentPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  agentCreate: route({
    method: 'POST',
    path: '/api/agents',
    summary: 'Create an agent: model settings, system prompt and associated tool record ids',
    tag: 'agents',
    auth: { permission: 'agent:agent:add' },
    body: CreateAgentBody,
    response: Agent,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'conflict', 'unavailable'],
  }),
  agentGet: route({
    method: 'GET',
    path: '/api/agents/{id}',
    summary: 'One of your agents',
    tag: 'agents',
    auth: { permission: 'agent:agent:list' },
    params: AgentIdParam,
    response: Agent,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  agentUpdate: route({
    method: 'PUT',
    path: '/api/agents/{id}',
    summary: 'Change an agent (only the fields given)',
    tag: 'agents',
    auth: { permission: 'agent:agent:edit' },
    params: AgentIdParam,
    body: UpdateAgentBody,
    response: Agent,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  agentDelete: route({
    method: 'DELETE',
    path: '/api/agents/{id}',
    summary: 'Delete an agent',
    tag: 'agents',
    auth: { permission: 'agent:agent:remove' },
    params: AgentIdParam,
    response: Agent,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  agentTools: route({
    method: 'GET',
    path: '/api/agents/{id}/tools',
    summary:
      'The tools the agent can use now: its associated records, enabled (MCP: tested, unchanged, reachable)',
    tag: 'agents',
    auth: { permission: 'agent:agent:list' },
    params: AgentIdParam,
    response: ToolSet,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  // Tool record management: the seed's paths, parameters and permission strings.
  mcpToolList: route({
    method: 'GET',
    path: '/mcp/tool/list',
    summary: 'Tool records, paged; filter by part of the name, type and status',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:list' },
    query: McpToolListQuery,
    response: McpToolPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpToolAll: route({
    method: 'GET',
    path: '/mcp/tool/all',
    summary: 'All tool records matching a keyword, type and status',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:list' },
    query: McpToolAllQuery,
    response: McpToolList,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpToolOptions: route({
    method: 'GET',
    path: '/mcp/tool/options',
    summary: 'Enabled tool records, for choosing an agent’s tools',
    tag: 'tool records',
    auth: { anyOf: ['agent:agent:list', 'agent:agent:add', 'agent:agent:edit'] },
    response: McpToolOptions,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpToolExport: route({
    method: 'POST',
    path: '/mcp/tool/export',
    summary: 'All tool records as CSV (connection settings are never exported)',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:export' },
    query: McpToolAllQuery,
    response: z.string(),
    produces: 'text/csv',
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpToolGet: route({
    method: 'GET',
    path: '/mcp/tool/{id}',
    summary: 'One tool record (without its connection settings)',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:query' },
    params: McpToolIdParam,
    response: McpToolRecord,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  mcpToolCreate: route({
    method: 'POST',
    path: '/mcp/tool',
    summary: 'Add a LOCAL (stdio) or REMOTE (Streamable HTTP) MCP server; returns the new record',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:add' },
    body: CreateMcpToolBody,
    response: McpToolRecord,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'conflict', 'unavailable'],
  }),
  mcpToolUpdate: route({
    method: 'PUT',
    path: '/mcp/tool',
    summary: 'Edit a record; an empty configJson keeps the stored settings, a value replaces them whole',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:edit' },
    body: UpdateMcpToolBody,
    response: McpToolRecord,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  mcpToolStatus: route({
    method: 'PUT',
    path: '/mcp/tool/{id}/status',
    summary: 'Enable or disable a record (?status=ENABLED|DISABLED)',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:edit' },
    params: McpToolIdParam,
    query: McpToolStatusQuery,
    response: McpToolRecord,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  mcpToolTest: route({
    method: 'POST',
    path: '/mcp/tool/{id}/test',
    summary:
      'Connect to the record’s server and list its real tools; a failed test is 200 with success=false and the reason',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:test' },
    params: McpToolIdParam,
    response: McpToolTestResult,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  mcpToolDelete: route({
    method: 'DELETE',
    path: '/mcp/tool/{ids}',
    summary: 'Delete records by comma-separated ids (all or nothing)',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:remove' },
    params: McpToolIdsParam,
    response: DeletedMcpTools,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
} as const satisfies Record<string, RouteDef>;
