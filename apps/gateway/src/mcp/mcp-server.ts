import { Inject, Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ErrorCode as McpErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import {
  AppError,
  Events,
  isTerminalRunEvent,
  RUN_RESOURCE_TEMPLATE,
  runIdOfResource,
  runResourceUri,
  Rpc,
  TaskPriority,
  workflowIdOfTool,
  workflowToolName,
  type RunEvent,
  type TerminalRunEventType,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { McpAccessRecord } from '@switchyard/server-db-identity';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { StreamRelay } from '../runs/stream-relay';
import { McpSessions } from './mcp-sessions';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type RunEnd = Extract<RunEvent, { type: TerminalRunEventType }>;

/** The `run_workflow_<id>` output schema (McpWorkflowResult), written as plain JSON Schema for every client. */
const WORKFLOW_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    runId: { type: 'string', description: 'the run, also readable as switchyard://runs/{runId}' },
    status: { type: 'string', enum: ['completed'] },
    result: { description: "the run's result: the result of each final step" },
  },
  required: ['runId', 'status'],
} as const;

/** The scheduler's task tools an MCP client gets besides `task_submit_workflow`, called as they are. */
const TASK_TOOLS = ['task_output', 'task_wait', 'task_kill', 'task_list'] as const;

const SUBMIT_TOOL: Tool = {
  name: 'task_submit_workflow',
  description:
    'Run one of the workflows listed as run_workflow_<id> in the background and return its taskId at once; ' +
    'follow it with task_wait or task_output. When capacity is full the answer is an error saying retryable: true.',
  inputSchema: {
    type: 'object',
    properties: {
      workflowId: { type: 'string', format: 'uuid', description: 'the <id> of a run_workflow_<id> tool' },
      inputs: { type: 'object', description: "the workflow's inputs", additionalProperties: true },
      priority: { type: 'string', enum: [...TaskPriority.options], default: 'normal' },
    },
    required: ['workflowId'],
    additionalProperties: false,
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
};

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** A registry tool result as MCP content: JSON as text, and as structured content when it is an object. */
function fromToolResult(r: ToolResult): CallToolResult {
  const parts = r.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json)));
  const value =
    r.value ?? (r.content.length === 1 && r.content[0]?.type === 'json' ? r.content[0].json : undefined);
  return {
    content: parts.map((text) => ({ type: 'text' as const, text })),
    ...(value && typeof value === 'object' && !Array.isArray(value)
      ? { structuredContent: value as Record<string, unknown> }
      : {}),
    isError: r.isError,
  };
}

/** What one MCP request is served for: who asks, in which session, under which access. */
export interface McpCall {
  readonly caller: Principal;
  readonly access: McpAccessRecord;
  readonly sessionId: string;
  readonly correlationId: string;
}

/**
 * Builds the MCP server for one HTTP request of a session (the SDK's low-level Server): every
 * answer is computed from the caller's identity through the same RPCs as the REST API, so the
 * server holds nothing between requests and any gateway replica can serve any request.
 */
