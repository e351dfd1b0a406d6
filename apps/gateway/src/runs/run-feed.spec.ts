import { randomUUID } from 'node:crypto';
import { RunEvent } from '@switchyard/contracts';
import { runEventsOf } from './run-feed';

const runId = randomUUID();
const event = (seq: number, over: Record<string, unknown> = {}) => ({
  runId,
  seq,
  type: 'run_started',
  at: '2026-12-05T07:00:00.000Z',
  data: { steps: 2, reused: 0 },
  ...over,
});

describe('runEventsOf: what the live relay takes from a message on a run subject', () => {
  it('takes a batch of the run, in order, as sent', () => {
    const batch = { events: [event(3), event(4, { type: 'cancel_requested', data: { message: 'stop' } })] };
    const events = runEventsOf(batch, runId);
    expect(events).toBe(batch.events);
    expect(events.map((e) => e.seq)).toEqual([3, 4]);
    // The fixture is a real catalog event: the writer's parse accepts what the relay takes.
    expect(batch.events.every((e) => RunEvent.safeParse(e).success)).toBe(true);
  });

  // A message the relay cannot place is dropped whole (a gap, if any, is then filled from the log).
  it.each([
    ['no message', null],
    ['a string', 'events'],
    ['no events', {}],
    ['events not a list', { events: { 0: event(1) } }],
    ['an event of another run', { events: [event(1), event(2, { runId: randomUUID() })] }],
    ['an event naming no run', { events: [event(1, { runId: undefined })] }],
    ['a null event', { events: [event(1), null] }],
    ['a sequence number as text', { events: [event(1, { seq: '1' })] }],
    ['a fractional sequence number', { events: [event(1.5)] }],
    ['an unsafe sequence number', { events: [event(2 ** 60)] }],
    ['no type', { events: [event(1, { type: undefined })] }],
    ['a type that is not text', { events: [event(1, { type: 7 })] }],
  ])('drops %s', (_what, message) => {
    expect(runEventsOf(message, runId)).toHaveLength(0);
  });
});
