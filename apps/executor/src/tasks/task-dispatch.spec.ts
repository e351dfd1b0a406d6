import { Writable } from 'node:stream';
import {
  AppError,
  Events,
  Rpc,
  RunConfig,
  type AgentPlan,
  type FinishTask,
  type TaskBody,
  type InvokeToolRequest,
  type RunEvent,
  type RunEventBody,
  type RunEventType,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { LeaseLostError } from '@switchyard/server-db-runs';
import { createLogger, type CallContext } from '@switchyard/server-observability';
import { PublishedWorkflows } from '@switchyard/server-runtime';
import { InMemoryBus, ManualClock, waitFor } from '@switchyard/testing';
import { RunDriver } from '../runs/run-driver';
import { RunWriter } from '../runs/engine/run-writer';
import { RunEventOutbox } from '../runs/engine/run-event-outbox';
import type { WorkflowLaunch } from '../runs/start-run.usecase';
import { firstWork } from '../runs/run-launcher';
import { WorkflowRuns } from '../workflows/workflow-runs.service';
import type { HandedTask, TaskJobSource } from './task-jobs';
import { KILL_MEMORY_MS, TASK_ERROR_LIMIT, TaskWorker, type WorkerTime } from './task-worker';

const TASK = '00000000-0000-4000-8000-0000000000a1';
const OTHER_TASK = '00000000-0000-4000-8000-0000000000a2';
const OWNER = '00000000-0000-4000-8000-0000000000b1';
const WORKFLOW = '00000000-0000-4000-8000-0000000000c1';
const RESULT_LIMIT = 1_000;

const logger = createLogger({
  service: 'test',
  level: 'silent',
  instanceId: 'test',
  destination: new Writable({ write: (_c, _e, done) => done() }),
});

/** One run's log in memory; `leaseLost` makes every later append fail as a lost lease. */
class MemoryLog {
  readonly events: RunEvent[] = [];
  leaseLost = false;
  /** The first write waits for this (the run's row on its way), and `writing` says it began. */
  firstWrite: Promise<void> | undefined;
  writing = false;
  private readonly waiters: Array<() => void> = [];

  async append(runId: string, batch: readonly RunEventBody[]): Promise<RunEvent[]> {
    if (this.leaseLost) throw new LeaseLostError(`run ${runId} is no longer held by this replica`);
    this.writing = true;
    const held = this.firstWrite;
    this.firstWrite = undefined;
    await held;
    const stored = batch.map((e, i) => ({ ...e, runId, seq: this.events.length + i + 1, at: '' }));
    this.events.push(...stored);
    for (const wake of this.waiters.splice(0)) wake();
    return stored;
  }

  async fail(): Promise<RunEvent[]> {
    throw new Error('not expected in these tests');
  }

  async until(type: RunEventType): Promise<void> {
    while (!this.events.some((e) => e.type === type)) await new Promise<void>((r) => this.waiters.push(r));
  }

  get types(): RunEventType[] {
    return this.events.map((e) => e.type);
  }
}

/** The scheduler's queue as a test's hand: `hand` runs one body to its end. */
class HandJobs implements TaskJobSource {
  private body: ((job: HandedTask) => Promise<void>) | undefined;
  closed = false;

  start(body: (job: HandedTask) => Promise<void>): void {
    this.body = body;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  hand(job: HandedTask): Promise<void> {
    if (!this.body) throw new Error('the worker has not started');
    return this.body(job);
  }
}

/** Time moved by hand: a report's back-off is recorded and passes at once. */
class HandTime implements WorkerTime {
  readonly clock = new ManualClock();
  readonly sleeps: number[] = [];

  now(): number {
    return this.clock.now().getTime();
  }

  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.clock.advance(ms);
  }
}

/** A registry call the test holds: `arrived` once the call is made, `release` answers it. */
function held() {
  let arrive!: () => void;
  let answer!: (result: ToolResult) => void;
  const arrived = new Promise<void>((r) => (arrive = r));
  const reply = new Promise<ToolResult>((r) => (answer = r));
  return {
    call: (): Promise<ToolResult> => {
      arrive();
      return reply;
    },
    arrived,
    release: answer,
  };
}

type Answer = ToolResult | AppError | (() => Promise<ToolResult>);
const ok = (json: unknown): ToolResult => ({
  content: [{ type: 'json', json }],
  isError: false,
  truncated: false,
});

const reader: ToolDescriptor = {
  name: 'reader',
  description: '',
  inputSchema: {},
  effect: 'read',
  idempotent: true,
  source: 'builtin',
};
const plan: AgentPlan = {
  steps: [{ id: 's', tool: 'reader', arguments: { n: '{{inputs.n}}' }, dependsOn: [], description: '' }],
};
const published = {
  workflowId: WORKFLOW,
  version: 3,
  name: 'nightly',
  inputSchema: { properties: { n: { type: 'integer' } }, required: ['n'] },
  plan,
};

interface Launched {
  readonly def: WorkflowLaunch;
  readonly ctx: CallContext;
  readonly driver: RunDriver;
  readonly log: MemoryLog;
}

/**
 * Task dispatch on the in-memory bus: the real TaskWorker and WorkflowRuns, the scheduler's and the
 * registry's RPCs answered by the test, and each run a real RunDriver writing to a log in memory
 * (started the way StartRun starts a workflow's run: its plan announced, no review).
 */
function setup(opts: { answers?: Answer[]; firstWrite?: Promise<void> } = {}) {
  const answers = opts.answers ?? [];
  const bus = new InMemoryBus();
  const calls: InvokeToolRequest[] = [];
  bus.answer(Rpc.registry.invoke, async (req) => {
    calls.push(req);
    const next = answers.shift();
    if (!next) throw new Error('the test gave no answer for this call');
    if (next instanceof AppError) throw next;
    return typeof next === 'function' ? next() : next;
  });
  const finished: FinishTask[] = [];
  /** What the scheduler's dispatch puts in a task's job (the task's row). */
  let body: TaskBody = {
    ownerId: OWNER,
    workflowId: WORKFLOW,
    inputs: { n: 7 },
    permissionMode: 'approve-for-me',
  };
  let dispatched = 0;
  const scheduler = {
    /** How the scheduler answers the claim of a job from a scheduler of the previous version. */
    claim: {
      go: true,
      task: {
        ownerId: OWNER,
        workflowId: WORKFLOW,
        inputs: { n: 7 },
        permissionMode: 'approve-for-me' as const,
      },
    } as {
      go: boolean;
      reason?: string;
      task?: {
        ownerId: string;
        workflowId: string;
        inputs: Record<string, unknown>;
        permissionMode: 'approve-for-me';
      };
    },
    /** Failures the finish RPC answers with, one per attempt, before it accepts. */
    finishFailures: [] as AppError[],
    /** While set, a finish report waits for it before it is answered. */
    finishHeld: undefined as Promise<void> | undefined,
    /** The ends of each finish report accepted, by report. */
    reports: [] as string[][],
  };
  bus.answer(Rpc.tasks.claimBatch, ({ ids }) => ({ claims: ids.map(() => scheduler.claim) }));
  bus.answer(Rpc.tasks.finishBatch, async ({ ends }) => {
    const failure = scheduler.finishFailures.shift();
    if (failure) throw failure;
    await scheduler.finishHeld;
    finished.push(...ends);
    scheduler.reports.push(ends.map((e) => e.id));
    return {};
  });
  let resolveWorkflow: () => unknown = () => published;
  bus.answer(Rpc.workflows.resolve, async () => {
    const answer = await resolveWorkflow();
    if (answer instanceof AppError) throw answer;
    return answer as typeof published;
  });

  const launched: Launched[] = [];
  const starter = {
    startWorkflow: async (def: WorkflowLaunch, ctx: CallContext): Promise<RunDriver> => {
      // A task's run has the id its claim named; other runs are numbered.
      const runId = def.runId ?? `00000000-0000-4000-8000-${String(launched.length + 1).padStart(12, '0')}`;
      const log = new MemoryLog();
      log.firstWrite = opts.firstWrite;
      const tools = new Map([[reader.name, reader]]);
      const writer: RunWriter = new RunWriter(log, new RunEventOutbox(bus, 0), runId, 'replica', (err) =>
        driver.writerFailed(err),
      );
      const driver: RunDriver = new RunDriver(
        {
          runId,
          ctx,
          goal: def.goal,
          config: RunConfig.parse(def.config),
          inputs: def.inputs,
          files: [],
          tools,
          writer,
          inputWaits: {
            timeoutMs: 60_000,
            ask: () => Promise.reject(new Error('this test asks nobody')),
            declined: () => Promise.reject(new Error('this test asks nobody')),
          },
          bus,
          logger,
          settings: {
            resultLimitBytes: RESULT_LIMIT,
            planTimeoutMs: 1_000,
            defaultStepTimeoutMs: 1_000,
            invokeGraceMs: 0,
            localTools: false,
            cancelGraceMs: 1_000,
          },
          catalog: async () => tools,
          onClosed: () => undefined,
          gate: () => ({ decision: 'allow', reason: 'reader only reads' }),
          observe: () => undefined,
        },
        'planning',
      );
      launched.push({ def, ctx, driver, log });
      // As the launcher does: the driver is told before any of its work.
      def.attach?.(driver);
      void firstWork(
        driver,
        { plan: def.plan as AgentPlan, ...(def.beforeWork ? { beforeWork: def.beforeWork } : {}) },
        false,
      ).catch((err: unknown) => driver.crashed(err));
      return driver;
    },
  };
  const config = { tools: { timeoutMs: 60_000 } } as AppConfig;
  const resolver = new PublishedWorkflows(bus);
  resolver.onModuleInit();
  const workflows = new WorkflowRuns(starter, resolver, bus, config, logger);
  workflows.onModuleInit();
  const jobs = new HandJobs();
  const time = new HandTime();
  const worker = new TaskWorker(workflows, bus, jobs, time, logger);
  worker.onApplicationBootstrap();
  const schedulerTraffic = () =>
    bus.traffic.requests.filter((r) => r.subject.startsWith('scheduler.')).map((r) => r.subject);
  return {
    bus,
    calls,
    finished,
    scheduler,
    launched,
    workflows,
    worker,
    jobs,
    time,
    schedulerTraffic,
    /** The id of the n-th run started (1-based): the one its job or its claim named. */
    runOf: (n: number) => launched[n - 1]?.driver.runId,
    /** Hands over a task as the scheduler dispatches it: running already, its body and run id in the job. */
    hand: (taskId: string, over: Partial<HandedTask> = {}) =>
      jobs.hand({
        taskId,
        runId: `00000000-0000-4000-8000-${String(++dispatched).padStart(4, '0')}0000d15a`,
        task: body,
        attempt: 1,
        ...over,
      }),
    /** Hands over a task as a scheduler of the previous version did: by its id, to be claimed. */
    handById: (taskId: string) => jobs.hand({ taskId, attempt: 1 }),
    /** Changes what the next dispatched jobs carry. */
    dispatchWith: (next: Partial<TaskBody>) => (body = { ...body, ...next }),
    resolveWith: (f: () => unknown) => (resolveWorkflow = f),
  };
}

/** A task killed once its run's step had started: the run's log says so, and the task ended cancelled. */
function expectKilledAfterItsStepStarted(t: ReturnType<typeof setup>): void {
  expect(t.launched[0]?.log.types).toEqual([
    'plan_ready',
    'run_started',
    'step_start',
    'cancel_requested',
    'step_failed',
    'cancelled',
  ]);
  expect(t.finished).toEqual([
    { id: TASK, state: 'cancelled', runId: t.runOf(1), error: 'the task was killed' },
  ]);
}

describe('TaskWorker: a task body on the in-memory bus', () => {
  it('runs a dispatched task at once: its published workflow, unattended, under the run id its job names; reports its result', async () => {
    const t = setup({ answers: [ok({ rows: 3 })] });
    await t.hand(TASK);
    // No claim: the scheduler moved the task to running as it dispatched it, with the run's id.
    expect(t.schedulerTraffic()).toEqual(['scheduler.tasks.finishBatch']);
    expect(t.bus.traffic.requests.find((r) => r.subject === Rpc.workflows.resolve.subject)?.payload).toEqual({
      id: WORKFLOW,
      version: 'published',
    });
    const [run] = t.launched;
    expect(run?.ctx).toEqual({ correlationId: `task-${TASK}`, ownerId: OWNER, role: 'user' });
    expect(run?.driver.runId).toBe('00000000-0000-4000-8000-00010000d15a');
    expect(run?.def).toEqual({
      runId: run?.driver.runId,
      attach: expect.any(Function),
      beforeWork: expect.any(Function),
      goal: 'nightly',
      plan,
      inputNames: ['n'],
      inputs: { n: 7 },
      config: { permissionMode: 'approve-for-me', planApproval: false, unattended: true },
      source: { workflowId: WORKFLOW, version: 3, taskId: TASK },
    });
    expect(t.calls.map((c) => c.arguments)).toEqual([{ n: 7 }]);
    expect(run?.log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_complete', 'complete']);
    expect(t.finished).toEqual([
      { id: TASK, state: 'completed', runId: t.runOf(1), output: { rows: 3 }, error: null },
    ]);
  });

  it("a job from the previous version's scheduler: claims the task naming its run, then runs it under that id", async () => {
    const t = setup({ answers: [ok({ rows: 3 })] });
    await t.handById(TASK);
    // No attach: the claim carried the run's id, so the scheduler knew the run from the start.
    expect(t.schedulerTraffic()).toEqual(['scheduler.tasks.claimBatch', 'scheduler.tasks.finishBatch']);
    const claimed = t.bus.traffic.requests.find((r) => r.subject === Rpc.tasks.claimBatch.subject)?.payload;
    expect(claimed).toEqual({ ids: [TASK], runIds: [expect.stringMatching(/^[0-9a-f-]{36}$/)] });
    const [run] = t.launched;
    expect(run?.driver.runId).toBe((claimed as { runIds: string[] }).runIds[0]);
    expect(run?.def.inputs).toEqual({ n: 7 });
    expect(t.finished).toEqual([
      { id: TASK, state: 'completed', runId: t.runOf(1), output: { rows: 3 }, error: null },
    ]);
  });

  it('a job BullMQ hands on (the replica that started it stopped) is reported interrupted and not started again', async () => {
    const t = setup();
    await t.hand(TASK, { runId: '00000000-0000-4000-8000-0000000000e1', attempt: 2 });
    expect(t.launched).toEqual([]);
    expect(t.calls).toEqual([]);
    expect(t.schedulerTraffic()).toEqual(['scheduler.tasks.finishBatch']);
    // No run named: the one the task has recorded (its first body's) stays the task's.
    expect(t.finished).toEqual([
      {
        id: TASK,
        state: 'interrupted',
        runId: null,
        error: 'the executor running this task stopped; it was not started again',
      },
    ]);
  });

  it('reports a failed run as failed with its message; the code stays on the run', async () => {
    const t = setup({ answers: [new AppError('not_found', 'no table named rows')] });
    await t.hand(TASK);
    const [run] = t.launched;
    expect(run?.log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_failed', 'error']);
    expect(run?.log.events.at(-1)?.data).toEqual({
      message: 'step s (reader) failed: no table named rows',
      code: 'not_found',
      stepId: 's',
    });
    expect(t.finished).toEqual([
      {
        id: TASK,
        state: 'failed',
        runId: t.runOf(1),
        error: 'step s (reader) failed: no table named rows',
      },
    ]);
  });

  it('reports a workflow that cannot start (unpublished, inputs that do not fit) as failed without a run', async () => {
    const t = setup();
    t.resolveWith(() => new AppError('conflict', 'workflow "nightly" has no published version'));
    await t.hand(TASK);
    t.resolveWith(() => published);
    t.dispatchWith({ inputs: { n: 'seven' } });
    await t.hand(OTHER_TASK);
    expect(t.launched).toEqual([]);
    expect(t.schedulerTraffic()).toEqual(['scheduler.tasks.finishBatch', 'scheduler.tasks.finishBatch']);
    expect(t.finished).toEqual([
      { id: TASK, state: 'failed', runId: null, error: 'workflow "nightly" has no published version' },
      {
        id: OTHER_TASK,
        state: 'failed',
        runId: null,
        error: 'the inputs do not fit workflow "nightly": inputs.n: expected integer, got string',
      },
    ]);
  });

  it('starts nothing and reports nothing when the claim of a job by id is refused (killed meanwhile, or handed on)', async () => {
    const t = setup();
    t.scheduler.claim = { go: false, reason: 'interrupted: its first body stopped' };
    await t.handById(TASK);
    expect(t.bus.traffic.requests.map((r) => r.subject)).toEqual(['scheduler.tasks.claimBatch']);
    expect(t.launched).toEqual([]);
    expect(t.finished).toEqual([]);
  });

  it('a kill while the run is calling a tool cancels the run: the call is told to stop, the task ends cancelled', async () => {
    const call = held();
    const t = setup({ answers: [call.call] });
    t.bus.on(Events.toolCancel, () => call.release({ ...ok(null), isError: true }));
    const body = t.hand(TASK);
    await call.arrived;
    t.bus.emit(Events.taskKill, { id: TASK });
    await body;
    expect(t.bus.sent(Events.toolCancel)).toEqual([{ invocationId: `${t.runOf(1)}:s:1` }]);
    expectKilledAfterItsStepStarted(t);
  });

  it("a kill heard while the run's first write is on its way cancels the run before its tool is called", async () => {
    let stored!: () => void;
    const t = setup({ answers: [], firstWrite: new Promise<void>((r) => (stored = r)) });
    const body = t.hand(TASK);
    await waitFor(async () => t.launched[0]?.log.writing === true, 5_000);
    // The driver is the worker's already (attach): the kill cancels the run itself.
    t.bus.emit(Events.taskKill, { id: TASK });
    await t.bus.flush();
    stored();
    await body;
    expect(t.calls).toEqual([]);
    expectKilledAfterItsStepStarted(t);
  });

  it('a kill that arrives before the run exists is remembered and cancels the run before it does anything', async () => {
    const t = setup({ answers: [] });
    let resolved!: () => void;
    const gate = new Promise<void>((r) => (resolved = r));
    let asked!: () => void;
    const resolving = new Promise<void>((r) => (asked = r));
    t.resolveWith(async () => {
      asked();
      await gate;
      return published;
    });
    const body = t.hand(TASK);
    await resolving;
    t.bus.emit(Events.taskKill, { id: TASK });
    await t.bus.flush();
    resolved();
    await body;
    expect(t.finished).toEqual([
      { id: TASK, state: 'cancelled', runId: t.runOf(1), error: 'the task was killed' },
    ]);
    expect(t.calls).toEqual([]);
    // Asked before the run did anything: cancelled without a plan run or a step started.
    expect(t.launched[0]?.log.types).toEqual(['cancel_requested', 'cancelled']);
  });

  it('forgets a kill for a task it never started once the kill memory has passed', async () => {
    const t = setup({ answers: [ok('ran')] });
    t.bus.emit(Events.taskKill, { id: TASK });
    await t.bus.flush();
    t.time.clock.advance(KILL_MEMORY_MS + 1);
    await t.hand(TASK);
    expect(t.finished).toEqual([
      { id: TASK, state: 'completed', runId: t.runOf(1), output: 'ran', error: null },
    ]);
  });

  it('reports a run given up by its replica (shutdown, lost lease) as interrupted', async () => {
    const first = held();
    const second = held();
    const t = setup({ answers: [first.call, second.call] });
    const shutdown = t.hand(TASK);
    await first.arrived;
    t.launched[0]?.driver.abandon(); // what ActiveRuns does to every run when the replica stops
    await shutdown;
    const lost = t.hand(OTHER_TASK);
    await second.arrived;
    const run = t.launched[1];
    if (!run) throw new Error('the second run did not start');
    run.log.leaseLost = true;
    second.release(ok('late'));
    await lost;
    expect(t.finished).toEqual([
      {
        id: TASK,
        state: 'interrupted',
        runId: t.runOf(1),
        error: 'the executor replica running it stopped',
      },
      {
        id: OTHER_TASK,
        state: 'interrupted',
        runId: t.runOf(2),
        error: 'the executor replica running it stopped',
      },
    ]);
    expect(run.log.types).toEqual(['plan_ready', 'run_started', 'step_start']);
    // The abandoned run's call is still held: answered, it leaves nothing behind the test.
    first.release(ok('too late'));
  });

  it('reports the output as the run capped it, and an over-long error cut to what a task keeps', async () => {
    const big = 'x'.repeat(5 * RESULT_LIMIT);
    const t = setup({
      answers: [ok(big), new AppError('not_found', `missing: ${'y'.repeat(2 * TASK_ERROR_LIMIT)}`)],
    });
    await t.hand(TASK);
    await t.hand(OTHER_TASK);
    const [capped, failed] = t.finished;
    expect(capped).toEqual({
      id: TASK,
      state: 'completed',
      runId: t.runOf(1),
      output: JSON.stringify(big).slice(0, RESULT_LIMIT),
      outputTruncated: true,
      error: null,
    });
    expect(t.launched[0]?.log.events.at(-1)?.data).toMatchObject({ truncated: ['s'] });
    expect(failed?.state).toBe('failed');
    expect(failed?.error).toHaveLength(TASK_ERROR_LIMIT);
    expect(failed?.error).toBe(`step s (reader) failed: missing: ${'y'.repeat(TASK_ERROR_LIMIT - 34)}…`);
    expect(t.time.sleeps).toEqual([]); // accepted at the first attempt
  });

  it('retries the report while the scheduler is unreachable, backing off, and reports once', async () => {
    const t = setup({ answers: [ok('done')] });
    t.scheduler.finishFailures.push(
      new AppError('unavailable', 'scheduler away'),
      new AppError('unavailable', 'scheduler away'),
      new AppError('timeout', 'no answer in time'),
    );
    await t.hand(TASK);
    expect(t.time.sleeps).toEqual([250, 500, 750]);
    expect(t.schedulerTraffic().filter((s) => s === 'scheduler.tasks.finishBatch')).toHaveLength(4);
    expect(t.finished).toEqual([
      { id: TASK, state: 'completed', runId: t.runOf(1), output: 'done', error: null },
    ]);
  });

  it('reports ends learnt while a report is on its way together, in the next report', async () => {
    const THIRD = '00000000-0000-4000-8000-0000000000a3';
    const t = setup({ answers: [ok(1), ok(2), ok(3)] });
    let release!: () => void;
    t.scheduler.finishHeld = new Promise<void>((r) => (release = r));
    const first = t.hand(TASK);
    await waitFor(() => t.schedulerTraffic().includes('scheduler.tasks.finishBatch'));
    const later = [t.hand(OTHER_TASK), t.hand(THIRD)];
    await waitFor(() => t.launched.filter((l) => l.log.types.includes('complete')).length === 3);
    t.scheduler.finishHeld = undefined;
    release();
    await Promise.all([first, ...later]);
    expect(t.scheduler.reports).toEqual([[TASK], [OTHER_TASK, THIRD]]);
    expect(t.finished.map((f) => [f.id, f.output])).toEqual([
      [TASK, 1],
      [OTHER_TASK, 2],
      [THIRD, 3],
    ]);
  });

  it('resolves a published workflow once for many tasks, and afresh once the planner says it changed', async () => {
    const t = setup({ answers: [ok(1), ok(2), ok(3)] });
    await t.hand(TASK);
    await t.hand(OTHER_TASK);
    const resolves = () => t.bus.traffic.requests.filter((r) => r.subject === Rpc.workflows.resolve.subject);
    expect(resolves()).toHaveLength(1);
    t.bus.emit(Events.workflowsChanged, { ownerId: OWNER, workflowId: WORKFLOW, published: true });
    await t.bus.flush();
    await t.hand('00000000-0000-4000-8000-0000000000a3');
    expect(resolves()).toHaveLength(2);
    expect(t.finished).toHaveLength(3);
  });

  it('does not retry a report the scheduler refuses as invalid', async () => {
    const t = setup({ answers: [ok('done')] });
    t.scheduler.finishFailures.push(new AppError('validation_failed', 'bad report'));
    await t.hand(TASK);
    expect(t.time.sleeps).toEqual([]);
    expect(t.schedulerTraffic().filter((s) => s === 'scheduler.tasks.finishBatch')).toHaveLength(1);
    expect(t.finished).toEqual([]);
  });

  it('stops taking tasks and hearing kills at shutdown', async () => {
    const t = setup({ answers: [ok('ran')] });
    await t.worker.beforeApplicationShutdown();
    expect(t.jobs.closed).toBe(true);
    t.bus.emit(Events.taskKill, { id: TASK });
    await t.bus.flush();
    await t.hand(TASK);
    expect(t.finished).toMatchObject([{ id: TASK, state: 'completed' }]);
  });
});

describe('WorkflowRuns: a published workflow as one tool call', () => {
  const request = (over: Partial<InvokeToolRequest & { invocationId: string; timeoutMs: number }> = {}) => ({
    workflowId: WORKFLOW,
    inputs: { n: 1 },
    ...over,
  });
  const ctx: CallContext = { correlationId: 'c', ownerId: OWNER, role: 'user' };

  it('runs it to the end unattended under "ask" by default and answers its result as JSON', async () => {
    const t = setup({ answers: [ok([1, 2])] });
    expect(await t.workflows.invoke(request(), ctx)).toEqual({
      content: [{ type: 'json', json: { runId: t.runOf(1), result: [1, 2] } }],
      isError: false,
      truncated: false,
    });
    expect(t.launched[0]?.def).toMatchObject({
      config: { permissionMode: 'ask', planApproval: false, unattended: true },
      source: { workflowId: WORKFLOW, version: 3, asTool: true },
    });
  });

  it('answers a failed run as a tool error naming the workflow, run and reason', async () => {
    const t = setup({ answers: [new AppError('forbidden', 'path "/etc" is refused')] });
    expect(await t.workflows.invoke(request({ permissionMode: 'full-access' }), ctx)).toEqual({
      content: [
        {
          type: 'text',
          text: `workflow "nightly" (run ${t.runOf(1)}) failed: step s (reader) failed: path "/etc" is refused`,
        },
      ],
      isError: true,
      truncated: false,
    });
  });

  it('cancels the run when its tool call is cancelled, and when it outlives the call timeout', async () => {
    const cancelled = held();
    const slow = held();
    const t = setup({ answers: [cancelled.call, slow.call] });
    const stopped = { ...ok('stopped'), isError: true };
    t.bus.on(Events.toolCancel, (m) => {
      if (m.invocationId.startsWith(t.runOf(1))) cancelled.release(stopped);
      if (m.invocationId.startsWith(t.runOf(2))) slow.release(stopped);
    });
    const byCaller = t.workflows.invoke(request({ invocationId: 'outer-1' }), ctx);
    await cancelled.arrived;
    t.bus.emit(Events.toolCancel, { invocationId: 'outer-1' });
    expect(await byCaller).toMatchObject({
      content: [
        {
          text: `workflow "nightly" (run ${t.runOf(1)}) cancelled: the tool call running this workflow was cancelled`,
        },
      ],
      isError: true,
    });
    const timedOut = await t.workflows.invoke(request({ timeoutMs: 1 }), ctx);
    expect(timedOut).toMatchObject({
      content: [
        { text: `workflow "nightly" (run ${t.runOf(2)}) cancelled: the workflow did not finish within 1 ms` },
      ],
      isError: true,
    });
    expect(t.launched.map((l) => l.log.types.at(-1))).toEqual(['cancelled', 'cancelled']);
  });

  it('answers a workflow it cannot start as a tool error, and lets a transport failure through', async () => {
    const t = setup();
    t.resolveWith(() => new AppError('not_found', 'no workflow with that id'));
    expect(await t.workflows.invoke(request(), ctx)).toEqual({
      content: [{ type: 'text', text: 'no workflow with that id' }],
      isError: true,
      truncated: false,
    });
    t.resolveWith(() => new AppError('unavailable', 'planner away'));
    await expect(t.workflows.invoke(request(), ctx)).rejects.toMatchObject({ code: 'unavailable' });
    expect(t.launched).toEqual([]);
  });

  it('by hand: runs the asked version with the normal approval policy; inputs that do not fit are refused', async () => {
    const t = setup({ answers: [ok('x')] });
    expect(
      await t.workflows.run(
        WORKFLOW,
        { version: 2, inputs: { n: 1 }, permissionMode: 'ask', planApproval: true },
        ctx,
      ),
    ).toEqual({
      runId: t.runOf(1),
    });
    expect(t.bus.traffic.requests.find((r) => r.subject === Rpc.workflows.resolve.subject)?.payload).toEqual({
      id: WORKFLOW,
      version: 2,
    });
    expect(t.launched[0]?.def.config).toEqual({ permissionMode: 'ask', planApproval: true });
    await expect(
      t.workflows.run(WORKFLOW, { inputs: {}, permissionMode: 'ask', planApproval: true }, ctx),
    ).rejects.toMatchObject({
      code: 'validation_failed',
      issues: [{ path: 'inputs.n', message: 'required' }],
    });
  });
});
