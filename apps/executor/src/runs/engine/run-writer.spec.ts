import { Events, RunConfig, RunEventBody, type RunEvent, type RunEventType } from '@switchyard/contracts';
import { LeaseLostError, type RunUpdate } from '@switchyard/server-db-runs';
import { InMemoryBus } from '@switchyard/testing';
import { RunWriter, type RunLog } from './run-writer';
import { RunEventOutbox } from './run-event-outbox';

/** A log in memory standing in for Postgres: records each write's batch. */
class MemoryLog {
  readonly writes: Array<{ types: RunEventType[]; update: RunUpdate | undefined }> = [];
  readonly failed: string[] = [];
  seq = 0;
  /** Refuses every append with this. */
  fail: Error | undefined;
  hold = true;
  release: (() => void) | undefined;

  async append(
    runId: string,
    events: readonly RunEventBody[],
    opts: { update?: RunUpdate } = {},
  ): Promise<RunEvent[]> {
    this.writes.push({ types: events.map((e) => e.type), update: opts.update });
    if (this.fail) throw this.fail;
    if (this.hold && this.writes.length === 1) await new Promise<void>((r) => (this.release = r));
    return events.map((e) => ({ ...e, runId, seq: ++this.seq, at: '' }));
  }

  async failRun(runId: string, replica: string, message: string): Promise<RunEvent[]> {
    this.failed.push(message);
    if (replica !== 'replica') return [];
    return [{ type: 'error', data: { message, code: 'internal' }, runId, seq: ++this.seq, at: '' }];
  }
}

function repoOf(log: MemoryLog): RunLog {
  return { append: log.append.bind(log), fail: log.failRun.bind(log) };
}

const RUN = '00000000-0000-4000-8000-0000000000bb';
let bus = new InMemoryBus();
/** What the writer published on the run's live subject, in order. */
const published = (): RunEvent[] => bus.sent(Events.run(RUN)).flatMap((b) => b.events);
const token = (text: string) => ({ text, attempt: 1 });
const stepStart = {
  stepId: 's',
  tool: 'wait',
  effect: 'read' as const,
  attempt: 1,
  description: '',
  arguments: { ms: 0 },
  permission: { decision: 'allow' as const, reason: 'full-access' },
};

