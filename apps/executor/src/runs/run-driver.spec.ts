import { Writable } from 'node:stream';
import {
  AppError,
  Events,
  RunConfig,
  type AgentPlan,
  type Budget,
  type BudgetUsage,
  type PermissionDecision,
  Rpc,
  type InvokeToolRequest,
  type RunEvent,
  type RunEventBody,
  type RunEventOf,
  type RunEventType,
  type ElicitationAsk,
  type ElicitationReply,
  type InputRequest,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import { jsonHoldsUnstorable } from '@switchyard/server-db';
import { LeaseLostError, type RunUpdate } from '@switchyard/server-db-runs';
import { createLogger } from '@switchyard/server-observability';
import { InMemoryBus } from '@switchyard/testing';
import { RunDriver } from './run-driver';
import { RunWriter } from './engine/run-writer';
import { RunEventOutbox } from './engine/run-event-outbox';
import type { InputPort } from '../inputs/input-waits';

const RUN = '00000000-0000-4000-8000-0000000000aa';
const OWNER = '00000000-0000-4000-8000-0000000000bb';

/**
 * The run's log in memory, refusing what Postgres refuses (NUL, half a surrogate pair) the way it
 * does: the whole batch fails. `refuse` makes it refuse batches holding an event of that type too.
 */
class MemoryLog {
  readonly events: RunEvent[] = [];
  readonly rows: RunUpdate[] = [];
  refuse: RunEventType | undefined;
  /** Another replica took the run over: every append from now on fails as a lost lease. */
  leaseLost = false;
  failedWith: string | undefined;
  private readonly waiters: Array<() => void> = [];

  async append(
    runId: string,
    batch: readonly RunEventBody[],
    opts: { update?: RunUpdate } = {},
  ): Promise<RunEvent[]> {
    if (this.leaseLost) throw new LeaseLostError(`run ${runId} is no longer held by this replica`);
    if (jsonHoldsUnstorable(JSON.stringify(batch))) throw new Error('unsupported Unicode escape sequence');
    if (batch.some((e) => e.type === this.refuse)) throw new Error(`the log refuses ${this.refuse}`);
    if (opts.update) this.rows.push(opts.update);
    const stored = batch.map((e, i) => ({ ...e, runId, seq: this.events.length + i + 1, at: '' }));
    this.events.push(...stored);
    for (const wake of this.waiters.splice(0)) wake();
    return stored;
  }

  /** Resolves once an event of `type` is stored. */
  async until(type: RunEventType): Promise<void> {
    while (!this.events.some((e) => e.type === type)) await new Promise<void>((r) => this.waiters.push(r));
  }

  async fail(runId: string, _replica: string, message: string): Promise<RunEvent[]> {
    this.failedWith = message;
    const e: RunEvent = {
      type: 'error',
      data: { message, code: 'internal' },
      runId,
      seq: this.events.length + 1,
      at: '',
    };
    this.events.push(e);
    return [e];
  }

  of<T extends RunEventType>(type: T): Array<RunEventOf<T>> {
    return this.events.filter((e): e is RunEventOf<T> => e.type === type);
  }

  get types(): RunEventType[] {
    return this.events.map((e) => e.type);
  }
}

const data = <E extends { data: unknown }>(events: readonly E[]): Array<E['data']> =>
  events.map((e) => e.data);

/** The tool registry's answers to registry.tools.invoke, in order: a result, a thrown error, or a call to hold. */
type Answer = ToolResult | AppError | (() => Promise<ToolResult>);
const ok = (text: string): ToolResult => ({
  content: [{ type: 'text', text }],
  isError: false,
  truncated: false,
});
const toolError = (text: string): ToolResult => ({
  content: [{ type: 'text', text }],
  isError: true,
  truncated: false,
});

const read: ToolDescriptor = {
  name: 'reader',
  description: '',
  inputSchema: {},
  effect: 'read',
  idempotent: true,
  source: 'builtin',
};
const write: ToolDescriptor = { ...read, name: 'writer', effect: 'write', idempotent: false };
const allow: PermissionDecision = { decision: 'allow', reason: 'full-access' };

/**
 * The replica's input waits in memory: a request is recorded, announced, and settled by the test's
 * `reply` (or by the run stopping: cancel with the reason).
 */
class MemoryInputs implements InputPort {
  readonly timeoutMs = 60_000;
  readonly asked: InputRequest[] = [];
  readonly declines: Array<{ id: string; reason: string }> = [];
  private answer: ((r: ElicitationReply) => void) | undefined;
  /** A reply given before the wait began (the test saw the event before `announce` resolved). */
  private early: ElicitationReply | undefined;

  private row(a: Parameters<InputPort['ask']>[0]): InputRequest {
    return {
      id: `00000000-0000-4000-8000-00000000010${this.asked.length}`,
      ownerId: '00000000-0000-4000-8000-0000000000bb',
      status: 'pending',
      runId: RUN,
      stepId: 'runId' in a.target ? a.target.stepId : null,
      sessionId: null,
      callId: null,
      label: a.label,
      tool: a.tool,
      server: a.server,
      mode: a.request.mode,
      message: a.request.message,
      requestedSchema: a.request.mode === 'form' ? a.request.requestedSchema : null,
      url: a.request.mode === 'url' ? a.request.url : null,
      content: null,
      reason: null,
      answeredBy: null,
      createdAt: '',
      expiresAt: '2030-01-01T00:00:00.000Z',
      answeredAt: null,
    };
  }

  async declined(a: Parameters<InputPort['ask']>[0], reason: string): Promise<InputRequest> {
    const r = this.row(a);
    this.asked.push(r);
    this.declines.push({ id: r.id, reason });
    return r;
  }

  async ask(
    a: Parameters<InputPort['ask']>[0],
    opts: Parameters<InputPort['ask']>[1],
  ): ReturnType<InputPort['ask']> {
    const request = this.row(a);
    this.asked.push(request);
    await opts.announce(request);
    const reply = await new Promise<ElicitationReply | string>((resolve) => {
      if (this.early) return resolve(this.early);
      this.answer = resolve;
      opts.signal.addEventListener('abort', () => resolve(opts.stopReason()), { once: true });
    });
    return typeof reply === 'string'
      ? { request, settled: { reply: { action: 'cancel' }, by: 'platform', reason: reply } }
      : { request, settled: { reply, by: 'person' } };
  }

  reply(r: ElicitationReply): void {
    if (this.answer) this.answer(r);
    else this.early = r;
  }
}

interface Setup {
  readonly answers: Answer[];
  readonly inputs?: InputPort;
  readonly unattended?: boolean;
  /** The gate's decision for every step, or per step id. */
  readonly gate?: PermissionDecision | ((stepId: string) => PermissionDecision);
  readonly log?: MemoryLog;
  readonly planApproval?: boolean;
  readonly budget?: Budget;
  readonly spent?: BudgetUsage;
  /** Local built-ins run in the driver's process (RUN_LOCAL_TOOLS); off unless a test says so. */
  readonly localTools?: boolean;
  readonly stepTimeoutMs?: number;
  readonly extraTools?: readonly ToolDescriptor[];
  /** Collects what the driver logs at error level. */
  readonly errors?: string[];
}

/** A driver on an in-memory bus whose fake registry answers from `answers`, writing to an in-memory log. */
function setup({
  answers,
  gate = allow,
  log = new MemoryLog(),
  planApproval = false,
  budget,
  spent,
  inputs = new MemoryInputs(),
  unattended = false,
  localTools = false,
  stepTimeoutMs = 1_000,
  extraTools = [],
  errors,
}: Setup) {
  const calls: InvokeToolRequest[] = [];
  const bus = new InMemoryBus();
  bus.answer(Rpc.registry.invoke, async (req) => {
    calls.push(req);
    const next = answers.shift();
    if (!next) throw new Error('the test gave no answer for this call');
    if (next instanceof AppError) throw next;
    return typeof next === 'function' ? next() : next;
  });
  const logger = createLogger({
    service: 'test',
    level: errors ? 'error' : 'silent',
    instanceId: 'test',
    destination: new Writable({
      write: (chunk: Buffer, _e, done) => {
        errors?.push(String((JSON.parse(chunk.toString()) as { msg?: unknown }).msg));
        done();
      },
    }),
  });
  const tools = new Map([read, write, ...extraTools].map((t) => [t.name, t]));
  const writer: RunWriter = new RunWriter(log, new RunEventOutbox(bus, 0), RUN, 'replica', (err) =>
    driver.writerFailed(err),
  );
  const driver = new RunDriver(
    {
      runId: RUN,
      ctx: { correlationId: 'test', ownerId: OWNER },
      goal: 'test',
      config: RunConfig.parse({
        planApproval,
        permissionMode: 'full-access',
        unattended,
        ...(budget ? { budget } : {}),
      }),
      inputs: {},
      files: [],
      tools,
      writer,
      bus,
      logger,
      settings: {
        resultLimitBytes: 10_000,
        planTimeoutMs: 1_000,
        defaultStepTimeoutMs: stepTimeoutMs,
        invokeGraceMs: 0,
        localTools,
        cancelGraceMs: 1_000,
      },
      catalog: async () => tools,
      onClosed: () => undefined,
      gate: (s) => (typeof gate === 'function' ? gate(s.id) : gate),
      observe: () => undefined,
      inputWaits: inputs,
      ...(spent ? { spent } : {}),
    },
    'planning',
  );
  return { driver, log, bus, calls, writer };
}

async function drive({ plan, ...rest }: Setup & { readonly plan: AgentPlan }) {
  const { driver, log, calls } = setup(rest);
  await driver.planReady(plan, { review: false });
  const end = await driver.settled;
  return { end, log, calls };
}

const step = (id: string, over: Partial<AgentPlan['steps'][number]> = {}): AgentPlan['steps'][number] => ({
  id,
  tool: 'reader',
  arguments: {},
  dependsOn: [],
  description: '',
  ...over,
});
/** A run cancelled while its one step's call is in flight. */
const CANCELLED_MID_CALL: RunEventType[] = [
  'plan_ready',
  'run_started',
  'step_start',
  'cancel_requested',
  'step_failed',
  'cancelled',
];
const retried = (attempts: number) => step('s', { retry: { attempts, backoffMs: 0 } });

describe('RunDriver: retries', () => {
  it('retries a retry-safe step the tool reported failed, until it succeeds', async () => {
    const { end, log } = await drive({
      plan: { steps: [retried(3)] },
      answers: [toolError('flaky'), toolError('flaky again'), ok('done')],
    });
    expect(data(log.of('step_start')).map((d) => d.attempt)).toEqual([1, 2, 3]);
    expect(data(log.of('step_retry')).map((d) => [d.attempt, d.code, d.error])).toEqual([
      [1, 'tool_failed', 'flaky'],
      [2, 'tool_failed', 'flaky again'],
    ]);
    expect(end).toMatchObject({ status: 'completed', type: 'complete', data: { result: 'done' } });
  });

  it('retries transient failures (timeout, unavailable) and reports the last code when they persist', async () => {
    const { end, log } = await drive({
      plan: { steps: [retried(3)] },
      answers: [
        new AppError('unavailable', 'registry away'),
        new AppError('timeout', 'too slow'),
        new AppError('timeout', 'too slow again'),
      ],
    });
    expect(data(log.of('step_retry')).map((d) => d.code)).toEqual(['unavailable', 'timeout']);
    expect(data(log.of('step_failed'))).toEqual([
      { stepId: 's', tool: 'reader', attempt: 3, cancelled: false, code: 'timeout', error: 'too slow again' },
    ]);
    expect(end).toEqual({
      status: 'failed',
      type: 'error',
      data: { message: 'step s (reader) failed: too slow again', code: 'timeout', stepId: 's' },
    });
  });

  it.each([
    ['validation_failed', 'invalid arguments for reader: filePath: Required'],
    ['not_found', 'no tool named reader in the catalog'],
    ['forbidden', 'path "/etc" is refused: outside the workspace'],
    ['conflict', 'revision 2 is stale'],
    ['internal', 'internal error (correlation id x)'],
  ] as const)(
    'does not retry %s: one attempt, and the code reaches step_failed and the run error',
    async (code, message) => {
      const { end, log, calls } = await drive({
        plan: { steps: [retried(5)] },
        answers: [new AppError(code, message)],
      });
      expect(calls).toHaveLength(1);
      expect(log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_failed', 'error']);
      expect(data(log.of('step_failed'))).toEqual([
        { stepId: 's', tool: 'reader', attempt: 1, cancelled: false, code, error: message },
      ]);
      expect(data(log.of('error'))).toEqual([
        { message: `step s (reader) failed: ${message}`, code, stepId: 's' },
      ]);
      expect(end.status).toBe('failed');
    },
  );

  it('never retries a tool that is not retry-safe, whatever the failure', async () => {
    const { log, calls } = await drive({
      plan: { steps: [step('w', { tool: 'writer', retry: { attempts: 3, backoffMs: 0 } })] },
      answers: [new AppError('timeout', 'too slow')],
    });
    expect(calls).toHaveLength(1);
    expect(data(log.of('step_retry'))).toEqual([]);
    expect(data(log.of('step_failed'))).toMatchObject([{ code: 'timeout', attempt: 1 }]);
  });

  it('fails a denied step as forbidden with the decision, before its tool is called', async () => {
    const deny: PermissionDecision = {
      decision: 'deny',
      reason: 'rule Tool(reader) denies',
      rule: 'deny: Tool(reader)',
    };
    const { end, log, calls } = await drive({ plan: { steps: [retried(3)] }, answers: [], gate: deny });
    expect(calls).toEqual([]);
    expect(data(log.of('step_failed'))).toEqual([
      {
        stepId: 's',
        tool: 'reader',
        attempt: 0,
        cancelled: false,
        code: 'forbidden',
        error: 'refused: rule Tool(reader) denies',
        permission: deny,
      },
    ]);
    expect(end).toMatchObject({ type: 'error', data: { code: 'forbidden', stepId: 's' } });
  });
});

describe('RunDriver: what the log cannot store', () => {
  it('keeps a result holding NUL and half a surrogate pair as its JSON text, flagged; the registry refuses it as a next step argument', async () => {
    const bytes = 'cat\u0000/proc/self/cmdline\u0000\ud800';
    const { end, log, calls } = await drive({
      plan: {
        steps: [step('a'), step('b', { arguments: { echo: '{{node.a.result}}' }, dependsOn: ['a'] })],
      },
      answers: [ok(bytes), ok('fine')],
    });
    const [a] = data(log.of('step_complete'));
    expect(a).toMatchObject({ stepId: 'a', encoded: 'json', truncated: false });
    expect(JSON.parse(String(a?.result))).toBe(bytes);
    const started = data(log.of('step_start')).find((d) => d.stepId === 'b');
    expect(started).toMatchObject({ argumentsEncoded: 'json' });
    expect(JSON.parse(String(started?.arguments))).toEqual({ echo: bytes });
    // What the wire does: every service refuses text Postgres cannot store before its handler runs.
    expect(calls).toHaveLength(1);
    expect(data(log.of('step_failed'))).toMatchObject([{ stepId: 'b', code: 'validation_failed' }]);
    expect(end).toMatchObject({ status: 'failed', data: { code: 'validation_failed', stepId: 'b' } });
  });

  it('flags a final result kept as JSON text in the complete event', async () => {
    const { end } = await drive({ plan: { steps: [step('a')] }, answers: [ok('a\u0000b')] });
    expect(end).toMatchObject({ type: 'complete', data: { result: '"a\\u0000b"', encoded: ['a'] } });
  });

  it('shows a tool-reported error holding NUL with U+FFFD', async () => {
    const { log } = await drive({ plan: { steps: [step('a')] }, answers: [toolError('bad\u0000byte')] });
    expect(data(log.of('step_failed'))).toMatchObject([{ code: 'tool_failed', error: 'bad\ufffdbyte' }]);
  });

  it('ends the run with an error when the log refuses an event, instead of abandoning it', async () => {
    const log = new MemoryLog();
    log.refuse = 'step_complete';
    const { end, calls } = await drive({
      plan: { steps: [step('a'), step('b', { dependsOn: ['a'] })] },
      answers: [ok('a'), ok('b')],
      log,
    });
    expect(calls).toHaveLength(1); // b never ran: nothing after the refused write is recorded
    expect(end).toMatchObject({ status: 'failed', type: 'error', data: { code: 'internal' } });
    expect(end.type === 'error' && end.data.message).toMatch(
      /^the run was stopped: its log could not store an event \(the log refuses step_complete\)/,
    );
    expect(log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'error']);
    expect(log.rows.at(-1)).toMatchObject({ status: 'failed', finished: true, release: true });
    expect(log.failedWith).toBeUndefined();
  });

  it('calls no tool when the write of the plan, run_started and the first starts is refused, and ends the run', async () => {
    const log = new MemoryLog();
    log.refuse = 'run_started';
    const { end, calls } = await drive({
      plan: { steps: [step('a'), step('b')] },
      answers: [ok('a'), ok('b')],
      log,
    });
    expect(calls).toEqual([]);
    expect(end).toMatchObject({ status: 'failed', type: 'error', data: { code: 'internal' } });
    expect(log.types).toEqual(['error']);
  });

  it('marks the run failed by the plain statement when the log refuses the error event too', async () => {
    const log = new MemoryLog();
    log.refuse = 'error';
    const { end } = await drive({
      plan: { steps: [step('a')] },
      answers: [new AppError('not_found', 'gone')],
      log,
    });
    expect(end).toMatchObject({ status: 'failed', type: 'error', data: { code: 'internal' } });
    expect(log.failedWith).toMatch(/the log refuses error/);
    expect(log.types.at(-1)).toBe('error');
  });
});

/** A registry call the test holds: `arrived` once the call is made, `release` answers it. */
function held() {
  let arrive!: () => void;
  let answer!: (result: ToolResult) => void;
  const arrived = new Promise<void>((r) => (arrive = r));
  const reply = new Promise<ToolResult>((r) => (answer = r));
  const call = (): Promise<ToolResult> => {
    arrive();
    return reply;
  };
  return { call, arrived, release: answer };
}

const ask = (reason = 'rule Tool(reader) asks'): PermissionDecision => ({ decision: 'ask', reason });

describe('RunDriver: the hot path', () => {
  it('a chain costs one log write per step (a completion with the next start; the plan with the first) and calls each tool only once its start is stored', async () => {
    const log = new MemoryLog();
    const batches: RunEventType[][] = [];
    const append = log.append.bind(log);
    log.append = (runId, batch, opts) => {
      batches.push(batch.map((e) => e.type));
      return append(runId, batch, opts);
    };
    // The steps whose start the log held when each call reached the registry.
    const storedAtCall: string[][] = [];
    const answer = (result: string) => async () => {
      storedAtCall.push(log.of('step_start').map((e) => e.data.stepId));
      return ok(result);
    };
    const { driver, calls } = setup({ log, answers: ['a', 'b', 'c'].map(answer) });
    const chain = { steps: [step('a'), step('b', { dependsOn: ['a'] }), step('c', { dependsOn: ['b'] })] };
    await driver.planReady(chain, { review: false });
    expect(await driver.settled).toMatchObject({ status: 'completed', data: { result: 'c' } });
    expect(calls.map((c) => c.invocationId)).toEqual([`${RUN}:a:1`, `${RUN}:b:1`, `${RUN}:c:1`]);
    expect(storedAtCall).toEqual([['a'], ['a', 'b'], ['a', 'b', 'c']]);
    expect(batches).toEqual([
      ['plan_ready', 'run_started', 'step_start'],
      ['step_complete', 'step_start'],
      ['step_complete', 'step_start'],
      ['step_complete', 'complete'],
    ]);
  });
});

describe('RunDriver: event sequences at gates, retries and control', () => {
  it('plan gate: waits for approval before any step starts, then runs', async () => {
    const { driver, log, calls } = setup({ answers: [ok('x')], planApproval: true });
    void driver.planReady({ steps: [step('s')] }, { review: true });
    await log.until('plan_approval_requested');
    expect(calls).toEqual([]);
    expect(driver.status).toBe('awaiting_plan_approval');
    expect(await driver.approve(undefined, undefined)).toEqual({ status: 'running', released: ['plan'] });
    expect(await driver.settled).toMatchObject({ status: 'completed', type: 'complete' });
    expect(log.types).toEqual([
      'plan_ready',
      'plan_approval_requested',
      'plan_approved',
      'run_started',
      'step_start',
      'step_complete',
      'complete',
    ]);
    expect(log.rows.map((r) => r.status).filter(Boolean)).toEqual([
      'awaiting_plan_approval',
      'running',
      'completed',
    ]);
  });

  it('step gate: only the asking step waits; approval runs it', async () => {
    const { driver, log, calls } = setup({
      answers: [ok('free'), ok('gated')],
      gate: (id) => (id === 'g' ? ask() : allow),
    });
    void driver.planReady({ steps: [step('f'), step('g', { dependsOn: ['f'] })] }, { review: false });
    await log.until('step_approval_requested');
    expect(calls.map((c) => c.invocationId)).toEqual([`${RUN}:f:1`]);
    expect(driver.status).toBe('awaiting_step_approval');
    expect(await driver.approve('g', undefined)).toEqual({ status: 'running', released: ['g'] });
    expect(await driver.settled).toMatchObject({ status: 'completed', data: { result: 'gated' } });
    expect(log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_start',
      'step_complete',
      'step_approval_requested',
      'step_approved',
      'step_start',
      'step_complete',
      'complete',
    ]);
  });

  it('a retry is one more start: the exact sequence of a transient failure then success', async () => {
    const { log } = await drive({
      plan: { steps: [retried(2)] },
      answers: [new AppError('unavailable', 'registry away'), ok('done')],
    });
    expect(log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_start',
      'step_retry',
      'step_start',
      'step_complete',
      'complete',
    ]);
  });

  it('a non-transient failure is not retried: one start, step_failed with its code, the run error', async () => {
    const { log } = await drive({
      plan: { steps: [retried(3)] },
      answers: [new AppError('validation_failed', 'bad arguments')],
    });
    expect(log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_failed', 'error']);
  });

  it('cancel at the plan gate: nothing runs, the run ends cancelled', async () => {
    const { driver, log, calls } = setup({ answers: [], planApproval: true });
    void driver.planReady({ steps: [step('s')] }, { review: true });
    await log.until('plan_approval_requested');
    expect(await driver.cancel()).toEqual({ status: 'cancelled', released: [] });
    expect(await driver.settled).toEqual({
      status: 'cancelled',
      type: 'cancelled',
      data: { message: 'cancelled by the user' },
    });
    expect(calls).toEqual([]);
    expect(log.types).toEqual(['plan_ready', 'plan_approval_requested', 'cancel_requested', 'cancelled']);
  });

  it('cancel at a step gate: the waiting step ends cancelled before the run does', async () => {
    const { driver, log, calls } = setup({ answers: [], gate: ask() });
    void driver.planReady({ steps: [step('s')] }, { review: false });
    await log.until('step_approval_requested');
    await driver.cancel('not now');
    expect(await driver.settled).toMatchObject({ status: 'cancelled', data: { message: 'not now' } });
    expect(calls).toEqual([]);
    expect(log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_approval_requested',
      'cancel_requested',
      'step_failed',
      'cancelled',
    ]);
    expect(data(log.of('step_failed'))).toEqual([
      { stepId: 's', tool: 'reader', attempt: 0, error: 'cancelled: not now', cancelled: true },
    ]);
  });

  it('cancel during a call tells the registry to stop that invocation', async () => {
    const call = held();
    const { driver, log, bus } = setup({ answers: [call.call] });
    bus.on(Events.toolCancel, () => call.release(toolError('aborted')));
    void driver.planReady({ steps: [step('s')] }, { review: false });
    await call.arrived;
    await driver.cancel();
    expect(await driver.settled).toMatchObject({ status: 'cancelled' });
    expect(bus.sent(Events.toolCancel)).toEqual([{ invocationId: `${RUN}:s:1` }]);
    expect(log.types).toEqual(CANCELLED_MID_CALL);
  });

  it('an edit at a step gate adopts the new plan for steps not started, and refuses one changing a started step', async () => {
    const { driver, log, calls } = setup({
      answers: [ok('a'), ok('b')],
      gate: (id) => (id === 'a' ? ask() : allow),
    });
    const plan: AgentPlan = {
      steps: [step('a'), step('b', { arguments: { n: 1 }, dependsOn: ['a'] })],
    };
    void driver.planReady(plan, { review: false });
    await log.until('step_approval_requested');
    const changesA: AgentPlan = { steps: [step('a', { arguments: { n: 9 } }), plan.steps[1] ?? step('b')] };
    await expect(driver.approve('a', changesA)).rejects.toMatchObject({
      code: 'conflict',
      details: { steps: ['a'] },
    });
    const edited: AgentPlan = { steps: [step('a'), step('b', { arguments: { n: 2 }, dependsOn: ['a'] })] };
    expect(await driver.approve('a', edited)).toEqual({ status: 'running', released: ['a'] });
    expect(await driver.settled).toMatchObject({ status: 'completed' });
    expect(calls.map((c) => c.arguments)).toEqual([{}, { n: 2 }]);
    expect(log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_approval_requested',
      'plan_ready',
      'plan_approved',
      'step_approved',
      'step_start',
      'step_complete',
      'step_start',
      'step_complete',
      'complete',
    ]);
    expect(data(log.of('plan_ready'))[1]).toEqual({ plan: edited, edited: true });
  });

  it('lease loss: the replica gives the run up, writes nothing more and calls nothing more', async () => {
    const call = held();
    const { driver, log, calls } = setup({ answers: [call.call, ok('never')] });
    void driver.planReady({ steps: [step('a'), step('b', { dependsOn: ['a'] })] }, { review: false });
    await call.arrived;
    log.leaseLost = true;
    call.release(ok('a'));
    expect(await driver.settled).toEqual({
      status: 'interrupted',
      type: 'interrupted',
      data: { message: 'the executor replica running it stopped' },
    });
    expect(driver.finished).toBe(true);
    expect(calls).toHaveLength(1);
    expect(log.types).toEqual(['plan_ready', 'run_started', 'step_start']);
    expect(log.failedWith).toBeUndefined();
  });
});

