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
import { DirectInvokeBody, ToolDescriptor, ToolResult } from './tools';
import { RunDetail, RunEvent, StreamQuery } from './run-events';
import { Inbox, INBOX_LIMIT } from './inbox';
import {
  InputAnswerBody,
  InputAnswerReply,
  InputRequest,
  InputRequestList,
  InputRequestListQuery,
  InputRequestParam,
} from './elicitation';
import { Memory, MemoryIdParam, MemoryListQuery, MemoryPage, MemorySettings } from './memory';
import { McpAccess, McpAccessBody, McpAccessQuery } from './mcp-server';
import {
  ChatApproveBody,
  ChatCallParam,
  ChatControlReply,
  ChatDenyBody,
  ChatEvent,
  ChatMessageBody,
  ChatSession,
  ChatSessionDetail,
  ChatSessionListQuery,
  ChatSessionPage,
  ChatSessionParam,
  ChatStreamQuery,
  CreateChatSessionBody,
  UpdateChatSessionBody,
} from './chat';
import { OwnerFeedFrame, OwnerFeedQuery } from './feed';
import { SubmitTaskBody, Task, TaskCapacity, TaskIdParam, TaskListQuery, TaskPage } from './tasks';
import {
  CreatedTrigger,
  DeliveryAccepted,
  DeliveryBody,
  DeliveryListQuery,
  DeliveryPage,
  RotatedSecret,
  Schedule,
  ScheduleBody,
  ScheduleIdParam,
  ScheduleList,
  SchedulePreview,
  SchedulePreviewBody,
  Trigger,
  TriggerBody,
  TriggerHookParam,
  TriggerIdParam,
  TriggerList,
} from './triggers';
import {
  CreateWorkflowBody,
  RevisionBody,
  RevisionQuery,
  RunWorkflowBody,
  UpdateWorkflowBody,
  Workflow,
  WorkflowIdParam,
  WorkflowListQuery,
  WorkflowPage,
  WorkflowVersionList,
  WorkflowVersionParam,
  InstantiateTemplateBody,
  WorkflowTemplateList,
  WorkflowTemplateParam,
} from './workflows';
import {
  EvaluateBody,
  EvaluatedCalls,
  EvaluateManyBody,
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
  ResumeBody,
  RewindBody,
  RunControlReply,
  RunIdParam,
  RunListQuery,
  RunPage,
  StartedBatch,
  StartedRun,
  StartRunBody,
} from './runs';
import {
  FileIdParam,
  FileListQuery,
  FilePage,
  InputOptions,
  InputOptionsParam,
  InputOptionsQuery,
  StoredFile,
  UploadQuery,
} from './files';
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
  McpOAuthCallbackQuery,
  McpOAuthCallbackResult,
  McpToolAllQuery,
  McpToolConnectResult,
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
import {
  DeletedPlugin,
  InstallPluginBody,
  Plugin,
  PluginGrantsBody,
  PluginIdParam,
  PluginList,
  PluginSettingsBody,
  PLUGIN_UPLOAD_LIMIT_BYTES,
} from './plugins';
import { PluginHooksEntry, PluginHooksList } from './plugin-trust';
import {
  MarketEntriesQuery,
  MarketEntryDetail,
  MarketEntryList,
  MarketEntryParam,
  MarketImportBody,
  MarketImported,
  MarketSource,
  MarketSourceBody,
  MarketSourceList,
  MarketSourceParam,
} from './market';

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
  /** Media type of a successful response; JSON unless said. For `text/event-stream`, `response` is each frame's data. */
  readonly produces?: 'application/json' | 'text/csv' | 'text/event-stream' | 'application/octet-stream';
  /**
   * Content negotiation: a request whose Accept prefers this type (a browser's navigation) gets it
   * instead, for the answer and for refusals alike; JSON otherwise.
   */
  readonly alsoProduces?: 'text/html';
  /** A raw request body the handler reads itself (streamed, with its own size limit) instead of JSON: a plugin bundle or an upload. */
  readonly consumes?: 'application/gzip' | 'application/octet-stream';
  /** The SSE streams are the only routes that also accept `?token=` (EventSource cannot set headers). */
  readonly queryToken?: boolean;
  readonly params?: z.ZodObject;
  readonly query?: z.ZodObject;
  readonly body?: z.ZodType;
  readonly response: z.ZodType;
  readonly status?: number;
  /**
   * Starts something: an `Idempotency-Key` header makes a repeat with the same body answer the
   * first result (another body with the same key: 409).
   */
  readonly idempotencyKey?: boolean;
  readonly errors: readonly ErrorCode[];
}

function route<const R extends RouteDef>(r: R): R {
  return r;
}

