import { Events, type RunEvent } from '@switchyard/contracts';
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
  const seqs = (runId: string) => bus.sent(Events.run(runId)).map((e) => e.seq);

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
    const publish = bus.publish.bind(bus);
    jest.spyOn(bus, 'publish').mockImplementation((subject, payload) => {
      sentAt.push(clock);
      publish(subject, payload);
    });
    for (let seq = 1; seq <= 100; seq++) {
      out.publish([step(A, seq)]);
      later(1); // a step every millisecond
    }
    later(10);
    expect(seqs(A)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    // The first step on its own, then ten steps per window: 11 writes, not 100.
    expect(new Set(sentAt).size).toBe(11);
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