describe('RunDriver: local built-ins', () => {
  const wait: ToolDescriptor = { ...read, name: 'wait' };
  const waitStep = (args: Record<string, unknown>) => step('w', { tool: 'wait', arguments: args });
  const local = { localTools: true, extraTools: [wait] };

  it('runs wait in its own process: the registry is never called, the value is the result', async () => {
    const { end, log, calls } = await drive({
      ...local,
      plan: { steps: [waitStep({ ms: 0, value: { a: 1 } }), step('next', { dependsOn: ['w'] })] },
      answers: [ok('after')],
    });
    expect(calls.map((c) => c.tool)).toEqual(['reader']);
    expect(data(log.of('step_complete')).map((d) => [d.stepId, d.result])).toEqual([
      ['w', { a: 1 }],
      ['next', 'after'],
    ]);
    expect(end).toMatchObject({ status: 'completed' });
  });

  it('checks the arguments as the registry does: validation_failed naming the field, not retried', async () => {
    const { end, log, calls } = await drive({
      ...local,
      plan: { steps: [{ ...waitStep({ ms: -1, extra: true }), retry: { attempts: 3, backoffMs: 0 } }] },
      answers: [],
    });
    expect(calls).toEqual([]);
    expect(log.of('step_start')).toHaveLength(1);
    const failed = data(log.of('step_failed'))[0];
    expect(failed).toMatchObject({ code: 'validation_failed' });
    expect(failed?.error).toMatch(/^invalid arguments for wait: .*arguments\.ms/);
    expect(end).toMatchObject({ status: 'failed', data: { code: 'validation_failed' } });
  });

  it("stops a call past the step's deadline with timeout", async () => {
    const { end, log } = await drive({
      ...local,
      stepTimeoutMs: 100,
      plan: { steps: [waitStep({ ms: 3_600_000 })] },
      answers: [],
    });
    expect(data(log.of('step_failed'))).toEqual([
      {
        stepId: 'w',
        tool: 'wait',
        attempt: 1,
        cancelled: false,
        code: 'timeout',
        error: 'wait did not finish within 100 ms and was stopped',
      },
    ]);
    expect(end).toMatchObject({ status: 'failed', data: { code: 'timeout' } });
  });

  it('a cancel stops the call at once, and nothing is sent to the registry', async () => {
    const { driver, log, bus, calls } = setup({ ...local, stepTimeoutMs: 3_600_000, answers: [] });
    void driver.planReady({ steps: [waitStep({ ms: 3_600_000 })] }, { review: false });
    await log.until('step_start');
    await driver.cancel();
    expect(await driver.settled).toMatchObject({ status: 'cancelled' });
    expect(calls).toEqual([]);
    expect(bus.sent(Events.toolCancel)).toEqual([]);
    expect(log.types).toEqual(CANCELLED_MID_CALL);
  });

  it.each([
    ['local tools are off', { localTools: false, extraTools: [wait] }],
    [
      'the tool named wait is not the built-in',
      { localTools: true, extraTools: [{ ...wait, source: 'mcp' as const }] },
    ],
  ])('calls the registry when %s', async (_, over) => {
    const { calls } = await drive({
      ...over,
      plan: { steps: [waitStep({ ms: 0 })] },
      answers: [ok('remote')],
    });
    expect(calls.map((c) => c.tool)).toEqual(['wait']);
  });
});

