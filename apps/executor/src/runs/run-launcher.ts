import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  Rpc,
  RunEventBody,
  type AgentPlan,
  type BudgetUsage,
  type FileGrantRequest,
  type ResolvedGrant,
  type ModelSettings,
  type RunConfig,
  type RunCreated,
  type RunStatus,
  type ToolDescriptor,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { RunsRepository, type NewRun } from '@switchyard/server-db-runs';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER, OwnerFeedOutbox } from '@switchyard/server-runtime';
import { PermissionsService } from '../permissions/permissions.service';
import { ActiveRuns } from './active-runs';
import type { ReusableStep } from './executions';
import { ownerOf } from './run-access';
import { RunDriver } from './run-driver';
import { RunWriter } from './engine/run-writer';
import { RunEventOutbox } from './engine/run-event-outbox';
import { ownerFeedOf } from './owner-feed';
import { RunPosture } from './sandbox-posture';
import { InputWaits } from '../inputs/input-waits';
import { toolCallOf } from '@switchyard/permissions';

/** Where a run comes from, as its run_created event says. */
export type RunOrigin = Omit<RunCreated, 'goal' | 'config'>;

/** The agent driving a run: what the planner is told, and the only tools the run may use. */
export interface RunAgent {
  readonly id: number;
  readonly name: string;
  readonly systemPrompt: string;
  readonly modelSettings: ModelSettings;
  readonly toolNames: ReadonlySet<string>;
}

/** The part of a catalog an agent's tool set allows (the catalog itself without an agent: no copy per run). */
export function toolsOf(
  catalog: ReadonlyMap<string, ToolDescriptor>,
  agent: RunAgent | undefined,
): ReadonlyMap<string, ToolDescriptor> {
  if (!agent) return catalog;
  return new Map([...catalog].filter(([name]) => agent.toolNames.has(name)));
}

/** What a new run starts from, once its input has been checked. */
export interface Launch {
  readonly goal: string;
  readonly config: RunConfig;
  readonly inputs: Record<string, unknown>;
  readonly files: readonly string[];
  /** File grants to materialise for the new run (registry.files.grant) before its row is written. */
  readonly grantRequests?: readonly FileGrantRequest[];
  /** Fork, rewind: the grants' contents are copied from this run's. */
  readonly copyGrantsFrom?: string;
  /** An existing run's grants, as materialised (resume). */
  readonly grants?: readonly ResolvedGrant[];
  readonly plan?: AgentPlan;
  readonly tools: ReadonlyMap<string, ToolDescriptor>;
  readonly sourceRunId?: string;
  readonly batchId?: string;
  readonly reusable?: ReadonlyMap<string, ReusableStep>;
  /** `tools` is the catalog filtered to the agent's tool set already. */
  readonly agent?: RunAgent;
  /** What a resumed run spent before. */
  readonly spent?: BudgetUsage;
  readonly created: RunOrigin;
  /** The id to write the run with, when the caller named it already; a new one otherwise. */
  readonly runId?: string;
  /**
   * Asked before any of the run's work starts (a task checks for a kill here); a reason answered
   * cancels the run before a tool is called.
   */
  readonly beforeWork?: BeforeWork;
  /**
   * Told the new run's driver as soon as it exists, before any of its work and before its row is
   * written (a task's kill reaches the run from then on).
   */
  readonly attach?: (driver: RunDriver) => void;
}

/** Resolves with a reason to cancel the new run before it does anything, or undefined to go on. */
export type BeforeWork = (runId: string) => Promise<string | undefined>;

/**
 * A new run's first work (with a given plan, started while its row is being written: what it emits
 * at once is written with the row, and no tool is called before; a draft, once the row is written):
 * `beforeWork` may cancel it first; then its plan is reviewed (and run) or drafted.
 */
export async function firstWork(
  driver: RunDriver,
  l: Pick<Launch, 'plan' | 'beforeWork'>,
  review: boolean,
): Promise<void> {
  const stop = l.beforeWork ? await l.beforeWork(driver.runId) : undefined;
  if (stop !== undefined) {
    await driver.cancel(stop);
    return;
  }
  // A plan given with the start was written with the run's row (RunLauncher.launch).
  await (l.plan ? driver.planReady(l.plan, { review, stored: true }) : driver.draft());
}

/**
 * Puts runs on this replica: writes a new run's row with its first events and hands it to a driver,
 * or hands an existing run (resumed) to one. Shared by the start and derive use cases.
 */