@Injectable()
export class McpServerFactory {
  private taskTools: Promise<Tool[]> | undefined;
  /**
   * The SDK's Server makes an Ajv instance of its own unless given one (about half a millisecond a
   * request); it is only used to check elicitation answers, which this server never asks for.
   */
  private readonly validator = new AjvJsonSchemaValidator();

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly relay: StreamRelay,
    private readonly sessions: McpSessions,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  build(call: McpCall): Server {
    const server = new Server(
      { name: 'switchyard', version: '0.1.0' },
      {
        jsonSchemaValidator: this.validator,
        capabilities: { tools: { listChanged: true }, resources: { listChanged: true } },
        instructions:
          "Switchyard runs your team's reviewed, published workflows: call run_workflow_<id> to run one and get its result, " +
          'or task_submit_workflow to run it in the background. Your runs are resources switchyard://runs/{runId}.',
      },
    );
    // Runs are the caller's own here, admins included (like the owner feed).
    const ctx: CallContext = {
      correlationId: call.correlationId,
      ownerId: call.caller.owner.id,
      role: 'user',
    };

    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [...(await this.exposed(call, ctx)).map(workflowTool), SUBMIT_TOOL, ...(await this.tasks(ctx))],
    }));

    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const { name } = req.params;
      const args = req.params.arguments ?? {};
      const workflowId = workflowIdOfTool(name);
      if (workflowId) {
        // With every published workflow exposed, starting it is the check (the executor resolves
        // the caller's own published version): no list to fetch on the hot path.
        if (call.access.exposedWorkflows && !call.access.exposedWorkflows.includes(workflowId))
          throw unknownTool(name);
        return this.runWorkflow(call, ctx, workflowId, args, extra);
      }
      if (name === SUBMIT_TOOL.name) return this.submitTask(call, ctx, args);
      if ((TASK_TOOLS as readonly string[]).includes(name))
        return this.invokeTaskTool(call, ctx, name, args, extra);
      throw unknownTool(name);
    });

    // A cancel may reach another replica than the call (any replica serves any request): the run
    // behind the call is found in the session store.
    server.setNotificationHandler(CancelledNotificationSchema, async (n) => {
      const requestId = n.params.requestId;
      if (requestId === undefined) return;
      const target = await this.sessions.cancelCall(call.sessionId, requestId);
      if (target?.startsWith('inv:')) this.bus.emit(Events.toolCancel, { invocationId: target.slice(4) });
      else if (target)
        await this.cancelRun(target, ctx, n.params.reason ?? 'the MCP client cancelled the tool call');
    });

    server.setRequestHandler(ListResourcesRequestSchema, async () => {
      const page = await this.bus.call(Rpc.executor.list, { limit: 50 }, { ctx });
      return {
        resources: page.items.map((r) => ({
          uri: runResourceUri(r.id),
          name: `run ${r.id}`,
          title: r.goal.slice(0, 200),
          description: `${r.status}, started ${r.createdAt}`,
          mimeType: 'application/json',
        })),
      };
    });

    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [
        {
          uriTemplate: RUN_RESOURCE_TEMPLATE,
          name: 'run',
          title: 'A run of yours',
          description: 'A run with its plan, the result of each step and its status (JSON)',
          mimeType: 'application/json',
        },
      ],
    }));

    server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
      const runId = runIdOfResource(req.params.uri);
      if (!runId)
        throw new McpError(-32002, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
      try {
        const run = await this.bus.call(Rpc.executor.get, { runId }, { ctx });
        return {
          contents: [{ uri: req.params.uri, mimeType: 'application/json', text: JSON.stringify(run) }],
        };
      } catch (err) {
        if (err instanceof AppError && (err.code === 'not_found' || err.code === 'forbidden'))
          throw new McpError(-32002, `Resource not found: ${req.params.uri}`, { uri: req.params.uri });
        throw err;
      }
    });
    return server;
  }

  /** The caller's published workflows that their MCP access exposes, as catalog descriptors. */
  private async exposed(call: McpCall, ctx: CallContext): Promise<ToolDescriptor[]> {
    const { tools } = await this.bus.call(Rpc.workflows.tools, {}, { ctx });
    const only = call.access.exposedWorkflows;
    if (!only) return tools;
    const names = new Set(only.map(workflowToolName));
    return tools.filter((t) => names.has(t.name));
  }

  /** The registry's task tools, as it describes them (built-ins: the same for every caller). */
  private tasks(ctx: CallContext): Promise<Tool[]> {
    this.taskTools ??= this.bus.call(Rpc.registry.catalog, {}, { ctx }).then(({ tools }) =>
      TASK_TOOLS.flatMap((name) => {
        const t = tools.find((d) => d.name === name);
        // No outputSchema: the answers are the scheduler's Task objects, given as structured content.
        return t
          ? [
              {
                name,
                description: t.description,
                inputSchema: objectSchema(t),
                annotations: annotationsOf(t),
              },
            ]
          : [];
      }),
    );
    this.taskTools.catch(() => (this.taskTools = undefined));
    return this.taskTools;
  }

  /**
   * The published version, run unattended like a background task's (the executor's
   * startPublished), with the owner's MCP permission mode; one progress notification per finished
   * step; a cancelled call cancels the run.
   */
  private async runWorkflow(
    call: McpCall,
    ctx: CallContext,
    workflowId: string,
    inputs: Record<string, unknown>,
    extra: Extra,
  ): Promise<CallToolResult> {
    let started;
    try {
      started = await this.bus.call(
        Rpc.workflows.startPublished,
        { workflowId, inputs, permissionMode: call.access.permissionMode },
        { ctx },
      );
    } catch (err) {
      // Not the caller's, or not published (any more): as if the tool did not exist.
      if (err instanceof AppError && (err.code === 'not_found' || err.code === 'conflict'))
        throw unknownTool(workflowToolName(workflowId));
      if (err instanceof AppError && ['validation_failed', 'forbidden'].includes(err.code))
        return failure(err.message);
      throw err;
    }
    const { runId, name, steps } = started;
    const token = extra._meta?.progressToken;
    let finished = 0;
    const progress = (e: RunEvent & { type: 'step_complete' | 'step_failed' }) => {
      if (token === undefined) return;
      finished++;
      const how = e.type === 'step_complete' ? 'done' : 'failed';
      extra
        .sendNotification({
          method: 'notifications/progress',
          params: {
            progressToken: token,
            progress: finished,
            ...(steps ? { total: steps } : {}),
            message: `step ${e.data.stepId} (${e.data.tool}) ${how}`,
          },
        })
        .catch(() => undefined); // the client left: the run goes on, its result is kept
    };
    let end: RunEnd | undefined;
    const ended = new Promise<void>((resolve) => {
      this.relay.followRun(
        runId,
        0,
        (e) => {
          if (e.type === 'step_complete' || e.type === 'step_failed') progress(e);
          if (isTerminalRunEvent(e)) end = e as RunEnd;
        },
        resolve,
      );
    });
    if (await this.sessions.registerCall(call.sessionId, extra.requestId, runId))
      await this.cancelRun(runId, ctx, 'the MCP client cancelled the tool call');
    await ended;
    void this.sessions.forgetCall(call.sessionId, extra.requestId);
    const last = end as RunEnd | undefined; // set by the follower's callbacks
    this.logger.info({ runId, workflowId, status: last?.type }, 'MCP workflow call ended');
    if (last?.type === 'complete') {
      const structured = { runId, status: 'completed' as const, result: last.data.result ?? null };
      return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    }
    const why = last
      ? `${last.type === 'error' ? 'failed' : last.type}: ${last.data.message}`
      : 'lost track of the run';
    return failure(`workflow "${name}" (run ${runId}) ${why}; see ${runResourceUri(runId)}`);
  }

  private async submitTask(
    call: McpCall,
    ctx: CallContext,
    args: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const {
      workflowId,
      inputs = {},
      priority = 'normal',
    } = args as {
      workflowId?: unknown;
      inputs?: unknown;
      priority?: unknown;
    };
    if (typeof workflowId !== 'string' || !workflowIdOfTool(workflowToolName(workflowId)))
      return failure('workflowId must be the <id> of one of your run_workflow_<id> tools');
    const level = TaskPriority.safeParse(priority);
    if (!level.success) return failure('priority must be interactive, normal or batch');
    if (!(await this.exposed(call, ctx)).some((t) => t.name === workflowToolName(workflowId)))
      return failure(`no published workflow ${workflowId} is exposed to MCP clients`);
    try {
      const task = await this.bus.call(
        Rpc.tasks.submit,
        {
          workflowId,
          inputs: inputs as Record<string, unknown>,
          priority: level.data,
          permissionMode: call.access.permissionMode,
        },
        { ctx },
      );
      const out = { taskId: task.id, state: task.state, queued: task.queued, priority: task.priority };
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (err) {
      if (
        err instanceof AppError &&
        ['capacity_exceeded', 'validation_failed', 'not_found'].includes(err.code)
      )
        return failure(JSON.stringify({ error: err.message, code: err.code, ...(err.details ?? {}) }));
      throw err;
    }
  }

  /** task_output / task_wait / task_kill / task_list: the registry's built-ins, cancellable. */
  private async invokeTaskTool(
    call: McpCall,
    ctx: CallContext,
    tool: string,
    args: Record<string, unknown>,
    extra: Extra,
  ): Promise<CallToolResult> {
    const invocationId =
      `mcp-${call.sessionId}-${String(extra.requestId).replace(/[^A-Za-z0-9._:-]/g, '_')}`.slice(0, 100);
    const waitMs = typeof args['timeoutMs'] === 'number' ? args['timeoutMs'] : 0;
    await this.sessions.registerCall(call.sessionId, extra.requestId, `inv:${invocationId}`);
    try {
      const r = await this.bus.call(
        Rpc.registry.invoke,
        { tool, arguments: args, invocationId },
        { ctx, timeoutMs: Math.min(waitMs, 600_000) + 30_000 },
      );
      return fromToolResult(r);
    } catch (err) {
      if (err instanceof AppError && err.code === 'validation_failed') return failure(err.message);
      throw err;
    } finally {
      void this.sessions.forgetCall(call.sessionId, extra.requestId);
    }
  }

  private async cancelRun(runId: string, ctx: CallContext, reason: string): Promise<void> {
    await this.bus
      .call(Rpc.executor.cancel, { runId }, { ctx })
      .catch((err: Error) =>
        this.logger.warn({ runId, err: err.message, reason }, 'could not cancel the run of an MCP call'),
      );
  }
}

function unknownTool(name: string): McpError {
  return new McpError(McpErrorCode.InvalidParams, `Unknown tool: ${name}`);
}

function annotationsOf(t: ToolDescriptor): NonNullable<Tool['annotations']> {
  return {
    readOnlyHint: t.effect === 'read',
    destructiveHint: t.effect !== 'read',
    idempotentHint: t.idempotent,
    openWorldHint: t.effect === 'external',
  };
}

/** A published workflow as an MCP tool: its inputs as the input schema, the run's result as output. */
function objectSchema(t: ToolDescriptor): Tool['inputSchema'] {
  return { ...(t.inputSchema as Tool['inputSchema']), type: 'object' };
}

function workflowTool(t: ToolDescriptor): Tool {
  return {
    name: t.name,
    description: t.description,
    inputSchema: objectSchema(t),
    outputSchema: WORKFLOW_OUTPUT_SCHEMA as unknown as Tool['outputSchema'],
    annotations: annotationsOf(t),
  };
}