describe('RunDriver: planning', () => {
  it('relays the planner tokens, then announces the plan and runs it', async () => {
    const { driver, log, bus } = setup({ answers: [ok('x')] });
    bus.answer(Rpc.planner.draft, (req) => {
      expect(req.tools.map((t) => t.name)).toEqual(['reader', 'writer']);
      bus.emit(Events.planTokens(RUN), { runId: RUN, attempt: 1, text: '{"steps":' });
      return { ok: true as const, plan: { steps: [step('s')] }, attempts: 1 };
    });
    await driver.draft();
    expect(await driver.settled).toMatchObject({ status: 'completed' });
    expect(log.types).toEqual([
      'plan_token',
      'plan_ready',
      'run_started',
      'step_start',
      'step_complete',
      'complete',
    ]);
    expect(data(log.of('plan_ready'))).toEqual([{ plan: { steps: [step('s')] }, attempts: 1 }]);
  });

  it("ends the run with the planner's refusal as validation_failed, with its issues", async () => {
    const { driver, log, calls, bus } = setup({ answers: [] });
    const issues = [{ path: 'steps', code: 'invalid' as const, message: 'no steps' }];
    bus.answer(Rpc.planner.draft, () => ({
      ok: false as const,
      issues,
      attempts: 3,
      message: 'no valid plan',
    }));
    await driver.draft();
    expect(await driver.settled).toEqual({
      status: 'failed',
      type: 'error',
      data: { message: 'no valid plan', code: 'validation_failed', issues, attempts: 3 },
    });
    expect(calls).toEqual([]);
    expect(log.types).toEqual(['error']);
  });
});

