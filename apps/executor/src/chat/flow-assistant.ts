import {
  AppError,
  FlowEditRequest,
  Rpc,
  type FlowEditOp,
  type FlowProposal,
  type CreateWorkflowBody,
  type FlowSnapshot,
  type PermissionMode,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { diagnoseFlow, inspectFlow, proposeFlowEdit } from '@switchyard/plan';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';

/** What the model is told when a turn carries a canvas. */
export const FLOW_ASSISTANT_PROMPT =
  "You are also the flow builder's assistant: the person is editing a flow (a graph of tool nodes) on a canvas. " +
  'Read it with inspect_current_flow and diagnose_current_flow; propose changes with edit_current_flow (the person ' +
  'sees them as a diff and applies or dismisses them; nothing is saved until then); run it with run_current_flow ' +
  'only when asked to and when it is valid.';

/** A tool that exists for one turn only: bound to the canvas the turn carries. */
export interface ScopedTool {
  readonly descriptor: ToolDescriptor;
  call(args: Record<string, unknown>, callId: string): Promise<unknown>;
}

export interface FlowAssistantDeps {
  readonly bus: BusPort;
  readonly ctx: CallContext;
  readonly permissionMode: PermissionMode;
  /** A new proposal for the canvas (shown as a diff; nothing is written). */
  readonly onProposal: (proposal: FlowProposal, callId: string) => unknown;
  /** The flow was saved (and maybe created) by `run_current_flow`. */
  readonly onSaved: (
    saved: { workflowId: string; revision: number; runId?: string },
    callId: string,
  ) => unknown;
}

const NO_ARGS = { type: 'object', properties: {}, additionalProperties: false };

const EDIT_SCHEMA = {
  type: 'object',
  properties: {
    mode: {
      type: 'string',
      enum: ['replace', 'edit'],
      description: 'replace: a whole new flow in `graph`; edit: `ops` applied to the current canvas in order',
    },
    summary: { type: 'string', description: 'one sentence for the person: what the proposal changes' },
    graph: {
      type: 'object',
      description:
        'replace only: {nodes:[{id,type:"start"|"tool"|"note",data:{tool,arguments,description,requiresApproval}}], edges:[{source,target}]}; keep one start node',
    },
    inputSchema: { type: 'object', description: 'replace only: the JSON Schema of the inputs' },
    ops: {
      type: 'array',
      description:
        'edit only. Each op is one of {op:"add_node",node}, {op:"remove_node",id}, {op:"update_node",id,data}, ' +
        '{op:"add_edge",source,target}, {op:"remove_edge",source,target}, {op:"set_input_schema",inputSchema}',
      items: { type: 'object' },
    },
  },
  required: ['mode', 'summary'],
};

/**
 * The flow-authoring assistant's request-scoped tools, over the canvas a turn carries (also unsaved
 * or invalid): `inspect_current_flow`, `diagnose_current_flow`, `edit_current_flow` (proposes, never
 * writes; later edits in the turn build on the pending proposal) and `run_current_flow` (saves the
 * pending edits through the revision check and starts a normal run, only when they form a valid
 * graph). Effects are declared like any tool's, so the permission gate treats them alike.
 */
export class FlowAssistant {
  private pending: { request: FlowEditRequest; proposal: FlowProposal } | undefined;

  constructor(
    private readonly snapshot: FlowSnapshot,
    private readonly catalog: readonly ToolDescriptor[],
    private readonly deps: FlowAssistantDeps,
  ) {}

  /** The canvas as the model's edits left it so far (the snapshot when there are none). */
  current(): Pick<FlowSnapshot, 'graph' | 'inputSchema'> {
    return this.pending
      ? { graph: this.pending.proposal.graph, inputSchema: this.pending.proposal.inputSchema }
      : this.snapshot;
  }

  tools(): ScopedTool[] {
    const tool = (
      name: string,
      description: string,
      effect: ToolDescriptor['effect'],
      inputSchema: Record<string, unknown>,
      call: (args: Record<string, unknown>, callId: string) => Promise<unknown>,
    ): ScopedTool => ({
      descriptor: {
        name,
        description,
        effect,
        inputSchema,
        source: 'builtin',
        idempotent: effect === 'read',
      },
      call,
    });
    return [
      tool(
        'inspect_current_flow',
        "The flow on the person's canvas now (also unsaved or invalid): nodes, edges, input contract, current diagnostics, and the installed tools with their input and output contracts",
        'read',
        NO_ARGS,
        async () => inspectFlow({ ...this.snapshot, ...this.current() }, this.catalog),
      ),
      tool(
        'diagnose_current_flow',
        'Every problem of the flow on the canvas: unavailable tools, missing required arguments, malformed references, dangling connections, cycles, and the last run error. Changes nothing',
        'read',
        NO_ARGS,
        async () => ({ diagnostics: diagnoseFlow({ ...this.snapshot, ...this.current() }, this.catalog) }),
      ),
      tool(
        'edit_current_flow',
        'Propose a change to the flow: a complete replacement (mode "replace", also to build one from an empty canvas) or edits (mode "edit"). ' +
          'Never writes: the person sees the proposal as a diff on the canvas and applies or dismisses it. Answers whether the result is valid and its diagnostics',
        'read',
        EDIT_SCHEMA,
        async (args, callId) => this.edit(args, callId),
      ),
      tool(
        'run_current_flow',
        'Save the flow with the proposed edits and run it (the same run as the Run button: its permission mode, gates and events). Refused while the flow is not valid',
        'external',
        {
          type: 'object',
          properties: { inputs: { type: 'object', description: "values for the flow's inputs" } },
          additionalProperties: false,
        },
        async (args, callId) => this.run(args, callId),
      ),
    ];
  }

  private async edit(args: Record<string, unknown>, callId: string): Promise<unknown> {
    const request = FlowEditRequest.safeParse(args);
    if (!request.success) {
      throw new AppError(
        'validation_failed',
        `edit_current_flow: ${request.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ')}`,
      );
    }
    const made = proposeFlowEdit({ ...this.snapshot, ...this.current() }, request.data, this.catalog);
    if (!made.ok) {
      throw new AppError(
        'validation_failed',
        `edit_current_flow could not apply: ${made.issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
        { issues: made.issues },
      );
    }
    // The person applies one proposal to the canvas they have: it is made against that canvas, and
    // carries the edits of the whole turn.
    const combined = this.combine(request.data, made.proposal);
    const proposal = proposeFlowEdit(this.snapshot, combined, this.catalog);
    if (!proposal.ok) throw new AppError('internal', 'a proposal that applied once did not apply again');
    this.pending = { request: combined, proposal: proposal.proposal };
    await this.deps.onProposal(proposal.proposal, callId);
    return {
      valid: proposal.proposal.valid,
      diff: proposal.proposal.diff,
      diagnostics: proposal.proposal.diagnostics,
      note: 'proposed on the canvas; nothing is saved until the person applies it (or you run the flow)',
    };
  }

  /** This edit and the turn's earlier ones as one request against the snapshot. */
  private combine(request: FlowEditRequest, result: FlowProposal): FlowEditRequest {
    const before = this.pending?.request;
    if (request.mode === 'edit' && (!before || before.mode === 'edit')) {
      const ops: FlowEditOp[] = [...(before?.mode === 'edit' ? before.ops : []), ...request.ops];
      return { mode: 'edit', summary: request.summary, ops };
    }
    return {
      mode: 'replace',
      summary: request.summary,
      graph: result.graph,
      inputSchema: result.inputSchema,
    };
  }

  private async run(args: Record<string, unknown>, callId: string): Promise<unknown> {
    const flow = this.current();
    const problems = diagnoseFlow(flow, this.catalog).filter((d) => d.kind !== 'last_run_error');
    if (problems.length) {
      throw new AppError(
        'validation_failed',
        `the flow is not valid, so it cannot run: ${problems
          .slice(0, 5)
          .map((d) => `${d.nodeId ? `${d.nodeId}: ` : ''}${d.message}`)
          .join('; ')}`,
        { details: { diagnostics: problems } },
      );
    }
    const inputs =
      args['inputs'] && typeof args['inputs'] === 'object' && !Array.isArray(args['inputs'])
        ? (args['inputs'] as Record<string, unknown>)
        : {};
    const { ctx, bus } = this.deps;
    let workflowId = this.snapshot.workflowId;
    let revision: number;
    if (workflowId) {
      const now = await bus.call(Rpc.workflows.get, { id: workflowId }, { ctx });
      const saved = await bus.call(
        Rpc.workflows.update,
        {
          id: workflowId,
          body: {
            // The revision the canvas started from: a flow saved elsewhere meanwhile is a conflict.
            revision: this.snapshot.revision ?? now.revision,
            name: now.name,
            description: now.description,
            inputSchema: flow.inputSchema as CreateWorkflowBody['inputSchema'],
            graph: flow.graph,
          },
        },
        { ctx },
      );
      revision = saved.revision;
    } else {
      const created = await bus.call(
        Rpc.workflows.create,
        {
          name: this.snapshot.name?.trim() || 'Untitled flow',
          inputSchema: flow.inputSchema as CreateWorkflowBody['inputSchema'],
          graph: flow.graph,
        },
        { ctx },
      );
      workflowId = created.id;
      revision = created.revision;
    }
    const started = await bus.call(
      Rpc.workflows.run,
      // The person who let this call through (at its card, or by the session's mode) started the
      // run: no plan gate, as when they press Run; step gates and the permission mode still apply.
      { id: workflowId, body: { inputs, permissionMode: this.deps.permissionMode, planApproval: false } },
      { ctx },
    );
    await this.deps.onSaved({ workflowId, revision, runId: started.runId }, callId);
    return { workflowId, revision, runId: started.runId };
  }
}
