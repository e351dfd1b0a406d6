import { Events, RUN_EVENT_BATCH_BYTES, type RunEvent } from '@switchyard/contracts';
import { InMemoryBus } from '@switchyard/testing';
import { RunEventOutbox } from './run-event-outbox';

const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

const step = (runId: string, seq: number): RunEvent => ({
  type: 'step_complete',
  runId,
  seq,
  at: '2026-12-04T00:00:00.000Z',
  data: { stepId: `s${seq}`, tool: 'wait', result: null, attempt: 1, truncated: false },
});
const complete = (runId: string, seq: number): RunEvent => ({
  type: 'complete',
  runId,
  seq,
  at: '2026-12-04T00:00:00.000Z',
  data: { summary: 'done', result: null, results: {} },
});

describe('RunEventOutbox', () => {
  let bus: InMemoryBus;
  let clock: number;
  const seqs = (runId: string) => bus.sent(Events.run(runId)).flatMap((b) => b.events.map((e) => e.seq));
  /** The messages sent on a run's subject, as the sequence numbers each carried. */
  const messages = (runId: string) => bus.sent(Events.run(runId)).map((b) => b.events.map((e) => e.seq));

  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['queueMicrotask', 'nextTick', 'setImmediate'] });
    bus = new InMemoryBus();
    clock = 1_000;
  });
  afterEach(() => jest.useRealTimers());

  const outbox = (windowMs: number) => new RunEventOutbox(bus, windowMs, () => clock);
  const later = (ms: number) => {
    clock += ms;
    jest.advanceTimersByTime(ms);
  };

  it('sends an event after a quiet spell at once, and holds what follows within the window', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    expect(seqs(A)).toEqual([1]);

    later(2);
    out.publish([step(A, 2), step(A, 3)]);
    later(3);
    out.publish([step(B, 1)]);
    out.publish([step(A, 4)]);
    expect(seqs(A)).toEqual([1]);
    expect(seqs(B)).toEqual([]);

    later(4); // 9 ms after the first write
    expect(seqs(A)).toEqual([1]);
    later(1); // the window closes: everything held leaves, each run in its order
    expect(seqs(A)).toEqual([1, 2, 3, 4]);
    expect(seqs(B)).toEqual([1]);
  });

  it('sends a gate at once, with everything held before it', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    later(1);
    out.publish([step(A, 2)]);
    out.publish([
      {
        type: 'plan_approval_requested',
        runId: A,
        seq: 3,
        at: '2026-12-04T00:00:00.000Z',
        data: { gate: 'plan', steps: 3, nonReadSteps: [], reusedSteps: [] },
      } as RunEvent,
    ]);
    expect(seqs(A)).toEqual([1, 2, 3]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends a run’s end at once, with everything held before it, and leaves no timer behind', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    later(1);
    out.publish([step(B, 1)]);
    out.publish([step(A, 2)]);
    out.publish([complete(A, 3)]);
    expect(seqs(A)).toEqual([1, 2, 3]);
    expect(seqs(B)).toEqual([1]);
    expect(jest.getTimerCount()).toBe(0);
    // The end was a write: what comes right after it is held for a window again.
    out.publish([step(B, 2)]);
    expect(seqs(B)).toEqual([1]);
    later(10);
    expect(seqs(B)).toEqual([1, 2]);
  });

  it('with a window of 0 sends every batch as it comes', () => {
    const out = outbox(0);
    for (let seq = 1; seq <= 3; seq++) out.publish([step(A, seq)]);
    expect(seqs(A)).toEqual([1, 2, 3]);
    expect(jest.getTimerCount()).toBe(0);
  });

  it('sends events stored elsewhere at once, after what it holds, checked against the catalog', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    later(1);
    out.publish([step(A, 2)]);
    out.publishUnchecked([step(A, 3)]);
    expect(seqs(A)).toEqual([1, 2, 3]);
    expect(() =>
      out.publishUnchecked([{ ...step(A, 4), data: { stepId: 7 } } as unknown as RunEvent]),
    ).toThrow();
    expect(seqs(A)).toEqual([1, 2, 3]);
  });

  it('a chain of fast steps costs one bus write per window, not one per step', () => {
    const out = outbox(10);
    const sentAt: number[] = [];
    const publish = bus.publishJson.bind(bus);
    jest.spyOn(bus, 'publishJson').mockImplementation((subject, json) => {
      sentAt.push(clock);
      publish(subject, json);
    });
    for (let seq = 1; seq <= 100; seq++) {
      out.publish([step(A, seq)]);
      later(1); // a step every millisecond
    }
    later(10);
    expect(seqs(A)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    // The first step on its own, then ten steps per window: 11 writes, not 100, one message each.
    expect(new Set(sentAt).size).toBe(11);
    expect(sentAt).toHaveLength(11);
    expect(messages(A)[1]).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it('sends what leaves together as one message per run, each in its order', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    later(1);
    out.publish([step(A, 2), step(A, 3)]);
    out.publish([step(B, 1)]);
    out.publish([step(A, 4), step(B, 2)]);
    later(10);
    expect(messages(A)).toEqual([[1], [2, 3, 4]]);
    expect(messages(B)).toEqual([[1, 2]]);
  });

  it('cuts a batch before RUN_EVENT_BATCH_BYTES of JSON, never inside an event', () => {
    const out = outbox(0);
    const big = (seq: number): RunEvent => ({
      type: 'step_complete',
      runId: A,
      seq,
      at: '2026-12-04T00:00:00.000Z',
      data: {
        stepId: `s${seq}`,
        tool: 'wait',
        result: 'x'.repeat(RUN_EVENT_BATCH_BYTES / 3),
        attempt: 1,
        truncated: false,
      },
    });
    out.publish([1, 2, 3, 4, 5].map(big));
    // Each event is a third of the budget and a little more: two fit in a message.
    expect(messages(A)).toEqual([[1, 2], [3, 4], [5]]);
    const sizes = bus.sent(Events.run(A)).map((b) => JSON.stringify(b).length);
    for (const size of sizes) expect(size).toBeLessThanOrEqual(RUN_EVENT_BATCH_BYTES + 64);
  });

  it('keeps going when the bus refuses a message (the events are stored; gateways read them from the log)', () => {
    const out = outbox(0);
    const publish = bus.publishJson.bind(bus);
    jest.spyOn(bus, 'publishJson').mockImplementationOnce(() => {
      throw new Error('MAX_PAYLOAD_EXCEEDED');
    });
    out.publish([step(A, 1)]);
    jest.spyOn(bus, 'publishJson').mockImplementation(publish);
    out.publish([step(A, 2)]);
    expect(seqs(A)).toEqual([2]);
  });

  it('sends what it holds when the replica shuts down', () => {
    const out = outbox(10);
    out.publish([step(A, 1)]);
    out.publish([step(A, 2)]);
    out.beforeApplicationShutdown();
    expect(seqs(A)).toEqual([1, 2]);
    expect(jest.getTimerCount()).toBe(0);
  });
});