describe('RunDriver: budgets', () => {
  const chain = (n: number): AgentPlan => ({
    steps: Array.from({ length: n }, (_, i) => step(`s${i}`, i ? { dependsOn: [`s${i - 1}`] } : {})),
  });
  /** The row change written with the terminal event. */
  const lastRow = (log: MemoryLog) => log.rows[log.rows.length - 1];

  it('maxToolCalls: the call that would cross it is not made; the run ends budget_exceeded naming the limit and figures', async () => {
    const { end, log, calls } = await drive({
      plan: chain(4),
      answers: [ok('1'), ok('2'), ok('never'), ok('never')],
      budget: { maxToolCalls: 2 },
    });
    expect(calls).toHaveLength(2);
    expect(end).toMatchObject({
      status: 'failed',
      type: 'error',
      data: {
        code: 'budget_exceeded',
        details: { limit: 'maxToolCalls', budget: { maxToolCalls: 2 }, usage: { toolCalls: 2 } },
      },
    });
    expect(data(log.of('step_start')).map((d) => d.stepId)).toEqual(['s0', 's1']);
    expect(data(log.of('step_failed'))).toEqual([
      expect.objectContaining({
        stepId: 's2',
        cancelled: true,
        error: expect.stringContaining('maxToolCalls'),
      }),
    ]);
    expect(lastRow(log)).toMatchObject({ status: 'failed', usage: { toolCalls: 2, tokens: 0 } });
  });

  it('retries count as tool calls', async () => {
    const { end, calls } = await drive({
      plan: { steps: [retried(5)] },
      answers: [toolError('flaky'), toolError('flaky'), ok('late')],
      budget: { maxToolCalls: 2 },
    });
    expect(calls).toHaveLength(2);
    expect(end).toMatchObject({ data: { code: 'budget_exceeded', details: { limit: 'maxToolCalls' } } });
  });

  it('a run within its budget completes, with its figures on the row', async () => {
    const { end, log } = await drive({
      plan: chain(2),
      answers: [ok('1'), ok('2')],
      budget: { maxToolCalls: 2 },
    });
    expect(end).toMatchObject({ status: 'completed' });
    expect(lastRow(log)).toMatchObject({ status: 'completed', usage: { toolCalls: 2 } });
  });

  it('a resumed run carries its figures on: the calls spent before count', async () => {
    const { end, calls } = await drive({
      plan: chain(2),
      answers: [ok('1'), ok('never')],
      budget: { maxToolCalls: 3 },
      spent: { tokens: 0, toolCalls: 2, wallMs: 0 },
    });
    expect(calls).toHaveLength(1);
    expect(end).toMatchObject({ data: { code: 'budget_exceeded', details: { usage: { toolCalls: 3 } } } });
  });

  it('maxWallMs: the in-flight call is told to stop and the run ends budget_exceeded', async () => {
    const call = held();
    const { driver, log, bus } = setup({ answers: [call.call], budget: { maxWallMs: 20 } });
    bus.on(Events.toolCancel, () => call.release(toolError('aborted')));
    void driver.planReady(chain(1), { review: false });
    expect(await driver.settled).toMatchObject({
      status: 'failed',
      data: { code: 'budget_exceeded', details: { limit: 'maxWallMs', budget: { maxWallMs: 20 } } },
    });
    expect(bus.sent(Events.toolCancel)).toEqual([{ invocationId: `${RUN}:s0:1` }]);
    expect(log.types).toEqual(['plan_ready', 'run_started', 'step_start', 'step_failed', 'error']);
    expect(data(log.of('step_failed'))[0]).toMatchObject({ cancelled: true });
  });

  it('a cancel while the run stops for its budget does not turn it into a cancelled run', async () => {
    const call = held();
    const { driver, bus } = setup({ answers: [call.call], budget: { maxWallMs: 20 } });
    bus.on(Events.toolCancel, async () => {
      expect(await driver.cancel()).toEqual({ status: 'failed', released: [] });
      call.release(toolError('aborted'));
    });
    void driver.planReady(chain(1), { review: false });
    expect(await driver.settled).toMatchObject({ status: 'failed', data: { code: 'budget_exceeded' } });
  });

  describe('with a hand-driven clock', () => {
    beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] }));
    afterEach(() => jest.useRealTimers());

    it('the wall clock stops at the plan gate: a run parked there longer than maxWallMs still runs once approved', async () => {
      const { driver, log } = setup({
        answers: [ok('done')],
        budget: { maxWallMs: 1_000 },
        planApproval: true,
      });
      void driver.planReady(chain(1), { review: true });
      await log.until('plan_approval_requested');
      jest.advanceTimersByTime(60_000);
      await driver.approve(undefined, undefined);
      expect(await driver.settled).toMatchObject({ status: 'completed' });
      expect(driver.usage.wallMs).toBeLessThan(1_000);
    });

    it('the wall clock stops while every step in flight waits at its gate', async () => {
      const { driver, log } = setup({ answers: [ok('done')], budget: { maxWallMs: 1_000 }, gate: ask() });
      void driver.planReady(chain(1), { review: false });
      await log.until('step_approval_requested');
      jest.advanceTimersByTime(60_000);
      await driver.approve('s0', undefined);
      expect(await driver.settled).toMatchObject({ status: 'completed' });
    });

    it('the wall clock runs while the planner drafts: maxWallMs ends the run without a plan', async () => {
      const { driver, log, bus } = setup({ answers: [], budget: { maxWallMs: 500 } });
      let asked!: () => void;
      const drafting = new Promise<void>((r) => (asked = r));
      bus.answer(Rpc.planner.draft, () => {
        asked();
        return new Promise<never>(() => undefined); // a model that never answers
      });
      void driver.draft();
      await drafting;
      jest.advanceTimersByTime(500);
      expect(await driver.settled).toMatchObject({
        status: 'failed',
        data: { code: 'budget_exceeded', details: { limit: 'maxWallMs' } },
      });
      expect(log.types).toEqual(['error']);
    });

    it('the wall clock runs while a step works: maxWallMs stops it', async () => {
      const call = held();
      const { driver, bus } = setup({ answers: [call.call], budget: { maxWallMs: 1_000 } });
      bus.on(Events.toolCancel, () => call.release(toolError('aborted')));
      void driver.planReady(chain(1), { review: false });
      await call.arrived;
      jest.advanceTimersByTime(1_000);
      expect(await driver.settled).toMatchObject({
        data: { code: 'budget_exceeded', details: { limit: 'maxWallMs', usage: { wallMs: 1_000 } } },
      });
    });
  });

  it('maxTokens: a draft that spent more ends the run before its plan is announced', async () => {
    const { driver, log, calls, bus } = setup({ answers: [], budget: { maxTokens: 100 } });
    bus.answer(Rpc.planner.draft, (req) => {
      expect(req.maxTokens).toBe(100);
      return { ok: true as const, plan: chain(1), attempts: 1, tokens: 150 };
    });
    await driver.draft();
    expect(await driver.settled).toMatchObject({
      status: 'failed',
      data: {
        code: 'budget_exceeded',
        details: { limit: 'maxTokens', budget: { maxTokens: 100 }, usage: { tokens: 150, toolCalls: 0 } },
      },
    });
    expect(calls).toEqual([]);
    expect(log.types).toEqual(['error']);
    expect(lastRow(log)).toMatchObject({ usage: { tokens: 150 } });
  });

  it('a draft within the token budget is announced with what it spent', async () => {
    const { driver, log, bus } = setup({ answers: [ok('x')], budget: { maxTokens: 100 } });
    bus.answer(Rpc.planner.draft, () => ({ ok: true as const, plan: chain(1), attempts: 1, tokens: 80 }));
    await driver.draft();
    expect(await driver.settled).toMatchObject({ status: 'completed' });
    expect(data(log.of('plan_ready'))).toEqual([{ plan: chain(1), attempts: 1, tokens: 80 }]);
    expect(lastRow(log)).toMatchObject({ usage: { tokens: 80, toolCalls: 1 } });
  });
});

