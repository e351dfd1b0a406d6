import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  FINISHED_RUN_STATUSES,
  RESUMABLE_RUN_STATUSES,
  RunConfig,
  STEP_RUN_EVENTS,
  type AgentPlan,
  type Budget,
} from '@switchyard/contracts';
import { planRefusal, validatePlan } from '@switchyard/plan';
import type { AppConfig } from '@switchyard/server-config';
import { RunsRepository, type RunRow } from '@switchyard/server-db-runs';
import type { CallContext } from '@switchyard/server-observability';
import { APP_CONFIG } from '@switchyard/server-runtime';
import { BudgetMeter } from './engine/budget';
import { foldExecutions, reusableSteps, spentOf, type ReusableStep } from './executions';
import { ownerOf, visibleTo } from './run-access';
import { RunLauncher, toolsOf, type RunAgent, type RunOrigin } from './run-launcher';
import { grantsOf, parsePlan } from './run-queries';
import { RunPosture } from './sandbox-posture';

/** Runs from earlier runs: resume (same run), fork and rewind (a new run of the same plan). */
@Injectable()
export class DeriveRun {
  constructor(
    private readonly repo: RunsRepository,
    private readonly launcher: RunLauncher,
    private readonly posture: RunPosture,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Same run, same id: completed steps are reused, the restored plan waits for review. The budget's
   * figures carry on (the same run spends the same budget); `budget` replaces the budget, and a run
   * that has used up one of its limits is refused until a budget raises it.
   */
  async resume(runId: string, ctx: CallContext, budget?: Budget): Promise<{ runId: string }> {
    const run = await this.repo.getVisible(runId, visibleTo(ctx));
    if (!RESUMABLE_RUN_STATUSES.has(run.status))
      throw new AppError(
        'conflict',
        `run ${runId} is ${run.status}; only failed, cancelled or interrupted runs resume`,
        { details: { status: run.status } },
      );
    const plan = parsePlan(run.plan);
    if (!plan)
      throw new AppError('conflict', `run ${runId} ended before it had a plan; fork it or start again`);
    await this.posture.assertDerivable(runId, run.sandboxPosture, 'resume it');
    const stepEvents = await this.repo.eventsOfTypes(runId, STEP_RUN_EVENTS);
    const reusable = reusableSteps(plan, foldExecutions(plan, stepEvents));
    const stored = RunConfig.parse(run.config);
    const config = budget ? { ...stored, budget } : stored;
    const spent = spentOf(run.usage, stepEvents);
    const limit = new BudgetMeter(config.budget, spent).spentLimit();
    if (limit)
      throw new AppError(
        'budget_exceeded',
        `run ${runId} has spent its ${limit} (${config.budget?.[limit]}); resume it with a budget that raises it`,
        { details: { limit, budget: config.budget, usage: spent } },
      );
    const owner = { ...ctx, ownerId: run.ownerId };
    const agent = run.agentId !== null ? await this.launcher.agent(run.agentId, owner) : undefined;
    const tools = toolsOf(await this.launcher.catalog(ctx), agent);
    if (!(await this.repo.claim(runId, this.launcher.replica, this.config.runs.leaseMs, [run.status])))
      throw new AppError('conflict', `run ${runId} changed while resuming it; look at it again`);
    await this.launcher.adopt(
      runId,
      {
        goal: run.goal,
        config,
        inputs: run.inputs,
        files: run.files,
        grants: grantsOf(run),
        tools,
        reusable,
        spent,
        ...(agent ? { agent } : {}),
        created: { source: 'workflow' },
      },
      owner,
      'awaiting_plan_approval',
      (writer) =>
        writer.emit(
          'resumed',
          { from: run.status, reusedSteps: [...reusable.keys()], ...(budget ? { budget } : {}) },
          {
            status: 'awaiting_plan_approval',
            error: null,
            finished: false,
            ...(budget ? { config } : {}),
          },
        ),
      (driver) => driver.planReady(plan, { review: true, resumed: true }),
    );
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
        { issues: [{ path: 'keepSteps', message: `at most ${plan.steps.length}` }] },
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
    await this.posture.assertDerivable(runId, run.sandboxPosture, `${what} it`);
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
    const agent: RunAgent | undefined =
      run.agentId !== null ? await this.launcher.agent(run.agentId, ctx) : undefined;
    const tools = toolsOf(await this.launcher.catalog(ctx), agent);
    const config = { ...RunConfig.parse(run.config), planApproval: true };
    const checked = validatePlan(plan, {
      tools,
      inputNames: Object.keys(run.inputs),
      readOnly: config.capabilityMode === 'read-only',
    });
    if (!checked.ok) throw planRefusal('the plan is no longer valid', checked.issues);
    const sourceGrants = grantsOf(run);
    const driver = await this.launcher.launch(
      {
        goal: run.goal,
        config,
        inputs: run.inputs,
        files: run.files,
        // A derived run gets copies of the source's grants (a shared directory with what the
        // source wrote into it): the steps it takes over find their files, and nothing it does
        // changes the source run's.
        ...(sourceGrants.length
          ? { grantRequests: sourceGrants.map((g) => g.request), copyGrantsFrom: run.id }
          : {}),
        plan: checked.plan,
        tools,
        sourceRunId: run.id,
        ...(agent ? { agent } : {}),
        created: { source: 'workflow', ...created },
        ...(reusable ? { reusable } : {}),
      },
      { ...ctx, ownerId: ownerOf(ctx) },
    );
    return { runId: driver.runId };
  }
}
