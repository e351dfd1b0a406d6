import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  isGrantList,
  Rpc,
  RunConfig,
  type AgentPlan,
  type BatchBody,
  type FileGrantRequest,
  type PlanIssue,
  type StartRunBody,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { planRefusal, validatePlan, type ValidationResult } from '@switchyard/plan';
import type { Bus } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';
import type { RunDriver } from './run-driver';
import { ToolCatalogs } from './tool-catalogs';
import {
  RunLauncher,
  toolsOf,
  type BeforeWork,
  type Launch,
  type RunAgent,
  type RunOrigin,
} from './run-launcher';

/** A saved workflow's plan to run, its inputs checked by the caller. */
export interface WorkflowLaunch {
  readonly goal: string;
  readonly plan: unknown;
  readonly inputNames: readonly string[];
  readonly inputs: Record<string, unknown>;
  readonly files?: readonly string[];
  /** File grants for the run (the caller's, and the shared directories of auto inputs). */
  readonly grants?: readonly FileGrantRequest[];
  readonly config: Partial<RunConfig>;
  readonly source: Omit<RunOrigin, 'source'>;
  /** The id to write the run with, when the caller named it already (a task's claim records it). */
  readonly runId?: string;
  readonly beforeWork?: BeforeWork;
  readonly attach?: Launch['attach'];
}

/** Starts new runs: from a goal or a workflow, one at a time or as a batch, or from a saved workflow. */
@Injectable()
export class StartRun {
  /** Saved plans that passed, by plan and catalog object (see `checkSaved`). */
  private readonly checked = new WeakMap<object, WeakMap<object, Map<string, ValidationResult>>>();