/** How a run's start can be refused: alone, in a batch, or streaming the run. */
const RUN_START_ERRORS: readonly ErrorCode[] = [
  'validation_failed',
  'unauthenticated',
  'forbidden',
  'not_found',
  'model_not_configured',
  'capacity_exceeded',
  'unavailable',
];

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
      'without it the configured model drafts the plan (plan_token events), then the run waits for plan approval unless config.planApproval is false. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    body: StartRunBody,
    response: StartedRun,
    status: 200,
    idempotencyKey: true,
    errors: RUN_START_ERRORS,
  }),
  runStartStream: route({
    method: 'POST',
    path: '/api/agent/run/stream',
    summary:
      'Start a run and follow it in one request: the same body, checks and refusals as POST /api/agent/run (a refusal is a ' +
      "problem response, nothing streamed), then the run's server-sent events from its first one (run_created), as " +
      'GET /api/agent/stream sends them: frames named after the event type with id = sequence, a comment heartbeat every 15 s, ' +
      'the end after a terminal event. The run id is in the X-Switchyard-Run-Id header and in every event; after a dropped ' +
      'connection, resume with GET /api/agent/stream?runId=<id> and Last-Event-ID',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    body: StartRunBody,
    response: RunEvent,
    produces: 'text/event-stream',
    errors: RUN_START_ERRORS,
  }),
  runBatch: route({
    method: 'POST',
    path: '/api/agent/batch',
    summary:
      'Start 1–8 independent runs at once; each keeps its own approvals, cancel, history and stream. ' +
      'capabilityMode "read-only" refuses, before any tool runs, a plan with a non-read step. Nothing starts if any run is refused. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    body: BatchBody,
    response: StartedBatch,
    status: 200,
    idempotencyKey: true,
    errors: RUN_START_ERRORS,
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
  inbox: route({
    method: 'GET',
    path: '/api/agent/inbox',
    summary:
      'Everything waiting for your approval: your runs at a plan gate and each open step gate (with the tool, effect, ' +
      `arguments and the reason it asks), oldest first, at most ${INBOX_LIMIT}; and \`inputRequests\`: MCP servers' input requests ` +
      'waiting for you in your runs and chats. Admins see their own inbox too',
    tag: 'runs',
    auth: { permission: 'agent:run:approve' },
    response: Inbox,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  inputList: route({
    method: 'GET',
    path: '/api/elicitations',
    summary:
      "Input requests of MCP servers (elicitation) waiting for you, in your runs and chats, oldest first: the form's message and " +
      'requestedSchema (form mode) or the link to open (url mode). Filter with runId or sessionId',
    tag: 'elicitation',
    auth: { anyOf: ['agent:run:approve', 'agent:chat:use'] },
    query: InputRequestListQuery,
    response: InputRequestList,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  inputGet: route({
    method: 'GET',
    path: '/api/elicitations/{id}',
    summary:
      "One input request, waiting or settled (with the answer, who settled it and why). Another owner's request is 404 " +
      "(an admin may read a run's, never a chat's)",
    tag: 'elicitation',
    auth: { anyOf: ['agent:run:approve', 'agent:chat:use'] },
    params: InputRequestParam,
    response: InputRequest,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  inputAnswer: route({
    method: 'POST',
    path: '/api/elicitations/{id}',
    summary:
      'Answer a waiting input request: accept (form mode: with content, checked against requestedSchema; a field left out ' +
      'takes its default; a bad field is 400 naming `content.<field>`), decline or cancel. The waiting tool call goes on with it. ' +
      "409 once it is settled (answered, timed out, or its run or chat stopped); another owner's request is 404",
    tag: 'elicitation',
    auth: { anyOf: ['agent:run:approve', 'agent:chat:use'] },
    params: InputRequestParam,
    body: InputAnswerBody,
    response: InputAnswerReply,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  runResume: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/resume',
    summary:
      'Resume a failed, cancelled or interrupted run in place: completed steps are reused, the rest run again after the restored plan is reviewed. ' +
      'Its budget figures carry on; a run that has spent one of its limits resumes only with a `budget` that raises it',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    body: ResumeBody,
    response: StartedRun,
    status: 200,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'budget_exceeded',
      'sandbox_weakened',
      'unavailable',
    ],
  }),
  runFork: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/fork',
    summary:
      "Copy a finished run's plan into a new run that waits for plan review; nothing is reused. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}",
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    response: StartedRun,
    status: 200,
    errors: [
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'sandbox_weakened',
      'capacity_exceeded',
      'unavailable',
    ],
  }),
  runRewind: route({
    method: 'POST',
    path: '/api/agent/runs/{runId}/rewind',
    summary:
      'New run with the first keepSteps steps of a finished run and their completed executions, waiting for plan review. ' +
      'Side effects of the dropped steps are NOT undone: the review gate is where you account for them. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}',
    tag: 'runs',
    auth: { permission: 'agent:run:start' },
    params: RunIdParam,
    body: RewindBody,
    response: StartedRun,
    status: 200,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'sandbox_weakened',
      'capacity_exceeded',
      'unavailable',
    ],
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
  permissionsEvaluateMany: route({
    method: 'POST',
    path: '/api/agent/permissions/evaluate/batch',
    summary:
      'What the gate would decide for each of several tool calls by you (e.g. every step of a plan), in order; a call naming no tool of your catalog answers its own not_found error',
    tag: 'settings',
    auth: { permission: 'settings:permissions:read' },
    body: EvaluateManyBody,
    response: EvaluatedCalls,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
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
  memorySettingsGet: route({
    method: 'GET',
    path: '/api/settings/memory',
    summary: 'Whether memory (experimental, off by default) is on for you',
    tag: 'memory',
    auth: { permission: 'settings:memory:read' },
    response: MemorySettings,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  memorySettingsPut: route({
    method: 'PUT',
    path: '/api/settings/memory',
    summary:
      'Turn memory on or off. On: the memory_* tools are in your catalog and relevant memories are added to planning prompts (each run records them as memory_injected). Off keeps what is stored',
    tag: 'memory',
    auth: { permission: 'settings:memory:edit' },
    body: MemorySettings,
    response: MemorySettings,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpAccessGet: route({
    method: 'GET',
    path: '/api/settings/mcp',
    summary:
      'Your MCP access (/mcp): whether it is on, the permission mode of the runs MCP clients start, and which published workflows they see; ?owner=<name> for admins',
    tag: 'mcp',
    auth: { permission: 'settings:mcp:read' },
    query: McpAccessQuery,
    response: McpAccess,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  mcpAccessPut: route({
    method: 'PUT',
    path: '/api/settings/mcp',
    summary:
      'Change your MCP access: permission mode and exposed workflows ("all" or a list of ids). Only admins turn access on or off (enabled), ' +
      "and with ?owner=<name> change another owner's. Open MCP sessions of the owner are told their tool list changed",
    tag: 'mcp',
    auth: { permission: 'settings:mcp:edit' },
    query: McpAccessQuery,
    body: McpAccessBody,
    response: McpAccess,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  mcpPost: route({
    method: 'POST',
    path: '/mcp',
    summary:
      'The MCP endpoint (Streamable HTTP, protocol revisions 2025-06-18 and 2025-11-25): one JSON-RPC message per request, answered as JSON or as an ' +
      'SSE stream. Tools run_workflow_<id> (your exposed published workflows) and task_*; resources switchyard://runs/{runId}. ' +
      'Authenticate with Authorization: Bearer <API token>; an initialize answers an Mcp-Session-Id that any gateway replica accepts',
    tag: 'mcp',
    auth: { permission: 'mcp:server:use' },
    body: z.unknown().describe('a JSON-RPC request, notification or response (MCP)'),
    response: z.unknown().describe('a JSON-RPC response, or an SSE stream of JSON-RPC messages'),
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpGet: route({
    method: 'GET',
    path: '/mcp',
    summary:
      "The session's server-to-client SSE stream (tools/list_changed after a publish or unpublish, resources/list_changed after a new run); " +
      'Last-Event-ID replays what the session was sent after that event, on any replica',
    tag: 'mcp',
    auth: { permission: 'mcp:server:use' },
    response: z.unknown().describe('JSON-RPC notifications'),
    produces: 'text/event-stream',
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  mcpDelete: route({
    method: 'DELETE',
    path: '/mcp',
    summary: 'End an MCP session (Mcp-Session-Id): later requests with it are answered 404',
    tag: 'mcp',
    auth: { permission: 'mcp:server:use' },
    response: z.unknown(),
    errors: ['unauthenticated', 'forbidden'],
  }),
  memoryList: route({
    method: 'GET',
    path: '/api/memories',
    summary: 'Your memories, newest first; q filters by text they contain',
    tag: 'memory',
    auth: { permission: 'settings:memory:read' },
    query: MemoryListQuery,
    response: MemoryPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  memoryDelete: route({
    method: 'DELETE',
    path: '/api/memories/{id}',
    summary: 'Forget one of your memories',
    tag: 'memory',
    auth: { permission: 'settings:memory:edit' },
    params: MemoryIdParam,
    response: Memory,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  workflowCreate: route({
    method: 'POST',
    path: '/api/workflows',
    summary:
      'Save a workflow: name, description, JSON Schema of its inputs, and a plan, a canvas graph (compiled into the plan), or both. ' +
      'Refused with paths: undeclared {{inputs.*}}, more than 64 steps, unknown tools, bad references, cycles, run_workflow_* steps, unsafe retries',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    body: CreateWorkflowBody,
    response: Workflow,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  workflowList: route({
    method: 'GET',
    path: '/api/workflows',
    summary: 'Your workflows, by name; q searches name and description',
    tag: 'workflows',
    auth: { permission: 'workflow:list' },
    query: WorkflowListQuery,
    response: WorkflowPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  workflowTemplates: route({
    method: 'GET',
    path: '/api/workflows/templates',
    summary:
      'Workflow templates shipped with the platform: name, description, category, input schema and canvas graph',
    tag: 'workflows',
    auth: { permission: 'workflow:list' },
    response: WorkflowTemplateList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  workflowInstantiate: route({
    method: 'POST',
    path: '/api/workflows/templates/{id}/instantiate',
    summary:
      'Save a template as a new, unpublished workflow of yours (optionally named); 409 when it needs a plugin your catalog lacks',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowTemplateParam,
    body: InstantiateTemplateBody,
    response: Workflow,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowGet: route({
    method: 'GET',
    path: '/api/workflows/{id}',
    summary: 'A workflow: the draft (plan, graph, input schema), its revision and published version',
    tag: 'workflows',
    auth: { permission: 'workflow:list' },
    params: WorkflowIdParam,
    response: Workflow,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  workflowUpdate: route({
    method: 'PUT',
    path: '/api/workflows/{id}',
    summary:
      'Save the draft; the body carries the revision it is based on (stale: 409 naming the current one)',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowIdParam,
    body: UpdateWorkflowBody,
    response: Workflow,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowDelete: route({
    method: 'DELETE',
    path: '/api/workflows/{id}',
    summary: 'Delete a workflow (?revision= it is based on); its tool leaves the catalog at once',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowIdParam,
    query: RevisionQuery,
    response: Workflow,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowCopy: route({
    method: 'POST',
    path: '/api/workflows/{id}/copy',
    summary: 'Save a copy of the draft as a new, unpublished workflow',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowIdParam,
    response: Workflow,
    status: 201,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  workflowPublish: route({
    method: 'POST',
    path: '/api/workflows/{id}/publish',
    summary:
      'Snapshot the draft into a new immutable numbered version, which the catalog tool run_workflow_<id> then runs',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowIdParam,
    body: RevisionBody,
    response: Workflow,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowUnpublish: route({
    method: 'POST',
    path: '/api/workflows/{id}/unpublish',
    summary: 'Stop serving a published version; the tool leaves the catalog at once',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowIdParam,
    body: RevisionBody,
    response: Workflow,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowVersions: route({
    method: 'GET',
    path: '/api/workflows/{id}/versions',
    summary: 'The published versions, newest first',
    tag: 'workflows',
    auth: { permission: 'workflow:list' },
    params: WorkflowIdParam,
    response: WorkflowVersionList,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  workflowRestore: route({
    method: 'POST',
    path: '/api/workflows/{id}/versions/{n}/restore',
    summary: 'Copy version n into a new draft; the published version does not change until published again',
    tag: 'workflows',
    auth: { permission: 'workflow:edit' },
    params: WorkflowVersionParam,
    body: RevisionBody,
    response: Workflow,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  workflowInputOptions: route({
    method: 'GET',
    path: '/api/workflows/{id}/inputs/{input}/options',
    summary:
      'The choices of an input with `x-switchyard-enum`: its list tool called for you (a read call, through the permission gate), as {value, label} items',
    tag: 'workflows',
    auth: { permission: 'agent:run:start' },
    params: InputOptionsParam,
    query: InputOptionsQuery,
    response: InputOptions,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'tool_failed', 'unavailable'],
  }),
  fileUpload: route({
    method: 'POST',
    path: '/api/files',
    summary:
      'Upload a file: the raw bytes as the body (any Content-Type, kept as the file type), its name in ?name=; over FILE_UPLOAD_LIMIT_BYTES is 413',
    tag: 'files',
    auth: { permission: 'agent:run:start' },
    consumes: 'application/octet-stream',
    query: UploadQuery,
    response: StoredFile,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'payload_too_large', 'unavailable'],
  }),
  fileList: route({
    method: 'GET',
    path: '/api/files',
    summary: 'Your uploaded files, newest first',
    tag: 'files',
    auth: { permission: 'agent:run:list' },
    query: FileListQuery,
    response: FilePage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  fileGet: route({
    method: 'GET',
    path: '/api/files/{id}',
    summary: "One of your files' metadata (another owner's file is 404)",
    tag: 'files',
    auth: { permission: 'agent:run:list' },
    params: FileIdParam,
    response: StoredFile,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  fileContent: route({
    method: 'GET',
    path: '/api/files/{id}/content',
    summary: 'Download one of your files (as an attachment, with its stored type)',
    tag: 'files',
    auth: { permission: 'agent:run:list' },
    produces: 'application/octet-stream',
    params: FileIdParam,
    response: z.string().describe('the bytes'),
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  fileDelete: route({
    method: 'DELETE',
    path: '/api/files/{id}',
    summary: 'Delete one of your files (runs granted it keep their copies)',
    tag: 'files',
    auth: { permission: 'agent:run:start' },
    params: FileIdParam,
    response: StoredFile,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  workflowRun: route({
    method: 'POST',
    path: '/api/workflows/{id}/run',
    summary:
      'Bind inputs (checked against the input schema, every missing or mistyped field listed) and start a normal run of the draft ' +
      '(or of a published version) with the normal approval policy. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}',
    tag: 'workflows',
    auth: { permission: 'agent:run:start' },
    params: WorkflowIdParam,
    body: RunWorkflowBody,
    response: StartedRun,
    status: 200,
    idempotencyKey: true,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'capacity_exceeded',
      'unavailable',
    ],
  }),
  taskCapacity: route({
    method: 'GET',
    path: '/api/agent/tasks/capacity',
    summary:
      "Queue pressure and limits: running and waiting (by priority), oldest waits, reservations, policy, and your own share; never another owner's tasks",
    tag: 'tasks',
    auth: { permission: 'agent:task:list' },
    response: TaskCapacity,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  taskList: route({
    method: 'GET',
    path: '/api/agent/tasks',
    summary: 'Your background tasks, newest first (the latest 100 finished ones are kept)',
    tag: 'tasks',
    auth: { permission: 'agent:task:list' },
    query: TaskListQuery,
    response: TaskPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  taskSubmit: route({
    method: 'POST',
    path: '/api/agent/tasks',
    summary:
      'Run a published workflow in the background. The answer is the task: running at once when a slot was free and nothing waited, else queued. A full limit answers 429 with Retry-After: 1 and details {retryable, retryAfterSeconds, capacityScope, capacityPriority?}',
    tag: 'tasks',
    auth: { permission: 'agent:task:submit' },
    body: SubmitTaskBody,
    response: Task,
    status: 202,
    idempotencyKey: true,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'capacity_exceeded',
      'unavailable',
    ],
  }),
  taskGet: route({
    method: 'GET',
    path: '/api/agent/tasks/{id}',
    summary: 'One task: state, priority, queue wait, run duration, capped output',
    tag: 'tasks',
    auth: { permission: 'agent:task:list' },
    params: TaskIdParam,
    response: Task,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  taskKill: route({
    method: 'POST',
    path: '/api/agent/tasks/{id}/kill',
    summary:
      'Kill a task: a queued one is cancelled before its body starts (its slot is freed); a running one is cancelled cooperatively',
    tag: 'tasks',
    auth: { permission: 'agent:task:submit' },
    params: TaskIdParam,
    response: Task,
    status: 200,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  scheduleCreate: route({
    method: 'POST',
    path: '/api/agent/schedules',
    summary:
      'Run a published workflow on a schedule: daily, weekly (several weekdays) or monthly at a local clock time in an IANA zone ' +
      '(default daily 09:00), every N minutes (≥ 60 s; expires after 7 days) or once after a delay. Fires submit batch background tasks. ' +
      'Under permission mode "ask", a non-read step that no allow rule covers refuses creation (409) naming the steps and the modes that would work. ' +
      'At most 50 active schedules',
    tag: 'schedules',
    auth: { permission: 'agent:task:submit' },
    body: ScheduleBody,
    response: Schedule,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  scheduleList: route({
    method: 'GET',
    path: '/api/agent/schedules',
    summary: 'Your schedules: status, next five fires, expiry, trigger count, missed fires, last error',
    tag: 'schedules',
    auth: { permission: 'agent:task:list' },
    response: ScheduleList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  schedulePreview: route({
    method: 'POST',
    path: '/api/agent/schedules/preview',
    summary: 'The next five fire times of a schedule body (from `from`, default now), without saving it',
    tag: 'schedules',
    auth: { permission: 'agent:task:list' },
    body: SchedulePreviewBody,
    response: SchedulePreview,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  scheduleGet: route({
    method: 'GET',
    path: '/api/agent/schedules/{id}',
    summary: 'One schedule',
    tag: 'schedules',
    auth: { permission: 'agent:task:list' },
    params: ScheduleIdParam,
    response: Schedule,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  scheduleUpdate: route({
    method: 'PUT',
    path: '/api/agent/schedules/{id}',
    summary: 'Replace a schedule (same body and checks as create); its counts are kept',
    tag: 'schedules',
    auth: { permission: 'agent:task:submit' },
    params: ScheduleIdParam,
    body: ScheduleBody,
    response: Schedule,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  scheduleDelete: route({
    method: 'DELETE',
    path: '/api/agent/schedules/{id}',
    summary: 'Delete a schedule: no further fires; tasks it already submitted go on',
    tag: 'schedules',
    auth: { permission: 'agent:task:submit' },
    params: ScheduleIdParam,
    response: Schedule,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  triggerCreate: route({
    method: 'POST',
    path: '/api/workflow-triggers',
    summary:
      'A webhook trigger for a published workflow, with saved default inputs and a permission mode; the secret is in this answer only ' +
      '(only its SHA-256 digest is stored). Same permission-mode check as schedules',
    tag: 'webhooks',
    auth: { permission: 'agent:task:submit' },
    body: TriggerBody,
    response: CreatedTrigger,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  triggerList: route({
    method: 'GET',
    path: '/api/workflow-triggers',
    summary: 'Your webhook triggers (never their secrets)',
    tag: 'webhooks',
    auth: { permission: 'agent:task:list' },
    response: TriggerList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  triggerRotate: route({
    method: 'POST',
    path: '/api/workflow-triggers/{id}/rotate',
    summary: 'A new secret; the old one stops working at once',
    tag: 'webhooks',
    auth: { permission: 'agent:task:submit' },
    params: TriggerIdParam,
    response: RotatedSecret,
    status: 200,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  triggerDelete: route({
    method: 'DELETE',
    path: '/api/workflow-triggers/{id}',
    summary: 'Delete a trigger and its delivery audit; tasks it submitted go on',
    tag: 'webhooks',
    auth: { permission: 'agent:task:submit' },
    params: TriggerIdParam,
    response: Trigger,
    errors: ['unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  triggerDeliveries: route({
    method: 'GET',
    path: '/api/workflow-triggers/{id}/deliveries',
    summary:
      'Delivery audit, newest first (1,000 kept, 100 per page): state, times, duration, task id, whether an event id was sent, error. ' +
      'Never the body, the secret or the event id. There is no replay: send a reviewed new event instead',
    tag: 'webhooks',
    auth: { permission: 'agent:task:list' },
    params: TriggerIdParam,
    query: DeliveryListQuery,
    response: DeliveryPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  hookDeliver: route({
    method: 'POST',
    path: '/api/workflow-hooks/{triggerId}',
    summary:
      'Deliver a webhook: X-Switchyard-Webhook-Secret authenticates (no token); the JSON object body (≤ 256 KiB, else 413) overrides the saved inputs. ' +
      'X-Switchyard-Event-Id (≤ 200 chars) makes retries answer the original task. Loopback sources only unless WEBHOOK_ALLOWED_SOURCES says otherwise. ' +
      'Triggers created with requireSignature need X-Switchyard-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the secret>, within 5 minutes',
    tag: 'webhooks',
    auth: 'public',
    params: TriggerHookParam,
    body: DeliveryBody,
    response: DeliveryAccepted,
    status: 202,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'conflict',
      'payload_too_large',
      'capacity_exceeded',
      'sandbox_weakened',
      'unavailable',
    ],
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
    response: RunEvent,
    produces: 'text/event-stream',
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  ownerFeed: route({
    method: 'GET',
    path: '/api/events',
    summary:
      'Server-sent events of what changed for you (for live lists and the inbox count): `event: run` when one of your runs ' +
      'changes status, opens or closes a gate or an input request, `event: task` when one of your background tasks changes state, ' +
      '`event: input` when an input request in one of your chats opens or is settled; ' +
      'only ever your own, admins included. Frame ids are `<epoch>-<n>`: reconnecting with Last-Event-ID (or ?lastEventId=) ' +
      'replays what was missed while this gateway still holds it; otherwise the first frame is `event: resync` (data {}) and ' +
      'you refetch. A comment heartbeat every 15 s',
    tag: 'runs',
    auth: { permission: 'agent:run:list' },
    queryToken: true,
    query: OwnerFeedQuery,
    response: OwnerFeedFrame,
    produces: 'text/event-stream',
    errors: ['validation_failed', 'unauthenticated', 'forbidden'],
  }),
  toolInvoke: route({
    method: 'POST',
    path: '/api/agent/tools/invoke',
    summary:
      "Call one catalog tool directly (admin diagnostics: runs outside any agent run and its approval gates; an MCP server's input request during it is declined, as nobody can answer it)",
    tag: 'tools',
    auth: { permission: 'mcp:tool:test' },
    body: DirectInvokeBody,
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
      'The tools the agent can use now: its associated records, enabled (MCP: tested, unchanged, reachable), and its enabled plugins’ tools',
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
  mcpToolConnect: route({
    method: 'POST',
    path: '/mcp/tool/{id}/connect',
    summary:
      'OAuth sign-in of a REMOTE record: {connected: true} when no person is needed (client credentials, a grant that still works), else {authorizationUrl} to open; the provider sends the browser back to /api/mcp/oauth/callback',
    tag: 'tool records',
    auth: { permission: 'mcp:tool:test' },
    params: McpToolIdParam,
    response: McpToolConnectResult,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'tool_failed',
      'unavailable',
    ],
  }),
  mcpOAuthCallback: route({
    method: 'GET',
    path: '/api/mcp/oauth/callback',
    summary:
      'Where the OAuth provider sends the browser back: the single-use state (bound to the person and record that started Connect, valid ten minutes) and PKCE are verified and the tokens stored; a token, when sent, must be the starter’s. ' +
      'A browser (Accept: text/html) gets a small page instead of JSON, with the same status: it says the outcome, tells the web client that opened it (postMessage to the gateway’s own origin and a BroadcastChannel) and closes itself',
    tag: 'tool records',
    auth: 'public',
    query: McpOAuthCallbackQuery,
    response: McpOAuthCallbackResult,
    alsoProduces: 'text/html',
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'tool_failed',
      'unavailable',
    ],
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
  // Plugins: admin only. Their tools appear in everyone's catalog (GET /api/agent/tools).
  pluginList: route({
    method: 'GET',
    path: '/api/plugins',
    summary:
      'Installed plugins with their tools, grants, settings (secrets never shown), server status and the sandbox posture',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    response: PluginList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  pluginInstall: route({
    method: 'POST',
    path: '/api/plugins',
    summary:
      'Install (or upgrade: same id, grants and settings kept) a plugin from a bundle folder or .tgz on the server; a bad manifest is refused by path and installs nothing',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    body: InstallPluginBody,
    response: Plugin,
    status: 201,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'payload_too_large',
      'unavailable',
    ],
  }),
  pluginUpload: route({
    method: 'POST',
    path: '/api/plugins/upload',
    summary: `Install (or upgrade) a plugin from an uploaded .tgz bundle (body application/gzip, at most ${PLUGIN_UPLOAD_LIMIT_BYTES / 1024 / 1024} MiB: 413 beyond)`,
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    consumes: 'application/gzip',
    response: Plugin,
    status: 201,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'conflict',
      'payload_too_large',
      'unavailable',
    ],
  }),
  pluginGet: route({
    method: 'GET',
    path: '/api/plugins/{id}',
    summary: 'One plugin; an enabled one is launched to report which manifest tools its server lacks',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    response: Plugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  pluginEnable: route({
    method: 'POST',
    path: '/api/plugins/{id}/enable',
    summary: 'Enable a plugin: its tools join the catalog (its hooks stay untrusted)',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    response: Plugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  pluginDisable: route({
    method: 'POST',
    path: '/api/plugins/{id}/disable',
    summary: 'Disable a plugin: its tools leave the catalog and its server stops on every replica',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    response: Plugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  pluginDelete: route({
    method: 'DELETE',
    path: '/api/plugins/{id}',
    summary: 'Uninstall a plugin: its server stops, its bundle and its private data directory are removed',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    response: DeletedPlugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  pluginGrants: route({
    method: 'PUT',
    path: '/api/plugins/{id}/grants',
    summary:
      'Grant or withdraw network access and run files (only what the manifest asks for; the server restarts with them)',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    body: PluginGrantsBody,
    response: Plugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  pluginSettings: route({
    method: 'PUT',
    path: '/api/plugins/{id}/settings',
    summary:
      'Set (string) or clear (null) the manifest’s settings; all are stored encrypted, secrets are never returned',
    tag: 'plugins',
    auth: { permission: 'plugin:plugin:manage' },
    params: PluginIdParam,
    body: PluginSettingsBody,
    response: Plugin,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  chatSessionCreate: route({
    method: 'POST',
    path: '/api/chat/sessions',
    summary:
      'Start a chat with the model (optionally as an agent: its prompt, model settings and tool set) under a permission mode',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    body: CreateChatSessionBody,
    response: ChatSession,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  chatSessionList: route({
    method: 'GET',
    path: '/api/chat/sessions',
    summary: 'Your chat sessions, newest first (cursor paging, ?q= searches titles)',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    query: ChatSessionListQuery,
    response: ChatSessionPage,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'unavailable'],
  }),
  chatSessionGet: route({
    method: 'GET',
    path: '/api/chat/sessions/{id}',
    summary: 'A chat session with its persisted messages and tool calls (with their outcomes)',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatSessionParam,
    response: ChatSessionDetail,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  chatSessionUpdate: route({
    method: 'PATCH',
    path: '/api/chat/sessions/{id}',
    summary:
      'Rename a session, change its permission mode or its per-turn budget (applies from the next call)',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatSessionParam,
    body: UpdateChatSessionBody,
    response: ChatSession,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  chatSessionDelete: route({
    method: 'DELETE',
    path: '/api/chat/sessions/{id}',
    summary: 'Delete a session with its messages and tool calls (a turn in progress is cancelled first)',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatSessionParam,
    response: ChatSession,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  chatMessage: route({
    method: 'POST',
    path: '/api/chat/sessions/{id}/messages',
    summary:
      'Send a message and follow the turn: frames `turn_started`, `token`, `tool_call`, `approval_requested`, `tool_result`, ' +
      'then `message_complete`, `cancelled` or `error` (which end the stream). 409 while a turn is in progress. A full foreground limit (RUN_OWNER_ACTIVE_LIMIT, RUN_DEPLOYMENT_ACTIVE_LIMIT) answers 429 with Retry-After and details {retryable, retryAfterSeconds, capacityScope: owner|deployment, active, limit}',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatSessionParam,
    body: ChatMessageBody,
    response: ChatEvent,
    produces: 'text/event-stream',
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'model_not_configured',
      'capacity_exceeded',
      'unavailable',
    ],
  }),
  chatStream: route({
    method: 'GET',
    path: '/api/chat/sessions/{id}/stream',
    summary:
      "A session's events after Last-Event-ID (or ?lastEventId=), then live: resume a turn's stream after a dropped connection; " +
      'ends after the turn ends',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    queryToken: true,
    params: ChatSessionParam,
    query: ChatStreamQuery,
    response: ChatEvent,
    produces: 'text/event-stream',
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found'],
  }),
  chatApprove: route({
    method: 'POST',
    path: '/api/chat/sessions/{id}/calls/{callId}/approve',
    summary: 'Approve a tool call waiting at its confirmation card, optionally with edited arguments',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatCallParam,
    body: ChatApproveBody,
    response: ChatControlReply,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  chatDeny: route({
    method: 'POST',
    path: '/api/chat/sessions/{id}/calls/{callId}/deny',
    summary: 'Refuse a tool call waiting at its confirmation card; the model is told the reason and goes on',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatCallParam,
    body: ChatDenyBody,
    response: ChatControlReply,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  chatCancel: route({
    method: 'POST',
    path: '/api/chat/sessions/{id}/cancel',
    summary:
      'Cancel the turn in progress: in-flight tool calls are aborted, the stream ends with `cancelled`',
    tag: 'chat',
    auth: { permission: 'agent:chat:use' },
    params: ChatSessionParam,
    response: ChatControlReply,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  pluginHookList: route({
    method: 'GET',
    path: '/api/plugin-hooks',
    summary:
      'Installed plugins that ship hooks (hooks/hooks.json): their hooks as parsed, problems by path, and whether an admin trusts them',
    tag: 'plugins',
    auth: { permission: 'plugin:hook:list' },
    response: PluginHooksList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  pluginHookTrust: route({
    method: 'POST',
    path: '/api/plugin-hooks/{id}/trust',
    summary:
      "Trust a plugin's hooks: while the plugin is enabled they run on every tool call from the next call on, as plugin/<id>/<name>. " +
      'Trust binds the file as it is now: a changed file runs nothing until trusted again. A file with problems cannot be trusted (400, each problem by path)',
    tag: 'plugins',
    auth: { permission: 'plugin:hook:trust' },
    params: PluginIdParam,
    response: PluginHooksEntry,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'unavailable'],
  }),
  pluginHookUntrust: route({
    method: 'POST',
    path: '/api/plugin-hooks/{id}/untrust',
    summary: "Stop running a plugin's hooks, from the next call on",
    tag: 'plugins',
    auth: { permission: 'plugin:hook:trust' },
    params: PluginIdParam,
    response: PluginHooksEntry,
    status: 200,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  marketSources: route({
    method: 'GET',
    path: '/api/market/sources',
    summary: 'The MCP market sources (registry listings or server.json files, by URL or under MARKET_DIR)',
    tag: 'market',
    auth: { permission: 'mcp:market:browse' },
    response: MarketSourceList,
    errors: ['unauthenticated', 'forbidden', 'unavailable'],
  }),
  marketSourceAdd: route({
    method: 'POST',
    path: '/api/market/sources',
    summary:
      'Add a market source: {name, url} (checked like web_fetch: no private or link-local addresses unless allowed) or {name, path} under MARKET_DIR',
    tag: 'market',
    auth: { permission: 'mcp:market:edit' },
    body: MarketSourceBody,
    response: MarketSource,
    status: 201,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'conflict', 'unavailable'],
  }),
  marketSourceDelete: route({
    method: 'DELETE',
    path: '/api/market/sources/{source}',
    summary: 'Remove a market source (records imported from it stay)',
    tag: 'market',
    auth: { permission: 'mcp:market:edit' },
    params: MarketSourceParam,
    response: MarketSource,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  marketEntries: route({
    method: 'GET',
    path: '/api/market/entries',
    summary:
      'Search the entries of every source (or ?source=): malformed entries and unreadable sources are reported in `problems` by path and left out',
    tag: 'market',
    auth: { permission: 'mcp:market:browse' },
    query: MarketEntriesQuery,
    response: MarketEntryList,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'unavailable'],
  }),
  marketEntry: route({
    method: 'GET',
    path: '/api/market/entries/{source}/{name}',
    summary: 'One entry with its whole server.json (the name is URL-encoded: io.github.user%2Fserver)',
    tag: 'market',
    auth: { permission: 'mcp:market:browse' },
    params: MarketEntryParam,
    response: MarketEntryDetail,
    errors: ['validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'tool_failed', 'unavailable'],
  }),
  marketImport: route({
    method: 'POST',
    path: '/api/market/import',
    summary:
      'Import an entry as a tool record: LOCAL from a stdio package (npm: npx -y <id>@<version>, pypi: uvx <id>==<version>, oci: docker run) or REMOTE ' +
      'from a streamable-http remote. The record is untested: its tools join the catalog once an admin tests it',
    tag: 'market',
    auth: { permission: 'mcp:market:edit' },
    body: MarketImportBody,
    response: MarketImported,
    status: 201,
    errors: [
      'validation_failed',
      'unauthenticated',
      'forbidden',
      'not_found',
      'conflict',
      'tool_failed',
      'unavailable',
    ],
  }),
} as const satisfies Record<string, RouteDef>;

/**
 * What a client needs to call a route: its method, path and media types. The route itself is only
 * a type here (`Route`), so a client keeps every request and response type without building one
 * schema at run time: the web console's bundle takes its table from `routeIndexOf(Routes)`, made
 * when it is built, and loads without constructing the contract's schemas.
 */
export interface RouteRef<R extends RouteDef = RouteDef> {
  readonly method: R['method'];
  readonly path: R['path'];
  readonly produces?: RouteDef['produces'];
  readonly consumes?: RouteDef['consumes'];
  /** Never set: carries the route's type (its params, query, body and response schemas). */
  readonly route?: R;
}

export type RouteIndex<T extends Record<string, RouteDef>> = { readonly [K in keyof T]: RouteRef<T[K]> };

/** The calling part of every route of `routes` (see RouteRef): plain data, as JSON can hold it. */
export function routeIndexOf<T extends Record<string, RouteDef>>(routes: T): RouteIndex<T> {
  const index: Record<string, RouteRef> = {};
  for (const [name, r] of Object.entries(routes)) {
    index[name] = {
      method: r.method,
      path: r.path,
      ...(r.produces ? { produces: r.produces } : {}),
      ...(r.consumes ? { consumes: r.consumes } : {}),
    };
  }
  return index as RouteIndex<T>;
}