describe('RunWriter', () => {
  beforeEach(() => (bus = new InMemoryBus()));

  it('writes what is emitted in one turn together, and what comes during a write in the next one, in order', async () => {
    const log = new MemoryLog();
    const failures: unknown[] = [];
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', (e) => failures.push(e));
    const a = w.emit('plan_token', token('a'));
    const b = w.emit('planning_started', {}, { status: 'running' });
    await new Promise((r) => setImmediate(r));
    const c = w.emit('plan_token', token('c'), { summary: 'x' });
    const d = w.emit('cancelled', { message: 'd' }, { status: 'cancelled' });
    log.release?.();
    await Promise.all([a, b, c, d]);
    expect(log.writes).toEqual([
      { types: ['plan_token', 'planning_started'], update: { status: 'running' } },
      { types: ['plan_token', 'cancelled'], update: { summary: 'x', status: 'cancelled' } },
    ]);
    expect(published().map((e) => [e.seq, e.type])).toEqual([
      [1, 'plan_token'],
      [2, 'planning_started'],
      [3, 'plan_token'],
      [4, 'cancelled'],
    ]);
    expect(failures).toEqual([]);
  });

  it('calls what waits on an event once it is durable, before the event is published, with the call in the same turn', async () => {
    const log = new MemoryLog();
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
    const seen: Array<{ writes: number; published: number }> = [];
    const sent = w.emitThen('step_start', stepStart, () => {
      seen.push({ writes: log.writes.length, published: bus.traffic.events.length });
      return 'called';
    });
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual([]);
    log.release?.();
    expect(await sent).toBe('called');
    expect(seen).toEqual([{ writes: 1, published: 0 }]);
    expect(published().map((e) => [e.seq, e.type])).toEqual([[1, 'step_start']]);
  });

  it('never calls what waits on an event whose write failed', async () => {
    const log = new MemoryLog();
    log.fail = new Error('the log is down');
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
    let called = false;
    await expect(w.emitThen('step_start', stepStart, () => (called = true))).rejects.toThrow(
      'the log is down',
    );
    expect(called).toBe(false);
    expect(published()).toEqual([]);
  });

  it('fails every pending and later emit once a write fails, and reports it once', async () => {
    const log = new MemoryLog();
    log.fail = new LeaseLostError('gone');
    const failures: unknown[] = [];
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', (e) => failures.push(e));
    await expect(w.emit('plan_token', token('a'))).rejects.toBeInstanceOf(LeaseLostError);
    await expect(w.emit('plan_token', token('b'))).rejects.toBeInstanceOf(LeaseLostError);
    expect(failures).toHaveLength(1);
    expect(published()).toEqual([]);
  });

  it('refuses an event that does not fit the catalog, and stops like a failed write', async () => {
    const log = new MemoryLog();
    log.hold = false;
    const failures: unknown[] = [];
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', (e) => failures.push(e));
    const before = w.emit('plan_token', token('kept'));
    // What a caller outside the type system could send: an attempt of 0 is not in the catalog.
    const bad = w.emit('plan_token', { text: 'x', attempt: 0 });
    await expect(bad).rejects.toThrow(
      /^a plan_token event does not fit the run event catalog: data\.attempt: /,
    );
    await expect(bad).rejects.toMatchObject({ code: 'internal' });
    await expect(before).rejects.toMatchObject({ code: 'internal' });
    await expect(w.emit('plan_token', token('later'))).rejects.toMatchObject({ code: 'internal' });
    expect(failures).toHaveLength(1);
    expect(log.writes).toEqual([]);
  });

  it('closes a stopped run with an error event, falling back to the plain statement when the log refuses it', async () => {
    const log = new MemoryLog();
    log.hold = false;
    const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
    expect(await w.close('the log refused \u0000 an event')).toEqual({
      message: 'the log refused \ufffd an event',
      code: 'internal',
    });
    expect(log.writes).toEqual([
      {
        types: ['error'],
        update: { status: 'failed', error: 'the log refused \ufffd an event', finished: true, release: true },
      },
    ]);
    expect(log.failed).toEqual([]);

    log.fail = new Error('invalid input syntax for type json');
    expect(await w.close('again')).toEqual({ message: 'again', code: 'internal' });
    expect(log.failed).toEqual(['again']);
    expect(published().map((e) => e.type)).toEqual(['error', 'error']);

    const other = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica-2', () => undefined);
    await expect(other.close('not mine')).rejects.toBeInstanceOf(LeaseLostError);
    log.fail = new LeaseLostError('gone');
    await expect(w.close('lost')).rejects.toBeInstanceOf(LeaseLostError);
    expect(log.failed).toEqual(['again', 'not mine']);
  });

  describe('create', () => {
    /** A creation standing in for the run's row: records each call, numbers what it stores. */
    const creation =
      (calls: Array<{ types: RunEventType[]; update: unknown }>, fail?: Error) =>
      async (events: readonly RunEventBody[], update: unknown): Promise<RunEvent[]> => {
        calls.push({ types: events.map((e) => e.type), update });
        if (fail) throw fail;
        return events.map((e, i) => ({ ...e, runId: RUN, seq: i + 1, at: '' }));
      };
    const created = RunEventBody.parse({
      type: 'run_created',
      data: { goal: 'g', config: RunConfig.parse({}), source: 'goal' },
    });
    /**
     * What a run emits at once, a few microtasks after its launch (past a kill check): a plan's
     * announcement, the run's start and its first step's start, in one go as RunDriver.planReady does.
     */
    const firstTurn = async (w: RunWriter, called: string[]) => {
      await Promise.resolve();
      await Promise.resolve();
      const plan = w.emit(
        'plan_ready',
        {
          plan: { steps: [{ id: 's', tool: 'wait', arguments: { ms: 0 }, dependsOn: [], description: '' }] },
        },
        { usage: { tokens: 0, wallMs: 0, toolCalls: 0 } },
      );
      const started = w.emit('run_started', { steps: 1, reused: 0 }, { status: 'running' });
      const step = w.emitThen('step_start', stepStart, () => called.push('tool'));
      return Promise.all([plan, started, step]);
    };

    it('writes the row with what the run emits in its first turn, calls the tools once stored, then publishes it all', async () => {
      const log = new MemoryLog();
      const calls: Array<{ types: RunEventType[]; update: unknown }> = [];
      const failures: unknown[] = [];
      const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', (e) =>
        failures.push(e),
      );
      const called: string[] = [];
      expect(w.created).toBeUndefined();
      const stored = w.create([created], creation(calls));
      // What a pre_tool_use hook waits for (RunLauncher: shownAfter).
      expect(w.created).toBe(stored);
      const first = firstTurn(w, called);
      expect((await stored).map((e) => e.type)).toEqual([
        'run_created',
        'plan_ready',
        'run_started',
        'step_start',
      ]);
      await first;
      expect(calls).toEqual([
        {
          types: ['run_created', 'plan_ready', 'run_started', 'step_start'],
          update: { usage: { tokens: 0, wallMs: 0, toolCalls: 0 }, status: 'running' },
        },
      ]);
      expect(called).toEqual(['tool']);
      expect(log.writes).toEqual([]);
      expect(published().map((e) => [e.seq, e.type])).toEqual([
        [1, 'run_created'],
        [2, 'plan_ready'],
        [3, 'run_started'],
        [4, 'step_start'],
      ]);
      // Later events are appended as usual.
      log.hold = false;
      await w.emit('step_complete', {
        stepId: 's',
        tool: 'wait',
        attempt: 1,
        result: null,
        truncated: false,
        durationMs: 0,
      });
      expect(log.writes.map((x) => x.types)).toEqual([['step_complete']]);
      expect(failures).toEqual([]);
    });

    it('writes a run that emits nothing at once (a draft) when the turn is over, and what it emits later after it', async () => {
      const log = new MemoryLog();
      log.hold = false;
      const calls: Array<{ types: RunEventType[]; update: unknown }> = [];
      const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
      expect((await w.create([created], creation(calls))).map((e) => e.type)).toEqual(['run_created']);
      await w.emit('plan_token', token('later'));
      expect(calls).toEqual([{ types: ['run_created'], update: undefined }]);
      expect(log.writes.map((x) => x.types)).toEqual([['plan_token']]);
    });

    it('writes a first turn that changes more than a new row carries after the row', async () => {
      const log = new MemoryLog();
      log.hold = false;
      const calls: Array<{ types: RunEventType[]; update: unknown }> = [];
      const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
      const stored = w.create([created], creation(calls));
      const cancelled = w.emit(
        'cancelled',
        { message: 'killed' },
        { status: 'cancelled', finished: true, release: true },
      );
      await stored;
      await cancelled;
      expect(calls).toEqual([{ types: ['run_created'], update: undefined }]);
      expect(log.writes).toEqual([
        { types: ['cancelled'], update: { status: 'cancelled', finished: true, release: true } },
      ]);
      expect(published().map((e) => e.type)).toEqual(['run_created', 'cancelled']);
    });

    it('refuses what the run emitted when its row could not be written, calls no tool, and leaves the failure to the creator', async () => {
      const log = new MemoryLog();
      const failures: unknown[] = [];
      const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', (e) =>
        failures.push(e),
      );
      const called: string[] = [];
      const refused = new Error('over the foreground limit');
      const stored = w.create([created], creation([], refused));
      const first = firstTurn(w, called);
      await expect(stored).rejects.toBe(refused);
      await expect(first).rejects.toBe(refused);
      await expect(w.emit('plan_token', token('later'))).rejects.toBe(refused);
      expect(called).toEqual([]);
      expect(failures).toEqual([]);
      expect(log.writes).toEqual([]);
      expect(published()).toEqual([]);
    });

    it('is refused once the writer has written', async () => {
      const log = new MemoryLog();
      log.hold = false;
      const w = new RunWriter(repoOf(log), new RunEventOutbox(bus, 0), RUN, 'replica', () => undefined);
      await w.emit('plan_token', token('a'));
      const calls: Array<{ types: RunEventType[]; update: unknown }> = [];
      await expect(w.create([created], creation(calls))).rejects.toThrow(
        `run ${RUN} is created by its writer's first write`,
      );
      expect(calls).toEqual([]);
    });
  });
});
