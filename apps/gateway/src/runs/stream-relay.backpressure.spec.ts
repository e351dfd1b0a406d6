import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RunEventsReader } from '@switchyard/server-db-run-events';
import type { Logger } from '@switchyard/server-observability';
import type { RunFeed } from './run-feed';
import { StreamRelay, type EventLog } from './stream-relay';

interface Ev {
  seq: number;
  type: string;
}

/** A response whose socket takes `room` frames, then is full until `drain()`. */
class SlowResponse extends EventEmitter {
  readonly frames: number[] = [];
  ended = false;
  room: number;
  constructor(room: number) {
    super();
    this.room = room;
  }
  writeHead() {
    return this;
  }
  cork() {}
  uncork() {}
  write(chunk: string): boolean {
    const id = /^id: (\d+)/.exec(chunk)?.[1];
    if (id) this.frames.push(Number(id));
    if (id) this.room--;
    return this.room > 0;
  }
  end() {
    this.ended = true;
  }
  drain(room: number) {
    this.room = room;
    this.emit('drain');
  }
}

const settle = () => new Promise((r) => setImmediate(r));

describe('StreamRelay with a client that reads slower than events come', () => {
  it('stops taking live events once the socket is full, and goes on from Postgres after it drains: no gap, no duplicate', async () => {
    const stored: Ev[] = [];
    let live: ((e: Ev) => void) | undefined;
    const reads: number[] = [];
    const log: EventLog<Ev> = {
      label: { runId: 'r' },
      follow: async (l) => {
        live = (e) => l.heard(e);
        return () => (live = undefined);
      },
      readAfter: async (after, limit) => {
        reads.push(after);
        return stored.filter((e) => e.seq > after).slice(0, limit);
      },
      isTerminal: (e) => e.type === 'complete',
    };
    const publish = (type = 'step') => {
      const e = { seq: stored.length + 1, type };
      stored.push(e);
      live?.(e);
    };
    const feed = { beat: () => undefined, unbeat: () => undefined } as unknown as RunFeed;
    const relay = new StreamRelay({} as RunEventsReader, feed, {
      warn: () => undefined,
    } as unknown as Logger);
    const res = new SlowResponse(3);
    const req = new EventEmitter() as IncomingMessage;
    await relay.relay(log, 0, req, res as unknown as ServerResponse);
    await settle();

    for (let i = 0; i < 10; i++) publish();
    await settle();
    // Full after three frames: the other seven stay in Postgres, none is queued here.
    expect(res.frames).toEqual([1, 2, 3]);

    res.drain(4);
    await settle();
    await settle();
    expect(res.frames).toEqual([1, 2, 3, 4, 5, 6, 7]);

    for (let i = 0; i < 5; i++) publish();
    publish('complete');
    res.drain(100);
    for (let i = 0; i < 5; i++) await settle();
    expect(res.frames).toEqual(stored.map((e) => e.seq));
    expect(res.ended).toBe(true);
    expect(reads.length).toBeGreaterThan(1); // the rest came from the store, read after each drain
  });
});
