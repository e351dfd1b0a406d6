import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AgentPlan,
  AppError,
  FINISHED_RUN_STATUSES,
  RESUMABLE_RUN_STATUSES,
  Rpc,
  RunConfig,
  RunEventBody,
  STEP_RUN_EVENTS,
  type RunCreated,
  type BatchBody,
  type RunControlReply,
  type RunDetail,
  type RunListQuery,
  type RunPage,
  type RunStatus,
  type StartRunBody,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { planRefusal, validatePlan } from '@switchyard/plan';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { RunsRepository, type RunRow } from '@switchyard/server-db';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { PermissionsService } from '../permissions/permissions.service';
import { ActiveRuns } from './active-runs';
import { foldExecutions, reusableSteps, type ReusableStep } from './executions';
import { RunDriver } from './run-driver';
import { RunWriter } from './run-writer';

const HISTORY_EVENTS = 1_000;

/** Where a run comes from, as its run_created event says. */
type RunOrigin = Omit<RunCreated, 'goal' | 'config'>;

/** What a new run starts from, once its input has been checked. */
interface Launch {
  readonly goal: string;
  readonly config: RunConfig;
  readonly inputs: Record<string, unknown>;
  readonly files: readonly string[];
  readonly plan?: AgentPlan;
  readonly tools: ReadonlyMap<string, ToolDescriptor>;
  readonly sourceRunId?: string;
  readonly batchId?: string;
  readonly reusable?: ReadonlyMap<string, ReusableStep>;
  readonly created: RunOrigin;
}

/** Whose runs the caller may see: an admin sees every run (null), anyone else their own. */
function visibleTo(ctx: CallContext): string | null {
  if (ctx.role === 'admin') return null;
  return requireOwner(ctx, 'runs');
}

function ownerOf(ctx: CallContext): string {
  return requireOwner(ctx, 'runs');
}

