import { z } from 'zod';
import { ServiceHealth, type ServiceName } from './services';
import { InvokeToolRequest, ToolCatalog, ToolResult } from './tools';
import {
  InputAnswerBody,
  InputAnswerReply,
  InputRequest,
  InputRequestList,
  InputRequestListQuery,
  InputRequestParam,
} from './elicitation';
import {
  AdoptUpload,
  FileIdParam,
  FileListQuery,
  FilePage,
  GrantFilesRequest,
  GrantFilesResult,
  InputOptions,
  InputOptionsRequest,
  StoredFile,
} from './files';
import { Agent, AgentPage, AgentRpc, ToolSet, ToolSetRequest } from './agents';
import {
  ConnectMcpTool,
  CreateMcpToolBody,
  DeletedMcpTools,
  DeleteMcpTools,
  McpOAuthCallback,
  McpOAuthCallbackResult,
  McpToolAllQuery,
  McpToolConnectResult,
  McpToolId,
  McpToolList,
  McpToolListQuery,
  McpToolOptions,
  McpToolPage,
  McpToolRecord,
  McpToolTestResult,
  SetMcpToolStatus,
  UpdateMcpToolBody,
} from './mcp-tools';
import {
  BatchBody,
  CheckModelRequest,
  CheckModelResult,
  DraftPlanRequest,
  DraftPlanResult,
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
import { RunDetail } from './run-events';
import {
  Memory,
  MemoryIdParam,
  MemoryListQuery,
  MemoryPage,
  MemorySearchRequest,
  MemorySearchResult,
  MemorySettings,
  RememberBody,
} from './memory';
import { Inbox } from './inbox';
import {
  ChatApproveBody,
  ChatControlReply,
  ChatDenyBody,
  ChatMessageBody,
  ChatSession,
  ChatSessionDetail,
  ChatSessionListQuery,
  ChatSessionPage,
  CreateChatSessionBody,
  UpdateChatSessionBody,
} from './chat';
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
  CreateWorkflowBody,
  ResolvedWorkflow,
  RevisionBody,
  RunWorkflowBody,
  UpdateWorkflowBody,
  Workflow,
  WorkflowIdParam,
  WorkflowListQuery,
  WorkflowPage,
  WorkflowVersionList,
  InstantiateTemplateBody,
  WorkflowTemplateList,
  WorkflowTemplateParam,
} from './workflows';
import { ToolDescriptor } from './tools';
import {
  DeletedPlugin,
  InstallPluginRequest,
  Plugin,
  PluginGrantsBody,
  PluginIdParam,
  PluginList,
  PluginSandboxStatus,
  PluginSettingsBody,
} from './plugins';
import {
  AttachResults,
  AttachRun,
  AttachRuns,
  ClaimResult,
  ClaimResults,
  ClaimTask,
  ClaimTasks,
  FinishTask,
  FinishTasks,
  SubmitTaskBody,
  Task,
  TaskCapacity,
  TaskIdParam,
  TaskListQuery,
  TaskPage,
} from './tasks';
import {
  CreatedTrigger,
  DeliverRequest,
  DeliveryAccepted,
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
  TriggerIdParam,
  TriggerList,
} from './triggers';

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
import { StartedPublished, StartPublishedRequest } from './mcp-server';

/** A request/reply contract: subject plus the schemas of both directions. */
export interface RpcContract<Req extends z.ZodType = z.ZodType, Res extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly request: Req;
  readonly response: Res;
}

export type RpcRequest<C extends RpcContract> = z.input<C['request']>;
export type RpcResponse<C extends RpcContract> = z.output<C['response']>;

export function rpc<Req extends z.ZodType, Res extends z.ZodType>(
  subject: string,
  request: Req,
  response: Res,
): RpcContract<Req, Res> {
  return { subject, request, response };
}

export const Empty = z.object({}).strict();
export type Empty = z.infer<typeof Empty>;

/** Every service answers `<service>.health.check` in its queue group. */
export function healthRpc(service: ServiceName): RpcContract<typeof Empty, typeof ServiceHealth> {
  return rpc(`${service}.health.check`, Empty, ServiceHealth);
}