@Injectable()
export class RunLauncher {
  constructor(
    private readonly repo: RunsRepository,
    private readonly active: ActiveRuns,
    private readonly permissions: PermissionsService,
    private readonly posture: RunPosture,
    private readonly inputWaits: InputWaits,
    private readonly outbox: RunEventOutbox,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    private readonly feed: OwnerFeedOutbox,
  ) {}

  get replica(): string {
    return this.active.replica;
  }

  /** The caller's tool catalog, by name. */
  async catalog(ctx: CallContext): Promise<Map<string, ToolDescriptor>> {
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    return new Map(tools.map((t) => [t.name, t]));
  }

  /**
   * One of the caller's agents (agents are owner-scoped: another owner's is not_found) with the
   * names of the tools its tool set assembles to.
   */
  async agent(id: number, ctx: CallContext): Promise<RunAgent> {
    const [agent, set] = await Promise.all([
      this.bus.call(Rpc.registry.agentGet, { id }, { ctx }),
      this.bus.call(Rpc.registry.agentTools, { id }, { ctx }),
    ]);
    return {
      id,
      name: agent.name,
      systemPrompt: agent.systemPrompt,
      modelSettings: agent.modelSettings,
      toolNames: new Set(set.tools.map((t) => t.name)),
    };
  }

  /** The refusal `wanted` more foreground runs of the caller would meet now, if any. */
  foregroundRoom(ctx: CallContext, wanted: number): Promise<AppError | undefined> {
    return this.repo.foregroundRoom(ownerOf(ctx), this.config.runs.foreground, wanted);
  }

  /**
   * Hands a new run to a driver on this replica and kicks it off; resolves once its row is written
   * with its first events (and with what its first work emitted at once: see `RunWriter.create`).
   * A refused or failed write rejects, and the run does nothing.
   */
  async launch(l: Launch, ctx: CallContext): Promise<RunDriver> {
    const runId = l.runId ?? randomUUID();
    const background = l.created.taskId !== undefined || l.created.asTool !== undefined;
    // Materialised before the row exists: a refused grant (another owner's file, a path outside the
    // workspace) refuses the start; a failure after this leaves an empty run directory behind.
    const grants = l.grantRequests?.length
      ? (
          await this.bus.call(
            Rpc.registry.fileGrant,
            {
              runId,
              grants: [...l.grantRequests],
              ...(l.copyGrantsFrom ? { copyFrom: l.copyGrantsFrom } : {}),
            },
            { ctx },
          )
        ).grants
      : [];
    l = { ...l, grants };
    const writer = this.writerFor(runId, ownerOf(ctx), 'planning');
    const driver = this.driver(runId, l, ctx, writer, 'planning');
    // The gate's rules and hooks, loaded now so the steps decide without a round trip; and the
    // plugin sandbox posture the run is created under.
    const [, sandboxPosture] = await Promise.all([
      this.permissions.warm(ownerOf(ctx)),
      this.posture.forNewRun(),
    ]);
    const first: RunEventBody[] = [
      RunEventBody.parse({
        type: 'run_created',
        data: {
          goal: l.goal,
          config: l.config,
          ...(l.sourceRunId ? { sourceRunId: l.sourceRunId } : {}),
          ...l.created,
          ...(l.agent ? { agentId: l.agent.id } : {}),
        } satisfies RunCreated,
      }),
    ];
    if (!l.plan) first.push({ type: 'planning_started', data: {} });
    const row: NewRun = {
      id: runId,
      ownerId: ownerOf(ctx),
      status: 'planning',
      goal: l.goal,
      config: l.config,
      inputs: l.inputs,
      files: l.files,
      fileGrants: grants,
      plan: l.plan ?? null,
      sourceRunId: l.sourceRunId ?? null,
      batchId: l.batchId ?? null,
      workflowId: l.created.workflowId ?? null,
      agentId: l.agent?.id ?? null,
      sandboxPosture,
      replica: this.active.replica,
      leaseMs: this.config.runs.leaseMs,
      background,
    };
    // The run's control subject is subscribed while its row is written (a NATS round trip beside the
    // Postgres one, not before it): both are done before anything names the run (its first events,
    // the answer to the start), so an approval or a cancel always finds the replica driving it.
    const subscribed = this.active.register(driver);
    // Looked at once the row is written (below); not an unhandled rejection meanwhile.
    subscribed.catch(() => undefined);
    // The row is the writer's first write, and carries what the run does at once: a given plan, the
    // run's start and its first steps' starts (one statement, not the row's and then theirs).
    const written = writer.create(first, async (events, update) => {
      const [created, registered] = await Promise.allSettled([
        // A task's run was admitted by the scheduler's fair queue; a workflow called as a tool runs
        // inside the slot of the run or turn that called it.
        this.repo.create(
          {
            ...row,
            status: update?.status ?? row.status,
            plan: update?.plan ?? row.plan,
            ...(update?.usage ? { usage: update.usage } : {}),
          },
          events,
          background ? undefined : this.config.runs.foreground,
        ),
        subscribed,
      ]);
      if (created.status === 'fulfilled' && registered.status === 'fulfilled') return created.value;
      const reason = (
        created.status === 'rejected' ? created.reason : (registered as PromiseRejectedResult).reason
      ) as Error;
      // Nothing of the run happens: no tool was called (each waits for its start to be stored), and
      // its subscription goes (the driver tells ActiveRuns it is closed).
      driver.unwritten(reason);
      // Written, but nobody could reach it (its subscription failed): failed now, not left for the
      // lease sweep to find interrupted.
      if (created.status === 'fulfilled')
        await this.repo
          .fail(runId, this.active.replica, `the run could not be started: ${reason.message}`)
          .catch(() => undefined);
      throw reason;
    });
    l.attach?.(driver);
    const review = l.sourceRunId !== undefined || l.config.planApproval;
    const work = () => firstWork(driver, l, review);
    // A given plan goes on at once (what it does then is written with the row); a draft asks the
    // planner only once the run exists (a refused start costs no model call).
    if (l.plan) this.kick(driver, work);
    await written;
    if (!l.plan) this.kick(driver, work);
    this.logger.info({ runId, source: l.created.source, steps: l.plan?.steps.length }, 'run started');
    return driver;
  }