  constructor(
    private readonly launcher: RunLauncher,
    private readonly catalogs: ToolCatalogs,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  async start(body: StartRunBody, ctx: CallContext): Promise<{ runId: string }> {
    const readOnly = body.config.capabilityMode === 'read-only';
    const launch = await this.withCatalog(body.workflow !== undefined, ctx, (tools) =>
      this.prepare(body, tools, ctx, readOnly, undefined),
    );
    return { runId: (await this.launcher.launch(launch, ctx)).runId };
  }

  /**
   * Runs `use` with the caller's catalog. A plan given with the start is checked against the kept
   * catalog (asking the registry for the whole listing, which asks the planner for the owner's
   * workflows, was a fifth of a one-step run's CPU across the processes); refused against it, it is
   * checked once more against the listing now (a tool connected since). A goal is planned from the
   * listing now.
   */
  private async withCatalog<T>(
    given: boolean,
    ctx: CallContext,
    use: (tools: ReadonlyMap<string, ToolDescriptor>) => Promise<T>,
  ): Promise<T> {
    if (!given) return use(await this.catalogs.fresh(ctx));
    try {
      return await use(await this.catalogs.kept(ctx));
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'validation_failed')) throw err;
      return use(await this.catalogs.refresh(ctx));
    }
  }

  /** Every run is checked before any starts: one refusal refuses the batch. */
  async batch(body: BatchBody, ctx: CallContext): Promise<{ runIds: string[] }> {
    const given = body.runs.every((r) => r.workflow !== undefined);
    const launches = await this.withCatalog(given, ctx, (tools) => this.prepareBatch(body, tools, ctx));
    // All or none as far as can be told now; a start elsewhere between two of these may still
    // refuse a later run of the batch (each is admitted on its own, under the lock).
    const refused = await this.launcher.foregroundRoom(ctx, launches.length);
    if (refused) throw refused;
    const runIds: string[] = [];
    for (const launch of launches) runIds.push((await this.launcher.launch(launch, ctx)).runId);
    return { runIds };
  }

  /** Every run of a batch prepared against one catalog: one refusal refuses the batch. */
  private async prepareBatch(
    body: BatchBody,
    tools: ReadonlyMap<string, ToolDescriptor>,
    ctx: CallContext,
  ): Promise<Launch[]> {
    const readOnly = body.capabilityMode === 'read-only';
    const batchId = randomUUID();
    const launches: Launch[] = [];
    // Runs of one batch naming the same agent look it up once.
    const agents = new Map<number, Promise<RunAgent>>();
    for (const [i, run] of body.runs.entries()) {
      try {
        launches.push(await this.prepare(run, tools, ctx, readOnly, batchId, agents));
      } catch (err) {
        if (err instanceof AppError && err.code === 'validation_failed') {
          throw new AppError('validation_failed', `runs[${i}]: ${err.message}`, {
            issues: (err.issues ?? []).map((x) => ({
              path: `runs[${i}].workflow${x.path.slice(1)}`,
              message: x.message,
            })),
            details: { ...err.details, run: i },
          });
        }
        throw err;
      }
    }
    return launches;
  }

  /**
   * Starts a run of a saved workflow's plan (validated again against the caller's catalog, inputs
   * checked by the caller) and hands back its driver, whose `settled` tells how it ended.
   */
  async startWorkflow(def: WorkflowLaunch, ctx: CallContext): Promise<RunDriver> {
    const config = RunConfig.parse(def.config);
    const readOnly = config.capabilityMode === 'read-only';
    const check = (tools: ReadonlyMap<string, ToolDescriptor>) =>
      this.checkSaved(def.plan, tools, def.inputNames, readOnly);
    let tools = await this.catalogs.kept(ctx);
    let checked = check(tools);
    // The kept catalog may lack a tool added since (an MCP server that connected): ask afresh once.
    if (!checked.ok) checked = check((tools = await this.catalogs.refresh(ctx)));
    if (!checked.ok) throw planRefusal('the workflow is no longer valid', checked.issues);
    const inputs = { ...def.inputs, ...(def.files ? { files: def.files } : {}) };
    return this.launcher.launch(
      {
        goal: def.goal,
        config,
        inputs,
        files: def.files ?? [],
        ...(def.grants?.length ? { grantRequests: def.grants } : {}),
        tools,
        plan: checked.plan,
        created: { source: 'workflow', ...def.source },
        ...(def.runId ? { runId: def.runId } : {}),
        ...(def.beforeWork ? { beforeWork: def.beforeWork } : {}),
        ...(def.attach ? { attach: def.attach } : {}),
      },
      ctx,
    );
  }

  /**
   * A saved plan checked against a catalog. A published workflow and a kept catalog are the same
   * objects from one start to the next (PublishedWorkflows, ToolCatalogs): a task's plan is checked
   * once per catalog, not once per run. Only a plan that passed is remembered; its checked form is
   * shared by the runs (nothing changes a plan in place: an edit makes a new one).
   */
  private checkSaved(
    plan: unknown,
    tools: ReadonlyMap<string, ToolDescriptor>,
    inputNames: readonly string[],
    readOnly: boolean,
  ): ValidationResult {
    const key = `${readOnly ? 'r' : 'w'}:${JSON.stringify(inputNames)}`;
    const byTools = plan !== null && typeof plan === 'object' ? this.checked.get(plan) : undefined;
    const known = byTools?.get(tools)?.get(key);
    if (known) return known;
    const result = validatePlan(plan, { tools, inputNames, readOnly });
    if (result.ok && plan !== null && typeof plan === 'object') {
      const forPlan = byTools ?? new WeakMap<object, Map<string, ValidationResult>>();
      const forTools = forPlan.get(tools) ?? new Map<string, ValidationResult>();
      forTools.set(key, result);
      forPlan.set(tools, forTools);
      this.checked.set(plan, forPlan);
    }
    return result;
  }

  /**
   * The one preparation of a run from a start body: its config, inputs and plan, checked. With an
   * agent, its model settings win over the config's, and the catalog is its tool set.
   */
  private async prepare(
    body: StartRunBody,
    catalog: ReadonlyMap<string, ToolDescriptor>,
    ctx: CallContext,
    readOnly: boolean,
    batchId: string | undefined,
    agents = new Map<number, Promise<RunAgent>>(),
  ): Promise<Launch> {
    const id = body.agentId;
    let lookup = id === undefined ? undefined : agents.get(id);
    if (id !== undefined && !lookup) {
      lookup = this.launcher.agent(id, ctx);
      agents.set(id, lookup);
    }
    const agent = await lookup;
    const tools = toolsOf(catalog, agent);
    const model = agent ? { ...body.config.model, ...agent.modelSettings } : body.config.model;
    const config: RunConfig = {
      ...body.config,
      ...(model && Object.keys(model).length ? { model } : {}),
      capabilityMode: readOnly ? 'read-only' : body.config.capabilityMode,
    };
    // Grants are bound as `@file:<name>`; only the old list of paths is also the input `files`.
    const grants = isGrantList(body.files) ? body.files : undefined;
    const paths = grants ? undefined : (body.files as string[] | undefined);
    const inputs: Record<string, unknown> = { ...body.inputs, ...(paths ? { files: paths } : {}) };
    let plan: AgentPlan | undefined;
    if (body.workflow !== undefined) {
      // Checked against the whole catalog, then held to the agent's set: a step outside it is
      // refused by name, not as an unknown tool.
      const checked = validatePlan(body.workflow, {
        tools: catalog,
        inputNames: Object.keys(inputs),
        readOnly,
      });
      if (!checked.ok) throw planRefusal('the workflow is not valid', checked.issues);
      if (agent) refuseOutsideToolSet(checked.plan, agent);
      plan = checked.plan;
    } else {
      await this.bus.call(Rpc.planner.checkModel, config.model ? { model: config.model } : {}, { ctx });
    }
    return {
      goal: body.goal || plan?.goal || '',
      config,
      inputs,
      files: paths ?? [],
      ...(grants ? { grantRequests: grants } : {}),
      tools,
      ...(plan ? { plan } : {}),
      ...(batchId ? { batchId } : {}),
      ...(agent ? { agent } : {}),
      created: { source: plan ? 'workflow' : 'goal', ...(batchId ? { batchId } : {}) },
    };
  }
}

/** A supplied plan with a step whose tool is not in the agent's tool set is refused, naming each. */
function refuseOutsideToolSet(plan: AgentPlan, agent: RunAgent): void {
  const issues: PlanIssue[] = plan.steps.flatMap((step, i) =>
    agent.toolNames.has(step.tool)
      ? []
      : [
          {
            path: `$.steps[${i}].tool`,
            code: 'unknown_tool' as const,
            message: `step ${step.id} uses ${step.tool}, which is not in the tool set of agent ${agent.id} (${agent.name})`,
          },
        ],
  );
  if (issues.length) throw planRefusal("the workflow uses tools outside the agent's tool set", issues);
}