/** Benchmark-only echo: measures the bus and Nest handler path with nothing else in it. */
export const EchoRequest = z.object({ n: z.number().int(), payload: z.string().max(65_536) });
export type EchoRequest = z.infer<typeof EchoRequest>;

export const Rpc = {
  health: {
    gateway: healthRpc('gateway'),
    planner: healthRpc('planner'),
    executor: healthRpc('executor'),
    'tool-registry': healthRpc('tool-registry'),
    scheduler: healthRpc('scheduler'),
  },
  registry: {
    /** The orchestrable tools the caller may use. */
    catalog: rpc('registry.tools.catalog', Empty, ToolCatalog),
    /** Validate arguments against the tool's schema, run it with a timeout and an output cap. */
    invoke: rpc('registry.tools.invoke', InvokeToolRequest, ToolResult),
    list: rpc('registry.records.list', McpToolListQuery, McpToolPage),
    all: rpc('registry.records.all', McpToolAllQuery, McpToolList),
    options: rpc('registry.records.options', Empty, McpToolOptions),
    get: rpc('registry.records.get', McpToolId, McpToolRecord),
    create: rpc('registry.records.create', CreateMcpToolBody, McpToolRecord),
    update: rpc('registry.records.update', UpdateMcpToolBody, McpToolRecord),
    setStatus: rpc('registry.records.status', SetMcpToolStatus, McpToolRecord),
    delete: rpc('registry.records.delete', DeleteMcpTools, DeletedMcpTools),
    test: rpc('registry.records.test', McpToolId, McpToolTestResult),
    /** OAuth sign-in of a REMOTE record: start (or finish at once), and the provider's callback. */
    connect: rpc('registry.records.connect', ConnectMcpTool, McpToolConnectResult),
    oauthCallback: rpc('registry.records.oauth-callback', McpOAuthCallback, McpOAuthCallbackResult),
    /** Assemble a tool set by record ids, by record names, or all enabled. */
    toolSet: rpc('registry.toolsets.assemble', ToolSetRequest, ToolSet),
    agentList: rpc('registry.agents.list', AgentRpc.Page, AgentPage),
    agentGet: rpc('registry.agents.get', AgentRpc.Id, Agent),
    agentCreate: rpc('registry.agents.create', AgentRpc.Create, Agent),
    agentUpdate: rpc('registry.agents.update', AgentRpc.Update, Agent),
    agentDelete: rpc('registry.agents.delete', AgentRpc.Id, Agent),
    /** The agent's tool set: its associated record ids, assembled. */
    agentTools: rpc('registry.agents.tools', AgentRpc.Id, ToolSet),
    /** Plugins (admin): install from a bundle on the registry host, toggle, grant, configure, remove. */
    pluginList: rpc('registry.plugins.list', Empty, PluginList),
    pluginGet: rpc('registry.plugins.get', PluginIdParam, Plugin),
    pluginInstall: rpc('registry.plugins.install', InstallPluginRequest, Plugin),
    pluginEnable: rpc('registry.plugins.enable', PluginIdParam, Plugin),
    pluginDisable: rpc('registry.plugins.disable', PluginIdParam, Plugin),
    pluginDelete: rpc('registry.plugins.delete', PluginIdParam, DeletedPlugin),
    pluginGrants: rpc('registry.plugins.grants', PluginIdParam.extend({ body: PluginGrantsBody }), Plugin),
    pluginSettings: rpc(
      'registry.plugins.settings',
      PluginIdParam.extend({ body: PluginSettingsBody }),
      Plugin,
    ),
    /** How plugin servers run on this host now (any caller; runs record it when created). */
    pluginPosture: rpc('registry.plugins.posture', Empty, PluginSandboxStatus),
    /** The MCP market (admin): sources, entries and importing one as a tool record. */
    marketSources: rpc('registry.market.sources', Empty, MarketSourceList),
    marketSourceAdd: rpc('registry.market.add', MarketSourceBody, MarketSource),
    marketSourceDelete: rpc('registry.market.delete', MarketSourceParam, MarketSource),
    marketEntries: rpc('registry.market.entries', MarketEntriesQuery, MarketEntryList),
    marketEntry: rpc('registry.market.entry', MarketEntryParam, MarketEntryDetail),
    marketImport: rpc('registry.market.import', MarketImportBody, MarketImported),
    /** A staged upload becomes one of the caller's files (the gateway staged the bytes under FILES_DIR). */
    fileAdopt: rpc('registry.files.adopt', AdoptUpload, StoredFile),
    fileList: rpc('registry.files.list', FileListQuery, FilePage),
    fileGet: rpc('registry.files.get', FileIdParam, StoredFile),
    fileDelete: rpc('registry.files.delete', FileIdParam, StoredFile),
    /** Materialises a run's file grants (refs copied, native paths checked, shared dirs made). */
    fileGrant: rpc('registry.files.grant', GrantFilesRequest, GrantFilesResult),
  },
  executor: {
    start: rpc('executor.runs.start', StartRunBody, StartedRun),
    batch: rpc('executor.runs.batch', BatchBody, StartedBatch),
    /** Any replica answers; it forwards to the owning replica's control subject. */
    approve: rpc(
      'executor.runs.approve',
      RunIdParam.extend({ stepId: z.string().max(64).optional(), plan: z.unknown().optional() }),
      RunControlReply,
    ),
    cancel: rpc('executor.runs.cancel', RunIdParam, RunControlReply),
    list: rpc('executor.runs.list', RunListQuery, RunPage),
    get: rpc('executor.runs.get', RunIdParam, RunDetail),
    /** The caller's own runs waiting at a gate: plans, and each open step gate, oldest first. */
    inbox: rpc('executor.runs.inbox', Empty, Inbox),
    resume: rpc('executor.runs.resume', RunIdParam.extend(ResumeBody.shape), StartedRun),
    fork: rpc('executor.runs.fork', RunIdParam, StartedRun),
    rewind: rpc('executor.runs.rewind', RunIdParam.extend(RewindBody.shape), StartedRun),
    /** The caller's input requests still waiting (MCP elicitation), in their runs and chats. */
    inputList: rpc('executor.inputs.list', InputRequestListQuery, InputRequestList),
    inputGet: rpc('executor.inputs.get', InputRequestParam, InputRequest),
    /** Checks the answer (owner, state, content), then hands it to the replica holding the wait. */
    inputAnswer: rpc(
      'executor.inputs.answer',
      InputRequestParam.extend({ body: InputAnswerBody }),
      InputAnswerReply,
    ),
    permissionsGet: rpc('executor.permissions.get', RuleScopeQuery, PermissionSettings),
    permissionsPut: rpc(
      'executor.permissions.put',
      z.object({ scope: RuleScopeQuery.shape.scope, rules: RuleLists }),
      PermissionSettings,
    ),
    /** What the gate would decide for the caller, and why (hooks run with `dryRun: true`). */
    permissionsEvaluate: rpc('executor.permissions.evaluate', EvaluateBody, PermissionDecision),
    /** The same for several calls at once (one catalog read; each call answers a decision or an error). */
    permissionsEvaluateMany: rpc('executor.permissions.evaluate-many', EvaluateManyBody, EvaluatedCalls),
    hookList: rpc('executor.hooks.list', z.object({}), HookList),
    hookCreate: rpc('executor.hooks.create', HookBody, Hook),
    hookUpdate: rpc('executor.hooks.update', z.object({ id: z.string().uuid(), body: HookBody }), Hook),
    hookDelete: rpc('executor.hooks.delete', HookIdParam, Hook),
    /** Plugins that ship hooks, their trust, and trusting them (admin). */
    pluginHookList: rpc('executor.plugin-hooks.list', Empty, PluginHooksList),
    pluginHookTrust: rpc('executor.plugin-hooks.trust', PluginIdParam, PluginHooksEntry),
    pluginHookUntrust: rpc('executor.plugin-hooks.untrust', PluginIdParam, PluginHooksEntry),
  },
  workflows: {
    create: rpc('planner.workflows.create', CreateWorkflowBody, Workflow),
    list: rpc('planner.workflows.list', WorkflowListQuery, WorkflowPage),
    get: rpc('planner.workflows.get', WorkflowIdParam, Workflow),
    update: rpc(
      'planner.workflows.update',
      z.object({ id: z.string().uuid(), body: UpdateWorkflowBody }),
      Workflow,
    ),
    delete: rpc('planner.workflows.delete', WorkflowIdParam.extend(RevisionBody.shape), Workflow),
    copy: rpc('planner.workflows.copy', WorkflowIdParam, Workflow),
    publish: rpc('planner.workflows.publish', WorkflowIdParam.extend(RevisionBody.shape), Workflow),
    unpublish: rpc('planner.workflows.unpublish', WorkflowIdParam.extend(RevisionBody.shape), Workflow),
    versions: rpc('planner.workflows.versions', WorkflowIdParam, WorkflowVersionList),
    templates: rpc('planner.workflows.templates', z.object({}), WorkflowTemplateList),
    instantiate: rpc(
      'planner.workflows.instantiate',
      WorkflowTemplateParam.extend({ body: InstantiateTemplateBody }),
      Workflow,
    ),
    restore: rpc(
      'planner.workflows.restore',
      WorkflowIdParam.extend({ n: z.number().int().min(1) }).extend(RevisionBody.shape),
      Workflow,
    ),
    /** The definition to run: the draft, a version, or the published one; the caller's own only. */
    resolve: rpc(
      'planner.workflows.resolve',
      WorkflowIdParam.extend({ version: z.union([z.number().int().min(1), z.enum(['draft', 'published'])]) }),
      ResolvedWorkflow,
    ),
    /** The caller's published workflows as tool descriptors (`run_workflow_<id>`), for the catalog. */
    tools: rpc('planner.workflows.tools', z.object({}), z.object({ tools: z.array(ToolDescriptor) })),
    /** The choices of an `x-switchyard-enum` input, from its list tool (executor). */
    inputOptions: rpc('executor.workflows.inputOptions', InputOptionsRequest, InputOptions),
    /** Binds inputs and starts a normal run of the workflow (executor). */
    run: rpc('executor.workflows.run', WorkflowIdParam.extend({ body: RunWorkflowBody }), StartedRun),
    /** Starts the published version unattended for an MCP client's tool call; answers the run id (executor). */
    startPublished: rpc('executor.workflows.start-published', StartPublishedRequest, StartedPublished),
    /** Runs the published version to the end as one tool call and answers its result (executor). */
    invoke: rpc(
      'executor.workflows.invoke',
      z.object({
        workflowId: z.string().uuid(),
        inputs: z.record(z.string(), z.unknown()),
        permissionMode: z.enum(['ask', 'approve-for-me', 'full-access']).optional(),
        invocationId: z.string().max(100).optional(),
        timeoutMs: z.number().int().min(1).max(3_600_000).optional(),
      }),
      ToolResult,
    ),
  },
  tasks: {
    /** 429 capacity_exceeded (retryable, capacityScope, capacityPriority) when a limit is full. */
    submit: rpc('scheduler.tasks.submit', SubmitTaskBody, Task),
    list: rpc('scheduler.tasks.list', TaskListQuery, TaskPage),
    get: rpc('scheduler.tasks.get', TaskIdParam, Task),
    capacity: rpc('scheduler.tasks.capacity', Empty, TaskCapacity),
    kill: rpc('scheduler.tasks.kill', TaskIdParam, Task),
    claim: rpc('scheduler.tasks.claim', ClaimTask, ClaimResult),
    attach: rpc('scheduler.tasks.attach', AttachRun, z.object({ cancel: z.boolean() })),
    finish: rpc('scheduler.tasks.finish', FinishTask, Empty),
    /** The claims (attachments) an executor replica made while its previous one was on its way. */
    claimBatch: rpc('scheduler.tasks.claimBatch', ClaimTasks, ClaimResults),
    attachBatch: rpc('scheduler.tasks.attachBatch', AttachRuns, AttachResults),
    /** The ends an executor replica learnt while its previous report was on its way, in one call. */
    finishBatch: rpc('scheduler.tasks.finishBatch', FinishTasks, Empty),
  },
  schedules: {
    /** Refused under "ask" when a non-read step would need an approval nobody can give. */
    create: rpc('scheduler.schedules.create', ScheduleBody, Schedule),
    list: rpc('scheduler.schedules.list', Empty, ScheduleList),
    get: rpc('scheduler.schedules.get', ScheduleIdParam, Schedule),
    update: rpc('scheduler.schedules.update', ScheduleIdParam.extend({ body: ScheduleBody }), Schedule),
    delete: rpc('scheduler.schedules.delete', ScheduleIdParam, Schedule),
    preview: rpc('scheduler.schedules.preview', SchedulePreviewBody, SchedulePreview),
  },
  webhooks: {
    create: rpc('scheduler.triggers.create', TriggerBody, CreatedTrigger),
    list: rpc('scheduler.triggers.list', Empty, TriggerList),
    rotate: rpc('scheduler.triggers.rotate', TriggerIdParam, RotatedSecret),
    delete: rpc('scheduler.triggers.delete', TriggerIdParam, Trigger),
    deliveries: rpc(
      'scheduler.triggers.deliveries',
      TriggerIdParam.extend(DeliveryListQuery.shape),
      DeliveryPage,
    ),
    /** A delivery: no caller identity, the trigger's secret authenticates it. */
    deliver: rpc('scheduler.triggers.deliver', DeliverRequest, DeliveryAccepted),
  },
  planner: {
    /** Drafts a plan for a goal, streaming tokens on planTokensSubject(runId); retries invalid drafts twice. */
    draft: rpc('planner.plans.draft', DraftPlanRequest, DraftPlanResult),
    /** model_not_configured unless a model can be built from configuration and overrides. */
    checkModel: rpc('planner.models.check', CheckModelRequest, CheckModelResult),
  },
  /** The owner's memory (experimental; the planner keeps it). Every call is the caller's own. */
  memory: {
    /** conflict when memory is off for the caller, or at the per-owner limit. */
    remember: rpc('planner.memory.remember', RememberBody, Memory),
    /** The caller's memories ranked for a query; `enabled: false` and no items while memory is off. */
    search: rpc('planner.memory.search', MemorySearchRequest, MemorySearchResult),
    list: rpc('planner.memory.list', MemoryListQuery, MemoryPage),
    /** not_found for an id that is not the caller's. */
    forget: rpc('planner.memory.forget', MemoryIdParam, Memory),
    settingsGet: rpc('planner.memory.settings.get', Empty, MemorySettings),
    settingsPut: rpc('planner.memory.settings.put', MemorySettings, MemorySettings),
  },
  /** AI chat (executor: the tool loop runs beside the permission gate it passes every call through). */
  chat: {
    create: rpc('executor.chat.create', CreateChatSessionBody, ChatSession),
    list: rpc('executor.chat.list', ChatSessionListQuery, ChatSessionPage),
    get: rpc('executor.chat.get', z.object({ id: z.string().uuid() }), ChatSessionDetail),
    update: rpc(
      'executor.chat.update',
      z.object({ id: z.string().uuid(), body: UpdateChatSessionBody }),
      ChatSession,
    ),
    delete: rpc('executor.chat.delete', z.object({ id: z.string().uuid() }), ChatSession),
    /**
     * Stores the message and starts the turn on this replica; answers once the turn's first event is
     * stored, with the sequence to stream after (the gateway then relays `chatEventsSubject`).
     */
    send: rpc(
      'executor.chat.send',
      z.object({ id: z.string().uuid(), body: ChatMessageBody }),
      z.object({ sessionId: z.string().uuid(), afterSeq: z.number().int().min(0) }),
    ),
    /** Any replica answers; it forwards to the replica driving the turn. */
    approve: rpc(
      'executor.chat.approve',
      z.object({ id: z.string().uuid(), callId: z.string().max(200), body: ChatApproveBody }),
      ChatControlReply,
    ),
    deny: rpc(
      'executor.chat.deny',
      z.object({ id: z.string().uuid(), callId: z.string().max(200), body: ChatDenyBody }),
      ChatControlReply,
    ),
    cancel: rpc('executor.chat.cancel', z.object({ id: z.string().uuid() }), ChatControlReply),
  },
  bench: { echo: rpc('bench.echo.request', EchoRequest, EchoRequest) },
} as const satisfies {
  health: Record<ServiceName, RpcContract>;
  registry: Record<string, RpcContract>;
  executor: Record<string, RpcContract>;
  workflows: Record<string, RpcContract>;
  tasks: Record<string, RpcContract>;
  schedules: Record<string, RpcContract>;
  webhooks: Record<string, RpcContract>;
  planner: Record<string, RpcContract>;
  memory: Record<string, RpcContract>;
  chat: Record<string, RpcContract>;
  bench: Record<string, RpcContract>;
};