describe("RunDriver: a server's input request during a step's call", () => {
  jest.setTimeout(15_000);

  const askOf = (invocationId: string): ElicitationAsk => ({
    action: 'elicit',
    invocationId,
    asker: { kind: 'run', runId: RUN, stepId: 's' },
    ownerId: OWNER,
    tool: 'reader',
    server: 'fixture',
    request: {
      mode: 'form',
      message: 'Your name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    },
  });

  /** A registry whose call asks the run for input once, then answers with the reply it got. */
  function asking(driverOf: () => RunDriver, invocation = `${RUN}:s:1`): Answer {
    return async () => ok(JSON.stringify(await driverOf().input(askOf(invocation))));
  }

  it('records the request, waits for the answer and gives it to the call; the log says who answered', async () => {
    const inputs = new MemoryInputs();
    const holder: { driver?: RunDriver } = {};
    const t = setup({ answers: [asking(() => holder.driver as RunDriver)], inputs });
    holder.driver = t.driver;
    await t.driver.planReady({ steps: [step('s')] }, { review: false });
    await t.log.until('step_input_requested');
    expect(data(t.log.of('step_input_requested'))).toEqual([
      {
        stepId: 's',
        tool: 'reader',
        elicitationId: inputs.asked[0]?.id,
        server: 'fixture',
        mode: 'form',
        message: 'Your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        fieldOrder: ['name'],
        expiresAt: '2030-01-01T00:00:00.000Z',
      },
    ]);
    expect(inputs.asked[0]).toMatchObject({ label: 'test', tool: 'reader', stepId: 's' });
    inputs.reply({ action: 'accept', content: { name: 'Ada' } });
    const end = await t.driver.settled;
    expect(data(t.log.of('step_input_answered'))).toEqual([
      {
        stepId: 's',
        tool: 'reader',
        elicitationId: inputs.asked[0]?.id,
        action: 'accept',
        content: { name: 'Ada' },
        by: 'person',
      },
    ]);
    expect(t.log.types).toEqual([
      'plan_ready',
      'run_started',
      'step_start',
      'step_input_requested',
      'step_input_answered',
      'step_complete',
      'complete',
    ]);
    expect(end).toMatchObject({
      status: 'completed',
      data: { result: { action: 'accept', content: { name: 'Ada' } } },
    });
  });

  it('declines at once in an unattended run, with the reason in the log', async () => {
    const inputs = new MemoryInputs();
    const holder: { driver?: RunDriver } = {};
    const t = setup({ answers: [asking(() => holder.driver as RunDriver)], inputs, unattended: true });
    holder.driver = t.driver;
    await t.driver.planReady({ steps: [step('s')] }, { review: false });
    const end = await t.driver.settled;
    expect(end).toMatchObject({ status: 'completed', data: { result: { action: 'decline' } } });
    expect(data(t.log.of('step_input_answered'))).toEqual([
      {
        stepId: 's',
        tool: 'reader',
        elicitationId: inputs.asked[0]?.id,
        action: 'decline',
        by: 'platform',
        reason: expect.stringContaining('unattended run'),
      },
    ]);
    expect(inputs.declines).toEqual([
      { id: inputs.asked[0]?.id, reason: expect.stringContaining('unattended') },
    ]);
  });

  it("refuses a request for a call the run does not have in flight, or made for another owner's call", async () => {
    const t = setup({ answers: [] });
    await expect(t.driver.input(askOf(`${RUN}:s:9`))).rejects.toMatchObject({ code: 'conflict' });
    const inputs = new MemoryInputs();
    const holder: { driver?: RunDriver } = {};
    let refused: unknown;
    const u = setup({
      answers: [
        async () => {
          // The same invocation id, but the call was made for someone else.
          refused = await (holder.driver as RunDriver)
            .input({ ...askOf(`${RUN}:s:1`), ownerId: '00000000-0000-4000-8000-0000000000cc' })
            .catch((err: unknown) => err);
          return ok('done');
        },
      ],
      inputs,
    });
    holder.driver = u.driver;
    await u.driver.planReady({ steps: [step('s')] }, { review: false });
    await u.driver.settled;
    expect(refused).toMatchObject({ code: 'conflict' });
    expect(inputs.asked).toEqual([]);
    expect(u.log.types).not.toContain('step_input_requested');
  });

  it('ends the wait with cancel when the run is cancelled, and says why', async () => {
    const inputs = new MemoryInputs();
    const holder: { driver?: RunDriver } = {};
    const t = setup({ answers: [asking(() => holder.driver as RunDriver)], inputs });
    holder.driver = t.driver;
    await t.driver.planReady({ steps: [step('s')] }, { review: false });
    await t.log.until('step_input_requested');
    await t.driver.cancel('cancelled by the user');
    const end = await t.driver.settled;
    expect(end.status).toBe('cancelled');
    expect(data(t.log.of('step_input_answered'))).toEqual([
      expect.objectContaining({
        action: 'cancel',
        by: 'platform',
        reason: 'the run stopped: cancelled by the user',
      }),
    ]);
  });
});

describe('RunDriver: a new run whose row is not written', () => {
  it.each([
    ['at its plan gate', true],
    ['with its first step starting', false],
  ])(
    'does nothing %s: no tool called, nothing written or published, no crash logged, given up on this replica',
    async (_, planApproval) => {
      const errors: string[] = [];
      const { driver, log, bus, calls, writer } = setup({ answers: [ok('never')], planApproval, errors });
      const refused = new AppError('capacity_exceeded', 'you have 2 runs active, the owner limit is 2');
      const created = writer.create([], async () => {
        driver.unwritten(refused); // as RunLauncher does when the row is refused
        throw refused;
      });
      const work = driver
        .planReady({ steps: [step('s')] }, { review: planApproval })
        .catch((err: unknown) => {
          driver.crashed(err);
        });
      await expect(created).rejects.toBe(refused);
      await work;
      expect(await driver.settled).toMatchObject({ status: 'interrupted' });
      expect(calls).toEqual([]);
      expect(log.events).toEqual([]);
      expect(bus.traffic.events).toEqual([]);
      expect(errors).toEqual([]);
    },
  );
});
