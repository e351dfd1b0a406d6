import {
  AppError,
  Events,
  type AgentPlan,
  type ElicitationAsk,
  type ElicitationReply,
  type BudgetLimit,
  type BudgetUsage,
  type PermissionDecision,
  type PlanStep,
  type ResolvedGrant,
  type RunCompleted,
  type RunControlReply,
  type RunFailed,
  type RunStatus,
  type TerminalRunEvent,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { storableText } from '@switchyard/server-db';
import { LeaseLostError, type RunUpdate } from '@switchyard/server-db-runs';
import type { Logger } from '@switchyard/server-observability';
import { BudgetMeter } from './engine/budget';
import { editedPlan } from './engine/plan-edits';
import { draftPlan, type RunBasics } from './engine/planning';
import { planOf, type Gate, type RunEnd, type RunPhase } from './engine/run-state';
import { Cancelled, StepRunner, type StepOutcome, type StepSettings } from './engine/step-runner';
import type { ReusableStep } from './executions';
import type { InputPort } from '../inputs/input-waits';
import { capResult } from './step-result';

type StepState = 'waiting' | 'gated' | 'running' | 'done' | 'failed' | 'cancelled';

export interface DriverSettings extends StepSettings {
  readonly planTimeoutMs: number;
  /** How long a cancel waits for in-flight calls to stop before the run is closed anyway. */
  readonly cancelGraceMs: number;
}

export interface DriverInit extends RunBasics {
  /** The run's file grants: `@file:<name>` in a step's arguments binds to one of these. */
  readonly grants?: readonly ResolvedGrant[];
  readonly logger: Logger;
  readonly settings: DriverSettings;
  /** Refreshes the catalog (an edited plan is validated against the current one). */
  readonly catalog: () => Promise<ReadonlyMap<string, ToolDescriptor>>;
  /** Called once, when the run reaches a final state or this replica gives it up. */
  readonly onClosed: (runId: string) => void;
  /** Completed steps kept from an earlier run or attempt. */
  readonly reusable?: ReadonlyMap<string, ReusableStep>;
  /** What the run spent before this replica took it on (a resumed run's figures carry on). */
  readonly spent?: BudgetUsage;
  /** The system prompt of the agent driving the run, given to the planner. */
  readonly agentPrompt?: string;
  /** The permission gate (hooks, rules, mode): synchronous when it can be. */
  readonly gate: (
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
  ) => PermissionDecision | Promise<PermissionDecision>;
  /** MCP servers' input requests during the run's tool calls. */
  readonly inputWaits: InputPort;
  /** Observing hooks (post_tool_use, post_tool_use_failure, run_complete, run_error); never awaited. */
  readonly observe: (
    event: 'post_tool_use' | 'post_tool_use_failure' | 'run_complete' | 'run_error',
    data: Record<string, unknown>,
  ) => void;
}

export type { RunEnd } from './engine/run-state';

/**
 * Drives one run on the replica that owns it: planning, the plan gate, the DAG (ready steps run
 * concurrently up to the run's limit), step gates, retries, cancel and the final state. Every change
 * is an event written through the run's writer; the in-memory state here is only this replica's view
 * of what the log already says.
 */
export class RunDriver {
  status: RunStatus;
  private phase: RunPhase = { kind: 'planning' };
  private tools: ReadonlyMap<string, ToolDescriptor>;
  private readonly states = new Map<string, StepState>();
  private readonly results = new Map<string, unknown>();
  private readonly invocations = new Map<string, string>();
  private readonly stepGates = new Map<string, Gate>();
  /** Steps whose call waits for a person's input (their server asked). */
  private readonly asking = new Set<string>();
  private readonly abort = new AbortController();
  private failure: RunFailed | undefined;
  /** Why the run's log stopped taking events (not a lost lease): the run ends with an error. */
  private logFailure: string | undefined;
  /** What the writer failed with; every later emit rejects with it. */
  private writeError: unknown;
  private cancelReason: string | undefined;
  /** Why the run is stopping for its budget (its failure says which limit). */
  private budgetStop: string | undefined;
  private readonly meter: BudgetMeter;
  private wallTimer: NodeJS.Timeout | undefined;
  private reusable: ReadonlyMap<string, ReusableStep>;
  private settledWith: ((end: RunEnd) => void) | undefined;
  /** Resolves once the run reaches a final state here (or this replica gives it up). */
  readonly settled: Promise<RunEnd> = new Promise((resolve) => (this.settledWith = resolve));
  private readonly steps: StepRunner;

  constructor(
    private readonly init: DriverInit,
    status: RunStatus,
  ) {
    this.status = status;
    this.tools = init.tools;
    this.reusable = init.reusable ?? new Map();
    this.meter = new BudgetMeter(init.config.budget, init.spent);
    this.steps = new StepRunner({
      runId: init.runId,
      goal: init.goal,
      ctx: init.ctx,
      config: init.config,
      inputs: init.inputs,
      grants: init.grants ?? [],
      writer: init.writer,
      bus: init.bus,
      logger: init.logger,
      settings: init.settings,
      signal: this.abort.signal,
      cancelReason: () => this.stopping,
      closed: () => this.closed,
      admitCall: () => this.admitToolCall(),
      invocations: this.invocations,
      gate: init.gate,
      awaitApproval: (step, tool, args, decision) => this.awaitApproval(step, tool, args, decision),
      observe: init.observe,
      inputWaits: init.inputWaits,
      waitingForInput: (stepId, waiting) => {
        if (waiting) this.asking.add(stepId);
        else this.asking.delete(stepId);
        this.syncClock();
      },
      ended: (step, outcome) => this.stepEnded(step, outcome),
    });
  }

  get runId(): string {
    return this.init.runId;
  }

  get finished(): boolean {
    return this.closed;
  }

  /** The run's end is recorded, or this replica gave the run up: nothing more is written. */
  private get closed(): boolean {
    return this.phase.kind === 'closed';
  }

  /** Why the run is stopping before its end (a cancel, or its budget): nothing new starts. */
  private get stopping(): string | undefined {
    return this.cancelReason ?? this.budgetStop;
  }

  /** What the run has spent against its budget so far. */
  get usage(): BudgetUsage {
    return this.meter.usage();
  }

  // ── planning ────────────────────────────────────────────────────────────────────────────────

  /** Asks the planner for a plan (see `draftPlan`), then announces it. */
  async draft(): Promise<void> {
    const { init } = this;
    // The wall clock starts with the run's first work (drafting, or the first steps: see pump).
    this.syncClock();
    const drafted = await draftPlan({
      runId: init.runId,
      ctx: init.ctx,
      goal: init.goal,
      config: init.config,
      inputs: init.inputs,
      files: init.files,
      ...(init.grants?.length ? { grants: init.grants } : {}),
      tools: this.tools,
      bus: init.bus,
      writer: init.writer,
      timeoutMs: init.settings.planTimeoutMs,
      closed: () => this.closed,
      ...(init.agentPrompt ? { agentPrompt: init.agentPrompt } : {}),
      ...(this.meter.tokensLeft() !== undefined ? { maxTokens: this.meter.tokensLeft() } : {}),
    });
    const crossed = this.meter.addTokens(drafted.tokens);
    if (this.closed || this.stopping !== undefined) return this.settle();
    if (crossed) return this.fail(this.meter.exceeded(crossed));
    if (!drafted.ok) return this.fail(drafted.failure);
    try {
      await this.planReady(drafted.plan, {
        review: init.config.planApproval,
        attempts: drafted.attempts,
        tokens: drafted.tokens,
      });
    } catch (err) {
      if (this.closed || this.stopping !== undefined) return this.settle();
      await this.fail(
        err instanceof AppError
          ? { message: err.message, code: err.code }
          : { message: `planning failed: ${(err as Error).message}`, code: 'internal' },
      );
    }
  }

  /**
   * The plan is final: announce it, then wait for approval or run it. `stored`: the run's row holds
   * this plan already (written with the row): the announcement does not write it there again.
   */
  async planReady(
    plan: AgentPlan,
    opts: { review: boolean; attempts?: number; tokens?: number; resumed?: boolean; stored?: boolean },
  ): Promise<void> {
    // Cancelled before its plan was announced (a task killed while its run was being attached).
    if (this.closed || this.stopping !== undefined) return this.settle();
    const { writer } = this.init;
    const announced = writer.emit(
      'plan_ready',
      {
        plan,
        ...(opts.attempts !== undefined ? { attempts: opts.attempts } : {}),
        ...(opts.tokens ? { tokens: opts.tokens } : {}),
      },
      { ...(opts.stored ? {} : { plan }), usage: this.meter.usage() },
    );
    // Without a plan gate the run goes on in this turn: the plan, run_started and the first steps'
    // starts are one write. Nothing waits on it but the tools (each is called once its start, and so
    // everything written before it, is durable); a failed write ends the run (writerFailed).
    if (!opts.review) return this.execute(plan);
    await announced;
    this.status = 'awaiting_plan_approval';
    // The gate exists before it is announced: an approval may arrive as soon as the event is out.
    const decided = new Promise<void>((release, refuse) => {
      this.phase = { kind: 'awaiting-approval', plan, gate: { release, refuse } };
    }).then(
      () => true,
      () => false,
    );
    this.syncClock();
    const nonRead = plan.steps.filter((s) => this.tools.get(s.tool)?.effect !== 'read').map((s) => s.id);
    await writer.emit(
      'plan_approval_requested',
      {
        gate: 'plan',
        steps: plan.steps.length,
        nonReadSteps: nonRead,
        reusedSteps: plan.steps.filter((s) => this.reusableFor(s)).map((s) => s.id),
        ...(opts.resumed ? { resumed: true } : {}),
      },
      { status: 'awaiting_plan_approval', usage: this.meter.usage() },
    );
    if (!(await decided)) return this.settle();
    // approve() moved the run on with the plan it approved (an edit's, maybe).
    if (this.phase.kind === 'running') return this.execute(this.phase.plan);
  }

  // ── control (approve / cancel), from the run's control subject ─────────────────────────────

  async approve(stepId: string | undefined, body: unknown): Promise<RunControlReply> {
    if (this.closed)
      throw new AppError('conflict', `run ${this.runId} is ${this.status}; nothing waits for approval`);
    const edited =
      body !== undefined && body !== null && !(typeof body === 'object' && !Object.keys(body).length);
    if (this.phase.kind === 'awaiting-approval') {
      const edit = edited ? await this.adoptEdit(body, new Set()) : undefined;
      // Re-read after the edit's catalog round trip: the run may have been cancelled meanwhile.
      const phase = this.phase;
      if (phase.kind !== 'awaiting-approval')
        throw new AppError('conflict', `run ${this.runId} is ${this.status}; nothing waits for approval`);
      this.phase = { kind: 'running', plan: phase.plan };
      this.syncClock();
      await this.init.writer.emit('plan_approved', edit ? { edited: true, plan: edit } : { edited: false });
      phase.gate.release();
      return { status: 'running', released: ['plan'] };
    }
    const open = [...this.stepGates.keys()].filter((id) => stepId === undefined || id === stepId);
    if (!open.length) {
      throw new AppError(
        'conflict',
        stepId !== undefined
          ? `step ${stepId} of run ${this.runId} is not waiting for approval`
          : `run ${this.runId} is ${this.status}; nothing waits for approval`,
      );
    }
    if (edited) {
      const fixed = new Set([...this.states].filter(([, s]) => s !== 'waiting').map(([id]) => id));
      const plan = await this.adoptEdit(body, fixed);
      await this.init.writer.emit('plan_approved', { edited: true, plan });
    }
    for (const id of open) {
      const gate = this.stepGates.get(id);
      this.stepGates.delete(id);
      gate?.release();
    }
    return { status: this.stepGates.size ? 'awaiting_step_approval' : 'running', released: open };
  }

  /** A server's input request during one of the run's calls (from the registry, on the control subject). */
  input(ask: ElicitationAsk): Promise<ElicitationReply> {
    return this.steps.input(ask);
  }

  async cancel(reason = 'cancelled by the user'): Promise<RunControlReply> {
    if (this.closed) throw new AppError('conflict', `run ${this.runId} is already ${this.status}`);
    // Stopping for its budget already: it ends failed with budget_exceeded, not cancelled.
    if (this.budgetStop !== undefined) return { status: 'failed', released: [] };
    if (this.cancelReason === undefined) {
      this.cancelReason = reason;
      await this.init.writer.emit('cancel_requested', { message: reason }).catch(() => undefined);
      this.stopEverything(new Cancelled(reason));
      // In-flight calls were told to stop; close the run even if one does not answer in time.
      setTimeout(() => void this.finish(), this.init.settings.cancelGraceMs).unref();
      void this.settle();
    }
    return { status: 'cancelled', released: [] };
  }

  /** This replica gives the run up (shutdown, lost lease): stop work, write nothing more. */
  abandon(): void {
    if (this.closed) return;
    const end: RunEnd = {
      status: 'interrupted',
      type: 'interrupted',
      data: { message: 'the executor replica running it stopped' },
    };
    const stopping = this.phase;
    this.phase = { kind: 'closed', end };
    this.syncClock();
    this.stopEverything(new Cancelled('the executor stopped'), stopping);
    this.init.onClosed(this.runId);
    this.settledWith?.(end);
  }

  /**
   * The new run's row was not written (refused, or the database or the bus failed): nothing of the
   * run happened, so this replica gives it up like `abandon`, and what its work then meets (`err`,
   * from every emit) is expected, not a crash.
   */
  unwritten(err: unknown): void {
    this.writeError = err;
    this.abandon();
  }

  /**
   * The writer stopped. With a lost lease another replica has the run: give it up. Otherwise the log
   * refused an event (a bug, or Postgres down): nothing more can be recorded, so in-flight work is
   * stopped and the run ends with an `error` saying why — not abandoned to be found interrupted.
   */
  writerFailed(err: unknown): void {
    this.writeError = err;
    const leaseLost = err instanceof LeaseLostError;
    this.init.logger.error(
      { runId: this.runId, err: (err as Error).message, leaseLost },
      leaseLost
        ? 'run lease lost; giving the run up on this replica'
        : 'run log write failed; ending the run',
    );
    if (leaseLost) return this.abandon();
    if (this.closed || this.logFailure !== undefined) return;
    this.logFailure = `the run was stopped: its log could not store an event (${(err as Error).message}); what happened after the last stored event is not recorded`;
    this.stopEverything(new Cancelled('the run log failed'));
    // A finish already under way (its own write failed) ends the run itself.
    void this.finish();
  }

  /** The driver's own work threw: a failed write is handled already (writerFailed); anything else is a bug. */
  crashed(err: unknown): void {
    if (this.writeError !== undefined && err === this.writeError) return;
    this.init.logger.error(
      { runId: this.runId, err: (err as Error).message, stack: (err as Error).stack },
      'run driver failed',
    );
    this.abandon();
  }

  // ── execution ───────────────────────────────────────────────────────────────────────────────

  private execute(plan: AgentPlan): void {
    // A cancel or a failed write while the plan was being announced: the run is ending already.
    if (this.phase.kind === 'finishing' || this.closed) return;
    this.phase = { kind: 'running', plan };
    this.status = 'running';
    for (const step of plan.steps) if (!this.states.has(step.id)) this.states.set(step.id, 'waiting');
    // Written in order with what follows (the steps' starts) in one batch: nothing here waits on it.
    let reused = 0;
    for (const step of plan.steps) {
      const kept = this.reusableFor(step);
      if (!kept || this.states.get(step.id) !== 'waiting') continue;
      this.states.set(step.id, 'done');
      this.results.set(step.id, kept.result);
      const shown = capResult(kept.result, this.init.settings.resultLimitBytes);
      void this.init.writer.emit('step_complete', {
        stepId: step.id,
        tool: step.tool,
        attempt: 0,
        result: shown.value,
        truncated: kept.truncated || shown.truncated,
        ...(shown.encoded ? { encoded: shown.encoded } : {}),
        reused: true,
      });
      reused++;
    }
    void this.init.writer.emit('run_started', { steps: plan.steps.length, reused }, { status: 'running' });
    this.pump();
  }

  private reusableFor(step: PlanStep): ReusableStep | undefined {
    const kept = this.reusable.get(step.id);
    return kept && kept.tool === step.tool && kept.plannedArguments === JSON.stringify(step.arguments)
      ? kept
      : undefined;
  }

  private count(state: StepState): number {
    let n = 0;
    for (const s of this.states.values()) if (s === state) n++;
    return n;
  }

  /** Starts every ready step the run's limit allows, or closes the run when nothing is left. */
  private pump(): void {
    if (this.phase.kind !== 'running') return;
    const { plan } = this.phase;
    if (this.failure === undefined && this.stopping === undefined) {
      const limit = this.init.config.limits.maxParallelSteps;
      let active = this.count('running');
      plan.steps.forEach((step, index) => {
        if (active >= limit || this.states.get(step.id) !== 'waiting') return;
        if (!step.dependsOn.every((d) => this.states.get(d) === 'done')) return;
        this.states.set(step.id, 'running');
        active++;
        void this.runStep(step, index);
      });
    }
    this.syncClock();
    void this.settle();
  }

  /** Closes the run once nothing is in flight and the outcome is known. */
  private async settle(): Promise<void> {
    const { phase } = this;
    if (phase.kind === 'finishing' || phase.kind === 'closed') return;
    // Steps at a refused gate are still unwinding (they record their own end first).
    if (this.count('running') > 0 || (this.stopping !== undefined && this.count('gated') > 0)) return;
    if (this.stopping !== undefined) return this.finish();
    if (phase.kind !== 'running') return;
    if (this.failure !== undefined) {
      if (this.stepGates.size === 0) return this.finish();
      return;
    }
    if (phase.plan.steps.every((s) => this.states.get(s.id) === 'done')) return this.finish();
  }

  private runStep(step: PlanStep, index: number): void {
    if (step.pinned) return this.servePinned(step);
    if (this.phase.kind !== 'running') return;
    const { plan } = this.phase;
    void this.steps.run(
      step,
      index,
      plan.steps.map((s) => s.id),
      this.tools.get(step.tool),
      this.results,
    );
  }

  /** Parks a step at its approval gate until `approve` releases it (or the run stops). */
  private async awaitApproval(
    step: PlanStep,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    decision: PermissionDecision,
  ): Promise<void> {
    const { writer } = this.init;
    this.states.set(step.id, 'gated');
    const waiting = new Promise<void>((release, refuse) => this.stepGates.set(step.id, { release, refuse }));
    this.status = 'awaiting_step_approval';
    this.syncClock();
    const shown = capResult(args, this.init.settings.resultLimitBytes);
    await writer.emit(
      'step_approval_requested',
      {
        gate: 'step',
        stepId: step.id,
        tool: step.tool,
        effect: tool.effect,
        arguments: shown.value,
        ...(shown.truncated ? { argumentsTruncated: true } : {}),
        ...(shown.encoded ? { argumentsEncoded: shown.encoded } : {}),
        reason: decision.reason,
        permission: decision,
      },
      { status: 'awaiting_step_approval', usage: this.meter.usage() },
    );
    void this.settle();
    await waiting;
    this.states.set(step.id, 'running');
    this.syncClock();
    this.status = this.stepGates.size ? 'awaiting_step_approval' : 'running';
    await writer.emit('step_approved', { stepId: step.id }, { status: this.status });
  }

  /** A step's outcome, as soon as the step runner knows it. */
  private stepEnded(step: PlanStep, outcome: StepOutcome): void {
    this.stepGates.delete(step.id);
    switch (outcome.kind) {
      case 'completed':
        this.results.set(step.id, outcome.value);
        this.states.set(step.id, 'done');
        break;
      case 'cancelled':
        this.states.set(step.id, 'cancelled');
        break;
      case 'failed':
        this.states.set(step.id, 'failed');
        if (this.failure !== undefined) break;
        this.failure = {
          message: `step ${step.id} (${step.tool}) failed: ${outcome.message}`,
          code: outcome.code,
          stepId: step.id,
        };
        // Nothing new starts; steps waiting at a gate will not run.
        for (const [id, gate] of [...this.stepGates]) {
          this.stepGates.delete(id);
          gate.refuse(new Cancelled(`the run failed at step ${step.id}`));
        }
        break;
    }
    this.pump();
  }

  /** A pinned step: its result is served as pinned, the tool is not called, the step stays in the graph. */
  private servePinned(step: PlanStep): void {
    const result = step.pinned?.result ?? null;
    const kept = capResult(result, this.init.settings.resultLimitBytes);
    this.init.writer
      .emit('step_complete', {
        stepId: step.id,
        tool: step.tool,
        attempt: 0,
        result: kept.value,
        truncated: kept.truncated,
        ...(kept.encoded ? { encoded: kept.encoded } : {}),
        pinned: true,
      })
      .catch(() => undefined);
    this.results.set(step.id, result);
    this.states.set(step.id, 'done');
    queueMicrotask(() => this.pump()); // not inside the pump that started it
  }

  /** Adopts an approver's edit (see `editedPlan`); steps in `fixed` must not change. */
  private async adoptEdit(body: unknown, fixed: ReadonlySet<string>): Promise<AgentPlan> {
    this.tools = await this.init.catalog();
    const phase = this.phase;
    if (phase.kind !== 'awaiting-approval' && phase.kind !== 'running')
      throw new AppError('conflict', `run ${this.runId} is ${this.status}; nothing waits for approval`);
    const plan = editedPlan({
      current: phase.plan,
      body,
      fixed,
      tools: this.tools,
      inputNames: Object.keys(this.init.inputs),
      readOnly: this.init.config.capabilityMode === 'read-only',
    });
    const kept = new Set(plan.steps.map((s) => s.id));
    for (const id of [...this.states.keys()]) if (!kept.has(id)) this.states.delete(id);
    if (phase.kind === 'running') {
      for (const step of plan.steps) if (!this.states.has(step.id)) this.states.set(step.id, 'waiting');
      this.phase = { kind: 'running', plan };
    } else {
      this.phase = { ...phase, plan };
    }
    await this.init.writer.emit('plan_ready', { plan, edited: true }, { plan });
    return plan;
  }

  // ── budget ──────────────────────────────────────────────────────────────────────────────────

  /** Counts a tool call about to be made; false (and the run stops) when the budget has none left. */
  private admitToolCall(): boolean {
    const crossed = this.meter.admitToolCall();
    if (crossed) this.stopForBudget(crossed);
    return crossed === undefined;
  }

  /**
   * The wall clock runs while the run works: not at the plan gate, not while every step in flight
   * waits at a gate or for a person's input, and not once the run is ending. While it runs, a timer stops the run when the
   * working time is spent.
   */
  private syncClock(): void {
    const { kind } = this.phase;
    const idle =
      kind === 'awaiting-approval' ||
      kind === 'finishing' ||
      kind === 'closed' ||
      ((this.stepGates.size > 0 || this.asking.size > 0) && this.count('running') - this.asking.size <= 0);
    if (idle) {
      this.meter.stop();
      clearTimeout(this.wallTimer);
      this.wallTimer = undefined;
      return;
    }
    this.meter.start();
    this.armWallTimer();
  }

  private armWallTimer(): void {
    const left = this.meter.wallLeftMs();
    if (left === undefined || this.wallTimer !== undefined) return;
    this.wallTimer = setTimeout(() => {
      this.wallTimer = undefined;
      if (!this.meter.running) return;
      if ((this.meter.wallLeftMs() ?? 1) > 0) return this.armWallTimer();
      this.stopForBudget('maxWallMs');
    }, left);
    this.wallTimer.unref();
  }

  /**
   * A limit was crossed: nothing new starts, in-flight calls are told to stop (as a cancel does),
   * and the run ends with `budget_exceeded` naming the limit and the figures.
   */
  private stopForBudget(limit: BudgetLimit): void {
    const { kind } = this.phase;
    if (kind === 'finishing' || kind === 'closed' || this.stopping !== undefined) return;
    // A run failing already ends with that failure.
    if (this.failure !== undefined) return;
    this.failure = this.meter.exceeded(limit);
    this.budgetStop = this.failure.message;
    this.init.logger.info({ runId: this.runId, limit, usage: this.meter.usage() }, 'run budget exceeded');
    this.stopEverything(new Cancelled(this.budgetStop));
    // In-flight calls were told to stop; close the run even if one does not answer in time.
    setTimeout(() => void this.finish(), this.init.settings.cancelGraceMs).unref();
    void this.settle();
  }

  // ── endings ─────────────────────────────────────────────────────────────────────────────────

  /** `from`: the phase the run stops in (abandon has closed it already). */
  private stopEverything(reason: Error, from: RunPhase = this.phase): void {
    this.abort.abort(reason);
    if (from.kind === 'awaiting-approval') from.gate.refuse(reason);
    for (const [id, gate] of [...this.stepGates]) {
      this.stepGates.delete(id);
      gate.refuse(reason);
    }
    for (const invocationId of this.invocations.values())
      this.init.bus.emit(Events.toolCancel, { invocationId });
  }

  private async fail(failure: RunFailed): Promise<void> {
    this.failure = failure;
    await this.finish();
  }

  /** Writes the run's terminal event (with the row's final state) and closes it on this replica. */
  private async finish(): Promise<void> {
    const from = this.phase;
    if (from.kind === 'finishing' || from.kind === 'closed') return;
    const plan = planOf(from);
    this.phase = { kind: 'finishing', plan };
    this.syncClock();
    if (this.logFailure === undefined) {
      const { end, update } = this.ending(from.kind === 'running' ? from.plan : undefined);
      try {
        await this.init.writer.emit(end.type, end.data, {
          ...update,
          usage: this.meter.usage(),
          finished: true,
          release: true,
        });
        return this.close(end);
      } catch {
        if (this.closed) return; // the lease was lost: the run was given up
        // The log refused the terminal event: writerFailed has said why.
      }
    }
    this.status = 'failed';
    try {
      const data = await this.init.writer.close(this.logFailure ?? 'the run log failed');
      this.close({ type: 'error', data });
    } catch (err) {
      this.init.logger.error(
        { runId: this.runId, err: (err as Error).message },
        'could not record the end of a run; it is marked interrupted once its lease runs out',
      );
      this.abandon();
    }
  }

  /** The terminal event the run's state calls for, and the row change that goes with it. */
  /** `completed`: the plan of a run that was running (only such a run can complete). */
  private ending(completed: AgentPlan | undefined): { end: TerminalRunEvent; update: RunUpdate } {
    if (this.cancelReason !== undefined) {
      this.status = 'cancelled';
      return {
        end: { type: 'cancelled', data: { message: this.cancelReason } },
        update: { status: 'cancelled', error: this.cancelReason },
      };
    }
    if (this.failure !== undefined) {
      this.status = 'failed';
      const data = { ...this.failure, message: storableText(this.failure.message) };
      return { end: { type: 'error', data }, update: { status: 'failed', error: data.message } };
    }
    if (!completed) {
      this.status = 'failed';
      const message = 'the run ended before it ran its plan';
      return {
        end: { type: 'error', data: { message, code: 'internal' } },
        update: { status: 'failed', error: message },
      };
    }
    const plan = completed;
    const needed = new Set(plan.steps.flatMap((s) => s.dependsOn));
    const sinks = plan.steps
      .filter((s) => !needed.has(s.id))
      .map((s) => ({
        id: s.id,
        kept: capResult(this.results.get(s.id), this.init.settings.resultLimitBytes),
      }));
    const results = Object.fromEntries(sinks.map((s) => [s.id, s.kept.value]));
    const truncated = sinks.filter((s) => s.kept.truncated).map((s) => s.id);
    const encoded = sinks.filter((s) => s.kept.encoded).map((s) => s.id);
    const summary = `completed ${plan.steps.length} step${plan.steps.length === 1 ? '' : 's'}: ${[
      ...new Set(plan.steps.map((s) => s.tool)),
    ].join(', ')}`;
    const data: RunCompleted = {
      summary,
      result: sinks.length === 1 ? sinks[0]?.kept.value : results,
      results,
      ...(truncated.length ? { truncated } : {}),
      ...(encoded.length ? { encoded } : {}),
    };
    this.status = 'completed';
    return { end: { type: 'complete', data }, update: { status: 'completed', summary, error: null } };
  }

  private close(terminal: TerminalRunEvent): void {
    const end: RunEnd = { ...terminal, status: this.status };
    this.phase = { kind: 'closed', end };
    this.syncClock();
    this.init.onClosed(this.runId);
    this.settledWith?.(end);
    if (terminal.type === 'complete')
      this.init.observe('run_complete', { runId: this.runId, ...terminal.data });
    else if (terminal.type === 'error')
      this.init.observe('run_error', { runId: this.runId, ...terminal.data });
  }
}