@Injectable()
export class RunsService {
  constructor(
    private readonly repo: RunsRepository,
    private readonly active: ActiveRuns,
    private readonly permissions: PermissionsService,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  // ── starting ────────────────────────────────────────────────────────────────────────────────

  async start(body: StartRunBody, ctx: CallContext): Promise<{ runId: string }> {
    const tools = await this.catalog(ctx);
    const launch = await this.prepare(
      body,
      tools,
      ctx,
      body.config.capabilityMode === 'read-only',
      undefined,
    );
    return { runId: (await this.launch(launch, ctx)).runId };
  }

  /** Every run is checked before any starts: one refusal refuses the batch. */
  async batch(body: BatchBody, ctx: CallContext): Promise<{ runIds: string[] }> {
    const tools = await this.catalog(ctx);
    const readOnly = body.capabilityMode === 'read-only';
    const batchId = randomUUID();
    const launches: Launch[] = [];
    for (const [i, run] of body.runs.entries()) {
      try {
        launches.push(await this.prepare(run, tools, ctx, readOnly, batchId));
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
    const runIds: string[] = [];
    for (const launch of launches) runIds.push((await this.launch(launch, ctx)).runId);
    return { runIds };
  }

  /**
   * Starts a run of a saved workflow's plan (validated again against the caller's catalog, inputs
   * checked by the caller) and hands back its driver, whose `settled` tells how it ended.
   */
  async startWorkflow(
    def: {
      readonly goal: string;
      readonly plan: unknown;
      readonly inputNames: readonly string[];
      readonly inputs: Record<string, unknown>;
      readonly files?: readonly string[];
      readonly config: Partial<RunConfig>;
      readonly source: Omit<RunOrigin, 'source'>;
    },
    ctx: CallContext,
  ): Promise<RunDriver> {
    const tools = await this.catalog(ctx);
    const config = RunConfig.parse(def.config);
    const checked = validatePlan(def.plan, {
      tools,
      inputNames: def.inputNames,
      readOnly: config.capabilityMode === 'read-only',
    });
    if (!checked.ok) throw planRefusal('the workflow is no longer valid', checked.issues);
    const inputs = { ...def.inputs, ...(def.files ? { files: def.files } : {}) };
    return this.launch(
      {
        goal: def.goal,
        config,
        inputs,
        files: def.files ?? [],
        tools,
        plan: checked.plan,
        created: { source: 'workflow', ...def.source },
      },
      ctx,
    );
  }

  private async prepare(
    body: StartRunBody,
    tools: ReadonlyMap<string, ToolDescriptor>,
    ctx: CallContext,
    readOnly: boolean,
    batchId: string | undefined,
  ): Promise<Launch> {
    const config: RunConfig = {
      ...body.config,
      capabilityMode: readOnly ? 'read-only' : body.config.capabilityMode,
    };
    const inputs: Record<string, unknown> = { ...body.inputs, ...(body.files ? { files: body.files } : {}) };
    let plan: AgentPlan | undefined;
    if (body.workflow !== undefined) {
      const checked = validatePlan(body.workflow, { tools, inputNames: Object.keys(inputs), readOnly });
      if (!checked.ok) throw planRefusal('the workflow is not valid', checked.issues);
      plan = checked.plan;
    } else {
      await this.bus.call(Rpc.planner.checkModel, config.model ? { model: config.model } : {}, { ctx });
    }
    return {
      goal: body.goal || plan?.goal || '',
      config,
      inputs,
      files: body.files ?? [],
      tools,
      ...(plan ? { plan } : {}),
      ...(batchId ? { batchId } : {}),
      created: { source: plan ? 'workflow' : 'goal', ...(batchId ? { batchId } : {}) },
    };
  }

  /** Writes the run with its first event, hands it to a driver on this replica and kicks it off. */
  private async launch(l: Launch, ctx: CallContext): Promise<RunDriver> {
    const runId = randomUUID();
    const writer = this.writerFor(runId);
    const driver = this.driver(runId, l, ctx, writer, 'planning');
    // The gate's rules and hooks, loaded now so the steps decide without a round trip.
    await this.permissions.warm(ownerOf(ctx));
    await this.active.register(driver);
    try {
      const first: RunEventBody[] = [
        RunEventBody.parse({
          type: 'run_created',
          data: {
            goal: l.goal,
            config: l.config,
            ...(l.sourceRunId ? { sourceRunId: l.sourceRunId } : {}),
            ...l.created,
          } satisfies RunCreated,
        }),
      ];
      if (!l.plan) first.push({ type: 'planning_started', data: {} });
      const stored = await this.repo.create(
        {
          id: runId,
          ownerId: ownerOf(ctx),
          status: 'planning',
          goal: l.goal,
          config: l.config,
          inputs: l.inputs,
          files: l.files,
          plan: l.plan ?? null,
          sourceRunId: l.sourceRunId ?? null,
          batchId: l.batchId ?? null,
          replica: this.active.replica,
          leaseMs: this.config.runs.leaseMs,
        },
        first,
      );
      writer.publish(stored);
    } catch (err) {
      this.active.closed(runId);
      throw err;
    }
    const plan = l.plan;
    const review = l.sourceRunId !== undefined || l.config.planApproval;
    this.kick(driver, () => (plan ? driver.planReady(plan, { review }) : driver.draft()));
    this.logger.info({ runId, source: l.created.source, steps: plan?.steps.length }, 'run started');
    return driver;
  }

  private kick(driver: RunDriver, work: () => Promise<void>): void {
    void work().catch((err: unknown) => driver.crashed(err));
  }

  private writerFor(runId: string): RunWriter {
    return new RunWriter(this.repo, this.bus, runId, this.active.replica, (err) =>
      this.active.get(runId)?.writerFailed(err),
    );
  }

  private driver(
    runId: string,
    l: Launch,
    ctx: CallContext,
    writer: RunWriter,
    status: RunStatus,
  ): RunDriver {
    const ownerId = ownerOf(ctx);
    return new RunDriver(
      {
        runId,
        ctx: {
          correlationId: ctx.correlationId,
          ...(ctx.ownerId ? { ownerId: ctx.ownerId } : {}),
          ...(ctx.role ? { role: ctx.role } : {}),
        },
        goal: l.goal,
        config: l.config,
        inputs: l.inputs,
        files: l.files,
        tools: l.tools,
        writer,
        bus: this.bus,
        logger: this.logger,
        settings: {
          resultLimitBytes: this.config.runs.resultLimitBytes,
          planTimeoutMs: this.config.runs.planTimeoutMs,
          defaultStepTimeoutMs: this.config.tools.timeoutMs,
          invokeGraceMs: 5_000,
          cancelGraceMs: 10_000,
        },
        catalog: () => this.catalog(ctx),
        onClosed: (id) => this.active.closed(id),
        gate: (step, tool, args) =>
          this.permissions.decide({
            ownerId,
            runId,
            step,
            call: { tool: tool.name, effect: tool.effect, arguments: args },
            config: l.config,
          }),
        observe: (event, data) => this.permissions.fire(event, ownerId, data as { runId: string }),
        ...(l.reusable ? { reusable: l.reusable } : {}),
      },
      status,
    );
  }

  private async catalog(ctx: CallContext): Promise<Map<string, ToolDescriptor>> {
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    return new Map(tools.map((t) => [t.name, t]));
  }

  // ── control ─────────────────────────────────────────────────────────────────────────────────

  async approve(
    runId: string,
    stepId: string | undefined,
    plan: unknown,
    ctx: CallContext,
  ): Promise<RunControlReply> {
    return this.control(runId, { action: 'approve', ...(stepId ? { stepId } : {}), plan }, ctx);
  }

  async cancel(runId: string, ctx: CallContext): Promise<RunControlReply> {
    return this.control(runId, { action: 'cancel', reason: 'cancelled by the user' }, ctx);
  }

  private async control(
    runId: string,
    msg: { action: 'approve'; stepId?: string; plan?: unknown } | { action: 'cancel'; reason: string },
    ctx: CallContext,
  ): Promise<RunControlReply> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    if (FINISHED_RUN_STATUSES.has(run.status))
      throw new AppError('conflict', `run ${runId} is ${run.status}; there is nothing to ${msg.action}`, {
        details: { status: run.status },
      });
    try {
      return await this.active.control(runId, msg);
    } catch (err) {
      if (
        err instanceof AppError &&
        err.code === 'unavailable' &&
        err.details?.['reason'] === 'no_responders'
      ) {
        throw new AppError(
          'conflict',
          `run ${runId} is ${run.status} but no executor replica holds it (its replica stopped); ` +
            `it is marked interrupted within ${Math.ceil((this.config.runs.leaseMs + this.config.runs.sweepMs) / 1000)} s, then it can be resumed`,
          { details: { status: run.status } },
        );
      }
      throw err;
    }
  }

  // ── history ─────────────────────────────────────────────────────────────────────────────────

  async list(q: RunListQuery, ctx: CallContext): Promise<RunPage> {
    const page = await this.repo.list(ownerOf(ctx), q);
    return { items: page.items.map(summaryOf), nextCursor: page.nextCursor };
  }

  async get(runId: string, ctx: CallContext): Promise<RunDetail> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    const [events, stepEvents] = await Promise.all([
      this.repo.events(runId, HISTORY_EVENTS + 1),
      this.repo.eventsOfTypes(runId, STEP_RUN_EVENTS),
    ]);
    const plan = parsePlan(run.plan);
    return {
      ...summaryOf(run),
      config: run.config,
      inputs: run.inputs,
      plan,
      executions: foldExecutions(plan, stepEvents),
      events: events.slice(0, HISTORY_EVENTS),
      eventsTruncated: events.length > HISTORY_EVENTS,
    };
  }

  // ── resume, fork, rewind ────────────────────────────────────────────────────────────────────

  /** Same run, same id: completed steps are reused, the restored plan waits for review. */
  async resume(runId: string, ctx: CallContext): Promise<{ runId: string }> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    if (!RESUMABLE_RUN_STATUSES.has(run.status))
      throw new AppError(
        'conflict',
        `run ${runId} is ${run.status}; only failed, cancelled or interrupted runs resume`,
        {
          details: { status: run.status },
        },
      );
    const plan = parsePlan(run.plan);
    if (!plan)
      throw new AppError('conflict', `run ${runId} ended before it had a plan; fork it or start again`);
    const reusable = reusableSteps(
      plan,
      foldExecutions(plan, await this.repo.eventsOfTypes(runId, STEP_RUN_EVENTS)),
    );
    const tools = await this.catalog(ctx);
    if (!(await this.repo.claim(runId, this.active.replica, this.config.runs.leaseMs, [run.status])))
      throw new AppError('conflict', `run ${runId} changed while resuming it; look at it again`);
    const writer = this.writerFor(runId);
    const launch: Launch = {
      goal: run.goal,
      config: RunConfig.parse(run.config),
      inputs: run.inputs,
      files: run.files,
      tools,
      reusable,
      created: { source: 'workflow' },
    };
    const driver = this.driver(
      runId,
      launch,
      { ...ctx, ownerId: run.ownerId },
      writer,
      'awaiting_plan_approval',
    );
    await this.active.register(driver);
    await writer.emit(
      'resumed',
      { from: run.status, reusedSteps: [...reusable.keys()] },
      { status: 'awaiting_plan_approval', error: null, finished: false },
    );
    this.kick(driver, () => driver.planReady(plan, { review: true, resumed: true }));
    return { runId };
  }

