import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Events, type RunEvent } from '@switchyard/contracts';
import { Bus } from '@switchyard/server-bus';
import { openOwnerFeed, OwnServer, testConfig, waitFor } from '@switchyard/testing';
import type { Principal } from '../auth/principal';
import { OwnerFeed } from './owner-feed';
import { RunFeed, type FeedListener } from './run-feed';

class Recording implements FeedListener<RunEvent> {
  readonly heardSeqs: number[] = [];
  misses = 0;
  heard(e: RunEvent): void {
    this.heardSeqs.push(e.seq);
  }
  missed(): void {
    this.misses++;
  }
}

const started = (runId: string, seq: number): RunEvent => ({
  runId,
  seq,
  type: 'run_started',
  at: new Date().toISOString(),
  data: { steps: 1, reused: 0 },
});

/**
 * The gateway's live run feed across a NATS restart (a nats-server of the test's own): a follow
 * begun while the connection is away resolves once it is back instead of failing (a failure ended
 * the SSE stream with no frame); followers already in place are told they may have missed events,
 * so they read them from Postgres; the owner feed's open streams are told to refetch.
 */
describe('live feeds across a NATS restart (real nats-server)', () => {
  let nats: OwnServer;
  let bus: Bus;
  let feed: RunFeed;
  let owners: OwnerFeed;
  let server: Server;
  const ownerId = randomUUID();

  beforeAll(async () => {
    nats = await OwnServer.nats();
    bus = await Bus.connect({
      servers: [nats.url],
      name: 'run-feed-spec',
      subjectPrefix: `runfeed.${process.pid}.`,
      defaultTimeoutMs: 2_000,
    });
    feed = new RunFeed(bus, testConfig('gateway', { DATABASE_URL: 'postgres://unused/none' }));
    owners = new OwnerFeed(bus, feed);
    const caller = { owner: { id: ownerId, role: 'user' } } as unknown as Principal;
    server = createServer((req, res) => void owners.open(caller, undefined, req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    owners?.onModuleDestroy();
    feed?.onModuleDestroy();
    await bus?.close();
    await nats?.stop();
  });

  it('keeps followers across the drop: a follow made meanwhile is confirmed after it, the others hear `missed`', async () => {
    const before = randomUUID();
    const during = randomUUID();
    const early = new Recording();
    const offEarly = await feed.follow(before, early);

    await nats.stop();
    const late = new Recording();
    let offLate: (() => void) | undefined;
    const following = feed.follow(during, late).then((off) => (offLate = off));
    await nats.start();
    await following;
    await waitFor(async () => (early.misses > 0 ? true : undefined), 10_000);
    expect(early.misses).toBe(1);

    // Both subscriptions are in place again: what is published now is heard live.
    bus.emit(Events.run(before), { events: [started(before, 2)] });
    bus.emit(Events.run(during), { events: [started(during, 1)] });
    await waitFor(async () => (early.heardSeqs.length && late.heardSeqs.length ? true : undefined), 10_000);
    expect(early.heardSeqs).toEqual([2]);
    expect(late.heardSeqs).toEqual([1]);
    offEarly();
    offLate?.();
  });

  it("tells the owner feed's open streams to refetch after the drop (what changed meanwhile was never heard)", async () => {
    const stream = await openOwnerFeed(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    try {
      const changed = { kind: 'task', taskId: randomUUID(), status: 'queued' } as const;
      bus.emit(Events.ownerFeed(ownerId), changed);
      await stream.until((f) => f.some((x) => x.event === 'task'), 10_000);
      await nats.stop();
      await nats.start();
      await stream.until((f) => f.some((x) => x.event === 'resync'), 10_000);
      expect(stream.frames.map((f) => f.event)).toEqual(['task', 'resync']);
    } finally {
      stream.close();
    }
  });

  it('Bus.subscribed: a flush lost with the connection is tried again once it is back; a closed bus rejects', async () => {
    await nats.stop();
    const plain = bus.flush().then(
      () => 'flushed',
      () => 'lost',
    );
    const confirmed = bus.subscribed().then(() => 'confirmed');
    await nats.start();
    expect(await confirmed).toBe('confirmed');
    expect(await plain).toBe('lost');

    const other = await Bus.connect({
      servers: [nats.url],
      name: 'run-feed-spec-closed',
      subjectPrefix: `runfeed.${process.pid}.`,
      defaultTimeoutMs: 2_000,
    });
    await other.close();
    await expect(other.subscribed()).rejects.toThrow();
  });
});
