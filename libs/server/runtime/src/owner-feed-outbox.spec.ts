import { Writable } from 'node:stream';
import { Events, OWNER_FEED_BATCH_LIMIT, type OwnerFeedEvent } from '@switchyard/contracts';
import { createLogger } from '@switchyard/server-observability';
import { InMemoryBus } from '@switchyard/testing';
import { OwnerFeedOutbox } from './owner-feed-outbox';

const A = '00000000-0000-4000-8000-0000000000a1';
const B = '00000000-0000-4000-8000-0000000000b1';
const task = (n: number): OwnerFeedEvent => ({
  kind: 'task',
  taskId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  status: 'running',
});
const turn = () => new Promise((r) => setImmediate(r));

function setup() {
  const lines: string[] = [];
  const logger = createLogger({
    service: 'test',
    level: 'warn',
    instanceId: 'test',
    destination: new Writable({ write: (c, _e, done) => (lines.push(String(c)), done()) }),
  });
  const bus = new InMemoryBus();
  return { bus, lines, feed: new OwnerFeedOutbox(bus, logger) };
}

describe('OwnerFeedOutbox', () => {
  it('sends what one turn told an owner in one message, in order; an event alone as it is; owners apart', async () => {
    const { bus, feed } = setup();
    feed.tell(A, task(1));
    feed.tell(B, task(2));
    feed.tell(A, task(3));
    expect(bus.sent(Events.ownerFeed(A))).toEqual([]); // not before the turn ends
    await turn();
    expect(bus.sent(Events.ownerFeed(A))).toEqual([{ kind: 'batch', events: [task(1), task(3)] }]);
    expect(bus.sent(Events.ownerFeed(B))).toEqual([task(2)]);
    // The next turn's events are a message of their own.
    feed.tell(A, task(4));
    await turn();
    expect(bus.sent(Events.ownerFeed(A))).toEqual([{ kind: 'batch', events: [task(1), task(3)] }, task(4)]);
  });

  it('splits more than a message carries, keeping the order', async () => {
    const { bus, feed } = setup();
    const told = Array.from({ length: OWNER_FEED_BATCH_LIMIT + 2 }, (_, i) => task(i));
    for (const e of told) feed.tell(A, e);
    await turn();
    const sent = bus.sent(Events.ownerFeed(A));
    expect(sent).toEqual([
      { kind: 'batch', events: told.slice(0, OWNER_FEED_BATCH_LIMIT) },
      { kind: 'batch', events: told.slice(OWNER_FEED_BATCH_LIMIT) },
    ]);
  });

  it('a message the bus refuses is logged, never thrown at whoever told it; the others still leave', async () => {
    const { bus, feed, lines } = setup();
    const emit = bus.emit.bind(bus);
    jest.spyOn(bus, 'emit').mockImplementation((contract, payload) => {
      if (contract.subject.endsWith(A)) throw new Error('NATS is away');
      emit(contract, payload);
    });
    feed.tell(A, task(1));
    feed.tell(B, task(2));
    await turn();
    expect(bus.sent(Events.ownerFeed(B))).toEqual([task(2)]);
    expect(lines.join('')).toContain('owner feed not told');
  });

  it('sends what is pending when the module stops', () => {
    const { bus, feed } = setup();
    feed.tell(A, task(1));
    feed.onModuleDestroy();
    expect(bus.sent(Events.ownerFeed(A))).toEqual([task(1)]);
  });
});