  async fork(runId: string, ctx: CallContext): Promise<{ runId: string }> {
    const { run, plan } = await this.finishedWithPlan(runId, ctx, 'fork');
    return this.derive(run, plan, ctx, { forkedFrom: runId }, undefined);
  }

  async rewind(runId: string, keepSteps: number, ctx: CallContext): Promise<{ runId: string }> {
    const { run, plan } = await this.finishedWithPlan(runId, ctx, 'rewind');
    if (keepSteps > plan.steps.length)
      throw new AppError(
        'validation_failed',
        `keepSteps is ${keepSteps} but run ${runId} has ${plan.steps.length} steps`,
        {
          issues: [{ path: 'keepSteps', message: `at most ${plan.steps.length}` }],
        },
      );
    const kept: AgentPlan = { ...plan, steps: plan.steps.slice(0, keepSteps) };
    const executions = foldExecutions(plan, await this.repo.eventsOfTypes(runId, STEP_RUN_EVENTS));
    return this.derive(run, kept, ctx, { rewoundFrom: runId, keepSteps }, reusableSteps(kept, executions));
  }

  private async finishedWithPlan(
    runId: string,
    ctx: CallContext,
    what: string,
  ): Promise<{ run: RunRow; plan: AgentPlan }> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    if (!FINISHED_RUN_STATUSES.has(run.status))
      throw new AppError('conflict', `run ${runId} is ${run.status}; only a finished run can ${what}`, {
        details: { status: run.status },
      });
    const plan = parsePlan(run.plan);
    if (!plan)
      throw new AppError('conflict', `run ${runId} ended before it had a plan; there is nothing to ${what}`);
    return { run, plan };
  }

  /** A new run of the caller's from an earlier run's plan, always with plan review. */
  private async derive(
    run: RunRow,
    plan: AgentPlan,
    ctx: CallContext,
    created: Omit<RunOrigin, 'source'>,
    reusable: ReadonlyMap<string, ReusableStep> | undefined,
  ): Promise<{ runId: string }> {
    const tools = await this.catalog(ctx);
    const config = { ...RunConfig.parse(run.config), planApproval: true };
    const checked = validatePlan(plan, {
      tools,
      inputNames: Object.keys(run.inputs),
      readOnly: config.capabilityMode === 'read-only',
    });
    if (!checked.ok) throw planRefusal('the plan is no longer valid', checked.issues);
    const launch: Launch = {
      goal: run.goal,
      config,
      inputs: run.inputs,
      files: run.files,
      plan: checked.plan,
      tools,
      sourceRunId: run.id,
      created: { source: 'workflow', ...created },
      ...(reusable ? { reusable } : {}),
    };
    return { runId: (await this.launch(launch, { ...ctx, ownerId: ownerOf(ctx) })).runId };
  }
}

function parsePlan(value: unknown): AgentPlan | null {
  if (value === null || value === undefined) return null;
  const parsed = AgentPlan.safeParse(value);
  return parsed.success ? parsed.data : null;
}

function summaryOf(run: RunRow) {
  return {
    id: run.id,
    ownerId: run.ownerId,
    status: run.status,
    goal: run.goal,
    summary: run.summary,
    error: run.error,
    sourceRunId: run.sourceRunId,
    batchId: run.batchId,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    finishedAt: run.finishedAt,
  };
}
