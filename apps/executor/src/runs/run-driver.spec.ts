import { Writable } from 'node:stream';
import {
  AppError,
  RunConfig,
  type AgentPlan,
  type PermissionDecision,
  type RpcContract,
  type RunEvent,
  type RunEventBody,
  type RunEventOf,
  type RunEventType,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { jsonHoldsUnstorable, type RunsRepository, type RunUpdate } from '@switchyard/server-db';
import { createLogger } from '@switchyard/server-observability';
import { RunDriver } from './run-driver';
import { RunWriter } from './run-writer';

const RUN = '00000000-0000-4000-8000-0000000000aa';

/**
 * The run's log in memory, refusing what Postgres refuses (NUL, half a surrogate pair) the way it
 * does: the whole batch fails. `refuse` makes it refuse batches holding an event of that type too.
 */
class MemoryLog {
  readonly events: RunEvent[] = [];
  readonly rows: RunUpdate[] = [];
  refuse: RunEventType | undefined;
  failedWith: string | undefined;

  async append(
    runId: string,
    batch: readonly RunEventBody[],
    opts: { update?: RunUpdate } = {},
  ): Promise<RunEvent[]> {
    if (jsonHoldsUnstorable(JSON.stringify(batch))) throw new Error('unsupported Unicode escape sequence');
    if (batch.some((e) => e.type === this.refuse)) throw new Error(`the log refuses ${this.refuse}`);
    if (opts.update) this.rows.push(opts.update);
    const stored = batch.map((e, i) => ({ ...e, runId, seq: this.events.length + i + 1, at: '' }));
    this.events.push(...stored);
    return stored;
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

/** The tool registry's answers to registry.tools.invoke, in order: a result or a thrown error. */
type Answer = ToolResult | AppError;
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

interface Drive {
  readonly plan: AgentPlan;
  readonly answers: Answer[];
  readonly gate?: PermissionDecision;
  readonly log?: MemoryLog;
}

async function drive({ plan, answers, gate = allow, log = new MemoryLog() }: Drive) {
  const calls: Array<Record<string, unknown>> = [];
  const bus = {
    call: async (contract: RpcContract, payload: Record<string, unknown>) => {
      expect(contract.subject).toBe('registry.tools.invoke');
      calls.push(payload);
      const next = answers.shift();
      if (!next) throw new Error('the test gave no answer for this call');
      if (next instanceof AppError) throw next;
      return next;
    },
    emit: () => undefined,
    on: () => () => undefined,
  } as unknown as Bus;
  const logger = createLogger({
    service: 'test',
    level: 'silent',
    instanceId: 'test',
    destination: new Writable({ write: (_c, _e, done) => done() }),
  });
  const tools = new Map([read, write].map((t) => [t.name, t]));
  const writer: RunWriter = new RunWriter(log as unknown as RunsRepository, bus, RUN, 'replica', (err) =>
    driver.writerFailed(err),
  );
  const driver = new RunDriver(
    {
      runId: RUN,
      ctx: { correlationId: 'test' },
      goal: 'test',
      config: RunConfig.parse({ planApproval: false, permissionMode: 'full-access' }),
      inputs: {},
      files: [],
      tools,
      writer,
      bus,
      logger,
      settings: {
        resultLimitBytes: 10_000,
        planTimeoutMs: 1_000,
        defaultStepTimeoutMs: 1_000,
        invokeGraceMs: 0,
        cancelGraceMs: 1_000,
      },
      catalog: async () => tools,
      onClosed: () => undefined,
      gate: () => gate,
      observe: () => undefined,
    },
    'planning',
  );
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
  it('keeps a result holding NUL and half a surrogate pair as its JSON text, flagged, while the next step gets it whole', async () => {
    const bytes = 'cat\u0000/proc/self/cmdline\u0000\ud800';
    const { end, log, calls } = await drive({
      plan: {
        steps: [step('a'), step('b', { arguments: { echo: '{{node.a.result}}' }, dependsOn: ['a'] })],
      },
      answers: [ok(bytes), ok('fine')],
    });
    expect(calls[1]?.['arguments']).toEqual({ echo: bytes });
    const [a] = data(log.of('step_complete'));
    expect(a).toMatchObject({ stepId: 'a', encoded: 'json', truncated: false });
    expect(JSON.parse(String(a?.result))).toBe(bytes);
    const started = data(log.of('step_start')).find((d) => d.stepId === 'b');
    expect(started).toMatchObject({ argumentsEncoded: 'json' });
    expect(JSON.parse(String(started?.arguments))).toEqual({ echo: bytes });
    expect(end).toMatchObject({ status: 'completed', data: { result: 'fine' } });
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