  /**
   * Takes an existing run (its row claimed by this replica already) onto a driver: `start` writes
   * what announces it, then the driver is kicked off with `work`.
   */
  async adopt(
    runId: string,
    l: Launch,
    ctx: CallContext,
    status: RunStatus,
    start: (writer: RunWriter) => Promise<void>,
    work: (driver: RunDriver) => Promise<void>,
  ): Promise<RunDriver> {
    const writer = this.writerFor(runId, ownerOf(ctx), status);
    const driver = this.driver(runId, l, ctx, writer, status);
    await this.active.register(driver);
    await start(writer);
    this.kick(driver, () => work(driver));
    return driver;
  }

  private kick(driver: RunDriver, work: () => Promise<void>): void {
    void work().catch((err: unknown) => driver.crashed(err));
  }

  private writerFor(runId: string, ownerId: string, status: RunStatus): RunWriter {
    return new RunWriter(
      this.repo,
      this.outbox,
      runId,
      this.active.replica,
      (err) => this.active.get(runId)?.writerFailed(err),
      ownerFeedOf(this.feed, ownerId, runId, status),
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
        grants: l.grants ?? [],
        tools: l.tools,
        writer,
        bus: this.bus,
        logger: this.logger,
        settings: {
          resultLimitBytes: this.config.runs.resultLimitBytes,
          planTimeoutMs: this.config.runs.planTimeoutMs,
          defaultStepTimeoutMs: this.config.tools.timeoutMs,
          invokeGraceMs: 5_000,
          localTools: this.config.runs.localTools,
          cancelGraceMs: 10_000,
        },
        catalog: async () => toolsOf(await this.catalog(ctx), l.agent),
        inputWaits: this.inputWaits,
        onClosed: (id) => this.active.closed(id),
        gate: (step, tool, args) =>
          this.permissions.decide({
            ownerId,
            runId,
            step,
            call: toolCallOf(tool, args),
            config: l.config,
            // A hook may look the run up: it is shown a new run's call once the row is stored.
            ...(writer.created ? { shownAfter: writer.created } : {}),
          }),
        observe: (event, data) => this.permissions.fire(event, ownerId, data as { runId: string }),
        ...(l.reusable ? { reusable: l.reusable } : {}),
        ...(l.spent ? { spent: l.spent } : {}),
        ...(l.agent?.systemPrompt.trim() ? { agentPrompt: l.agent.systemPrompt } : {}),
      },
      status,
    );
  }
}
