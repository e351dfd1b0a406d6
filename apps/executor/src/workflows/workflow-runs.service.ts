import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  AppError,
  describeIssues,
  isGrantList,
  Events,
  Rpc,
  type RpcRequest,
  type RunCreated,
  type RunWorkflowBody,
  type ToolResult,
} from '@switchyard/contracts';
import { bindFileInputs, checkInputs, inputNamesOf } from '@switchyard/plan';
import type { AppConfig } from '@switchyard/server-config';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER, PublishedWorkflows } from '@switchyard/server-runtime';
import type { RunDriver } from '../runs/run-driver';
import { StartRun, type WorkflowLaunch } from '../runs/start-run.usecase';

const text = (t: string, isError: boolean): ToolResult => ({
  content: [{ type: 'text', text: t }],
  isError,
  truncated: false,
});

/** What saved workflows need of the run use cases: starting a run of a workflow's plan. */
export type WorkflowStarter = Pick<StartRun, 'startWorkflow'>;

/**
 * Saved workflows as runs: by hand (`POST /api/workflows/{id}/run`: the draft or a version, normal
 * approval policy) and as the tool `run_workflow_<id>` (the published version, to the end, inside one
 * tool call: nobody can answer a gate there, so the run is unattended with the caller's permission
 * mode, and a cancelled tool call cancels the run).
 */
@Injectable()
export class WorkflowRuns implements OnModuleInit, OnModuleDestroy {
  private readonly byInvocation = new Map<string, RunDriver>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(StartRun) private readonly runs: WorkflowStarter,
    private readonly published: PublishedWorkflows,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.toolCancel, (msg) =>
      this.byInvocation
        .get(msg.invocationId)
        ?.cancel('the tool call running this workflow was cancelled')
        .catch(() => undefined),
    );
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  async run(id: string, body: RunWorkflowBody, ctx: CallContext): Promise<{ runId: string }> {
    const def = await this.bus.call(Rpc.workflows.resolve, { id, version: body.version ?? 'draft' }, { ctx });
    const given = isGrantList(body.files) ? body.files : [];
    const paths = isGrantList(body.files) ? undefined : (body.files as string[] | undefined);
    const bound = bindFileInputs(def.inputSchema, body.inputs, given);
    const issues = [...bound.issues, ...checkInputs(def.inputSchema, bound.inputs)];
    if (issues.length)
      throw new AppError(
        'validation_failed',
        `the inputs do not fit the workflow: ${describeIssues(issues)}`,
        { issues },
      );
    const driver = await this.runs.startWorkflow(
      {
        goal: def.name,
        plan: def.plan,
        inputNames: inputNamesOf(def.inputSchema),
        inputs: bound.inputs,
        ...(paths ? { files: paths } : {}),
        ...(bound.grants.length ? { grants: bound.grants } : {}),
        config: {
          permissionMode: body.permissionMode,
          planApproval: body.planApproval,
          ...(body.budget ? { budget: body.budget } : {}),
        },
        source: { workflowId: id, version: def.version },
      },
      ctx,
    );
    return { runId: driver.runId };
  }

  /**
   * Starts the published version unattended (nobody can answer a gate) with the given permission
   * mode; an unpublished or unknown workflow or inputs that do not fit are an AppError.
   */
  async startPublished(
    workflowId: string,
    inputs: Record<string, unknown>,
    permissionMode: 'ask' | 'approve-for-me' | 'full-access',
    source: Pick<RunCreated, 'taskId' | 'asTool' | 'viaMcp'>,
    ctx: CallContext,
    launch: Pick<WorkflowLaunch, 'runId' | 'beforeWork' | 'attach'> = {},
  ): Promise<{ driver: RunDriver; name: string; steps: number }> {
    const def = await this.published.resolve(workflowId, ctx);
    // Unattended: shared directories are made as always; a picker file cannot be given here.
    const bound = bindFileInputs(def.inputSchema, inputs, []);
    const issues = [...bound.issues, ...checkInputs(def.inputSchema, bound.inputs)];
    if (issues.length)
      throw new AppError(
        'validation_failed',
        `the inputs do not fit workflow "${def.name}": ${describeIssues(issues)}`,
        {
          issues,
        },
      );
    const driver = await this.runs.startWorkflow(
      {
        goal: def.name,
        plan: def.plan,
        inputNames: inputNamesOf(def.inputSchema),
        inputs: bound.inputs,
        ...(bound.grants.length ? { grants: bound.grants } : {}),
        config: { permissionMode, planApproval: false, unattended: true },
        source: { workflowId, version: def.version, ...source },
        ...launch,
      },
      ctx,
    );
    return { driver, name: def.name, steps: def.plan.steps.length };
  }

  /** The published version as one tool call: its `complete` result, or the failure as a tool error. */
  async invoke(req: RpcRequest<typeof Rpc.workflows.invoke>, ctx: CallContext): Promise<ToolResult> {
    let started;
    try {
      started = await this.startPublished(
        req.workflowId,
        req.inputs,
        req.permissionMode ?? 'ask',
        { asTool: true },
        ctx,
      );
    } catch (err) {
      if (err instanceof AppError && ['not_found', 'conflict', 'validation_failed'].includes(err.code))
        return text(err.message, true);
      throw err;
    }
    const { driver, name } = started;
    const def = { name };
    const timeoutMs = req.timeoutMs ?? this.config.tools.timeoutMs;
    const timer = setTimeout(
      () => void driver.cancel(`the workflow did not finish within ${timeoutMs} ms`).catch(() => undefined),
      timeoutMs,
    );
    if (req.invocationId) this.byInvocation.set(req.invocationId, driver);
    try {
      const end = await driver.settled;
      this.logger.info(
        { runId: driver.runId, workflowId: req.workflowId, status: end.status },
        'workflow tool call ended',
      );
      if (end.type === 'complete') {
        return {
          content: [{ type: 'json', json: { runId: driver.runId, result: end.data.result ?? null } }],
          isError: false,
          truncated: false,
        };
      }
      return text(`workflow "${def.name}" (run ${driver.runId}) ${end.status}: ${end.data.message}`, true);
    } finally {
      clearTimeout(timer);
      if (req.invocationId) this.byInvocation.delete(req.invocationId);
    }
  }
}
