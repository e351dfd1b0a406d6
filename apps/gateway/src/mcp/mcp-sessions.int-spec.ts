import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '@switchyard/server-observability';
import { createRedis, type Redis } from '@switchyard/server-queue';
import { testConfig, uniquePrefix, waitFor } from '@switchyard/testing';
import { McpSessionCache } from './mcp-session-cache';
import { McpSessions, STANDALONE_STREAM, type McpStreamEvent } from './mcp-sessions';
import { McpSubscriber } from './mcp-subscriber';
import type { FeedListener } from '../runs/run-feed';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n },
});
/** A live listener that only hears (a Redis-fed log never calls `missed`: it ends instead). */
const hearing = (heard: (e: McpStreamEvent) => unknown): FeedListener<McpStreamEvent> => ({
  heard: (e) => void heard(e),
  missed: () => undefined,
});
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { content: [] } });
const progressOf = (events: Array<{ message: unknown }>) =>
  events.map((e) => (e.message as { params?: { progress: number } }).params?.progress ?? 'answer');

/** One gateway replica's MCP session parts, on connections of its own. */
interface Replica {
  redis: Redis;
  subscriber: McpSubscriber;
  cache: McpSessionCache;
  sessions: McpSessions;
}

/** Real Redis, two "replicas" (each its own connections): what one stores the other sees, live too. */
describe('McpSessions', () => {
  const config = testConfig('gateway', { NATS_SUBJECT_PREFIX: uniquePrefix('mcpsess') });
  const logger = createLogger({ service: 'gateway', level: 'fatal', instanceId: 'mcp-sessions-test' });
  let admin: Redis;
  let a: Replica;
  let b: Replica;
  const alice = randomUUID();
  const bob = randomUUID();

  async function replica(name: string): Promise<Replica> {
    const redis = createRedis({ url: 'redis://127.0.0.1:6379', name });
    await redis.connect();
    const subscriber = new McpSubscriber(redis, logger);
    subscriber.onModuleInit();
    const cache = new McpSessionCache(redis, subscriber, logger);
    cache.onModuleInit();
    await waitFor(() => subscriber.trackingId !== undefined, 30_000, 20);
    return { redis, subscriber, cache, sessions: new McpSessions(redis, config, cache, subscriber, logger) };
  }

  beforeAll(async () => {
    admin = createRedis({ url: 'redis://127.0.0.1:6379', name: 'mcp-sessions-admin' });
    await admin.connect();
    [a, b] = await Promise.all([replica('mcp-sessions-a'), replica('mcp-sessions-b')]);
  });

  afterAll(async () => {
    for (const r of [a, b]) {
      r.cache.onModuleDestroy();
      r.subscriber.onModuleDestroy();
      await r.redis.quit();
    }
    await admin.quit();
  });

  it('finds a session made on another replica for its owner only, and none after it ended', async () => {
    const id = await a.sessions.create(alice);
    expect(await b.sessions.find(id, alice)).toMatchObject({ ownerId: alice });
    expect(await b.sessions.find(id, bob)).toBeUndefined();
    expect(await b.sessions.find(randomUUID(), alice)).toBeUndefined();
    expect(await b.sessions.find('not-an-id', alice)).toBeUndefined();
    await a.sessions.end(id);
    expect(await a.sessions.find(id, alice)).toBeUndefined();
    // B had it cached: Redis tells B's subscriber that the key changed.
    await waitFor(async () => (await b.sessions.find(id, alice)) === undefined, 10_000, 10);
  });

  it('answers a cached session without a round trip, and drops it when the key changes', async () => {
    const id = await a.sessions.create(alice);
    expect(await b.sessions.find(id, alice)).toBeDefined();
    const key = `sy:${config.nats.subjectPrefix}mcp:s:${id}`;
    // Nothing read from Redis on B from here on while the entry is cached.
    const before = b.cache.reads;
    for (let i = 0; i < 20; i++) expect(await b.sessions.find(id, alice)).toBeDefined();
    expect(b.cache.reads).toBe(before);
    // Written by someone else (here: another owner's session under the same id): B reads it again.
    await admin.set(key, JSON.stringify({ ownerId: bob, createdAt: new Date().toISOString() }), 'EX', 60);
    await waitFor(async () => (await b.sessions.find(id, bob)) !== undefined, 10_000, 10);
    expect(await b.sessions.find(id, alice)).toBeUndefined();
  });

  it('caches nothing it could miss an invalidation for: a lost subscriber flushes, a new one tracks again', async () => {
    const id = await a.sessions.create(alice);
    expect(await b.sessions.find(id, alice)).toBeDefined();
    const old = b.subscriber.trackingId as number;
    await admin.client('KILL', 'ID', String(old));
    // The invalidation of this delete went to a connection that is gone.
    await admin.del(`sy:${config.nats.subjectPrefix}mcp:s:${id}`);
    await waitFor(async () => (await b.sessions.find(id, alice)) === undefined, 10_000, 10);
    // Reconnected with another id; a fresh entry is tracked through it.
    await waitFor(() => b.subscriber.trackingId !== undefined && b.subscriber.trackingId !== old, 30_000, 20);
    const again = await a.sessions.create(alice);
    expect(await b.sessions.find(again, alice)).toBeDefined();
    const reads = b.cache.reads;
    for (let i = 0; i < 5; i++) expect(await b.sessions.find(again, alice)).toBeDefined();
    expect(b.cache.reads).toBe(reads); // cached again
    await a.sessions.end(again);
    await waitFor(async () => (await b.sessions.find(again, alice)) === undefined, 10_000, 10);
  });

  it("keeps a request stream's messages (not its priming event) for a resume on another replica, in order", async () => {
    const id = await a.sessions.create(alice);
    const storeA = a.sessions.eventStore(id);
    expect(await storeA.storeEvent('stream-1', {} as JSONRPCMessage)).toBe('stream-1.0');
    const first = await storeA.storeEvent('stream-1', note(1));
    expect(first).toBe('stream-1.1');
    await storeA.storeEvent('stream-2', note(99));
    await storeA.storeEvent('stream-1', note(2));
    const last = await storeA.storeEvent('stream-1', answer(5));
    expect(last).toBe('stream-1.3');
    // Written behind the answer: in Redis once the turn's batch has gone.
    await a.sessions.forgetCall(id, 'nothing');
    const sent: Array<[string, unknown]> = [];
    const stream = await b.sessions.eventStore(id).replayEventsAfter(first, {
      send: async (eventId, message) => void sent.push([eventId, message]),
    });
    expect(stream).toBe('stream-1');
    expect(sent).toEqual([
      ['stream-1.2', note(2)],
      ['stream-1.3', answer(5)],
    ]);
    expect(progressOf(await b.sessions.readAfter(id, 'stream-1', 0, 10))).toEqual([1, 2, 'answer']);
    expect(
      b.sessions
        .log(id, 'stream-1', () => undefined)
        .isTerminal({ seq: 3, type: 'message', message: answer(5) }),
    ).toBe(true);
    expect(
      b.sessions
        .log(id, STANDALONE_STREAM, () => undefined)
        .isTerminal({ seq: 3, type: 'message', message: answer(5) }),
    ).toBe(false);
  });

  it('delivers what is sent after a follower subscribed, live on another replica: stored or live, never lost', async () => {
    const id = await a.sessions.create(alice);
    const storeA = a.sessions.eventStore(id);
    await storeA.storeEvent('s', note(1));
    await waitFor(async () => (await b.sessions.readAfter(id, 's', 0, 10)).length === 1, 10_000, 10);
    const live: McpStreamEvent[] = [];
    let lost = false;
    const off = await b.sessions.log(id, 's', () => (lost = true)).follow(hearing((e) => live.push(e)));
    await storeA.storeEvent('s', note(2));
    await storeA.storeEvent('s', answer(3));
    await waitFor(() => live.length === 2, 10_000, 10);
    // Sent before the subscription: in the store. Sent after: live. Together every message, once.
    const stored = await b.sessions.readAfter(id, 's', 0, 10);
    expect(progressOf(stored)).toEqual([1, 2, 'answer']);
    expect(live.map((e) => e.seq)).toEqual([2, 3]);
    off();
    expect(lost).toBe(false);
  });

  it('numbers the standalone stream in Redis across its writers on both replicas, and publishes it', async () => {
    const id = await a.sessions.create(alice);
    const live: number[] = [];
    const off = await a.sessions
      .log(id, STANDALONE_STREAM, () => undefined)
      .follow(hearing((e) => live.push(e.seq)));
    const changed: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/tools/list_changed' };
    const ids = [
      await a.sessions.storeStandalone(id, changed),
      await b.sessions.eventStore(id).storeEvent(STANDALONE_STREAM, changed),
      await a.sessions.storeStandalone(id, changed),
    ];
    expect(ids).toEqual([`${STANDALONE_STREAM}.1`, `${STANDALONE_STREAM}.2`, `${STANDALONE_STREAM}.3`]);
    await waitFor(() => live.length === 3, 10_000, 10);
    expect(live).toEqual([1, 2, 3]);
    off();
  });

  it("tells a follower when the live feed broke (it must end; its client resumes), and finds nothing of another session's", async () => {
    const mine = await a.sessions.create(alice);
    const theirs = await a.sessions.create(bob);
    await a.sessions.eventStore(theirs).storeEvent('s', note(1));
    const eventId = await a.sessions.eventStore(theirs).storeEvent('s', note(2));
    await a.sessions.forgetCall(theirs, 'flush');
    const sent: unknown[] = [];
    await b.sessions.eventStore(mine).replayEventsAfter(eventId.replace(/\d+$/, '0'), {
      send: async (_, m) => void sent.push(m),
    });
    expect(sent).toEqual([]);
    let lost = false;
    await b.sessions.log(mine, 's', () => (lost = true)).follow(hearing(() => undefined));
    await admin.client('KILL', 'ID', String(b.subscriber.trackingId));
    await waitFor(() => lost, 10_000, 10);
    await waitFor(() => b.subscriber.trackingId !== undefined, 30_000, 20);
  });

  it('hands a cancel the run of the call, or leaves a mark when the run is not there yet', async () => {
    const id = await a.sessions.create(alice);
    const run = randomUUID();
    expect(await a.sessions.registerCall(id, 7, run)).toBe(false);
    expect(await b.sessions.cancelCall(id, 7)).toBe(run);
    // Cancelled first: the call learns it when it registers its run, on any replica.
    expect(await b.sessions.cancelCall(id, 'early')).toBeUndefined();
    expect(await a.sessions.registerCall(id, 'early', randomUUID())).toBe(true);
    await a.sessions.forgetCall(id, 7);
    expect(await b.sessions.cancelCall(id, 7)).toBeUndefined();
  });
});
