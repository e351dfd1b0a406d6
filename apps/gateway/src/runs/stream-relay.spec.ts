import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunEventsReader } from '@switchyard/server-db-run-events';
import type { Logger } from '@switchyard/server-observability';
import type { FeedListener, RunFeed } from './run-feed';
import { StreamRelay, type EventLog } from './stream-relay';

interface Event {
  seq: number;
  type: string;
}

/**
 * The relay over a real HTTP server: a stored history whose last event is terminal is sent whole,
 * then the stream ends. Frames of one turn are corked into one write; ending the response while
 * corked drops them on Node 22 (Node 20 flushed), so the relay uncorks first.
 */
describe('StreamRelay', () => {
  let server: Server;
  const feed = { beat: () => undefined, unbeat: () => undefined } as unknown as RunFeed;
  const logger = { warn: () => undefined } as unknown as Logger;
  const relay = new StreamRelay({} as RunEventsReader, feed, logger);

  const history: Event[] = [
    { seq: 1, type: 'run_created' },
    { seq: 2, type: 'run_started' },
    { seq: 3, type: 'complete' },
  ];
  const log: EventLog<Event> = {
    label: { runId: 'r1' },
    follow: () => Promise.resolve(() => undefined),
    readAfter: (after) => Promise.resolve(history.filter((e) => e.seq > after)),
    isTerminal: (e) => e.type === 'complete',
  };

  beforeAll(async () => {
    server = createServer((req, res) => void relay.relay(log, 0, req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reads the log once when live events arrive before the subscription is confirmed', async () => {
    let reads = 0;
    const stored: Event[] = [
      { seq: 1, type: 'run_created' },
      { seq: 2, type: 'run_started' },
    ];
    const early: EventLog<Event> = {
      ...log,
      // The bus delivers an event while the subscription's flush is still on its way; the run's
      // end comes live once it is in place.
      follow: (listener) => {
        listener.heard({ seq: 2, type: 'run_started' });
        return new Promise((resolve) =>
          setImmediate(() => {
            resolve(() => undefined);
            setImmediate(() => {
              stored.push({ seq: 3, type: 'complete' });
              listener.heard({ seq: 3, type: 'complete' });
            });
          }),
        );
      },
      readAfter: (after) => {
        reads++;
        return Promise.resolve(stored.filter((e) => e.seq > after));
      },
    };
    const one = createServer((req, res) => void relay.relay(early, 0, req, res));
    await new Promise<void>((resolve) => one.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(one.address() as AddressInfo).port}/`);
      const ids = [...(await res.text()).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids).toEqual([1, 2, 3]);
      expect(reads).toBe(1);
    } finally {
      await new Promise<void>((resolve) => one.close(() => resolve()));
    }
  });

  it('reads what was published while the NATS connection was away, and stays open across the drop', async () => {
    const stored: Event[] = [{ seq: 1, type: 'run_created' }];
    let heard: FeedListener<Event> | undefined;
    const reads: number[] = [];
    const dropping: EventLog<Event> = {
      ...log,
      follow: (listener) => {
        heard = listener;
        return Promise.resolve(() => undefined);
      },
      readAfter: (after) => {
        reads.push(after);
        return Promise.resolve(stored.filter((e) => e.seq > after));
      },
    };
    const one = createServer((req, res) => void relay.relay(dropping, 0, req, res));
    await new Promise<void>((resolve) => one.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(one.address() as AddressInfo).port}/`);
      const text = res.text();
      while (reads.length < 1) await new Promise((r) => setImmediate(r));
      // Published while the connection was away: stored, never heard live, the run's end among them.
      stored.push({ seq: 2, type: 'run_started' }, { seq: 3, type: 'complete' });
      heard?.missed();
      const ids = [...(await text).matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
      expect(ids).toEqual([1, 2, 3]);
      expect(reads).toEqual([0, 1]);
    } finally {
      await new Promise<void>((resolve) => one.close(() => resolve()));
    }
  });

  it('sends every stored frame, the terminal one included, before it ends the stream', async () => {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const text = await res.text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual([1, 2, 3]);
    expect(text).toContain('event: complete\n');
  });
});
