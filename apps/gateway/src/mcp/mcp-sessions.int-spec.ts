import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createRedis, type Redis } from '@switchyard/server-queue';
import { testConfig, uniquePrefix } from '@switchyard/testing';
import { McpSessions } from './mcp-sessions';

const note = (n: number): JSONRPCMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: n },
});

/** Real Redis, two "replicas" (two instances on their own connections): what one stores the other sees. */
describe('McpSessions', () => {
  let redisA: Redis;
  let redisB: Redis;
  let a: McpSessions;
  let b: McpSessions;
  const config = testConfig('gateway', { NATS_SUBJECT_PREFIX: uniquePrefix('mcpsess') });
  const alice = randomUUID();
  const bob = randomUUID();

  beforeAll(async () => {
    redisA = createRedis({ url: 'redis://127.0.0.1:6379', name: 'mcp-sessions-a' });
    redisB = createRedis({ url: 'redis://127.0.0.1:6379', name: 'mcp-sessions-b' });
    await Promise.all([redisA.connect(), redisB.connect()]);
    a = new McpSessions(redisA, config);
    b = new McpSessions(redisB, config);
  });

  afterAll(async () => {
    await Promise.all([redisA.quit(), redisB.quit()]);
  });

  it('finds a session made on another replica for its owner only, and none after it ended', async () => {
    const id = await a.create(alice);
    expect(await b.find(id, alice)).toMatchObject({ ownerId: alice });
    expect(await b.find(id, bob)).toBeUndefined();
    expect(await b.find(randomUUID(), alice)).toBeUndefined();
    expect(await b.find('not-an-id', alice)).toBeUndefined();
    await b.end(id);
    expect(await a.find(id, alice)).toBeUndefined();
  });

  it('replays a stream after a Last-Event-ID on another replica, in order, without priming events', async () => {
    const id = await a.create(alice);
    const storeA = a.eventStore(id);
    await storeA.storeEvent('stream-1', {} as JSONRPCMessage); // a priming event: an id, no message
    const first = await storeA.storeEvent('stream-1', note(1));
    await storeA.storeEvent('stream-2', note(99));
    await storeA.storeEvent('stream-1', note(2));
    await storeA.storeEvent('stream-1', note(3));
    const storeB = b.eventStore(id);
    expect(await storeB.getStreamIdForEventId?.(first)).toBe('stream-1');
    const sent: Array<[string, unknown]> = [];
    const stream = await storeB.replayEventsAfter(first, {
      send: async (eventId, message) => void sent.push([eventId, message]),
    });
    expect(stream).toBe('stream-1');
    expect(sent.map(([, m]) => (m as { params: { progress: number } }).params.progress)).toEqual([2, 3]);
    // The ids it sends resume again where they say.
    const again: unknown[] = [];
    await storeB.replayEventsAfter(sent[0]?.[0] as string, { send: async (_, m) => void again.push(m) });
    expect(again).toEqual([note(3)]);
  });

  it("finds nothing of another session's events", async () => {
    const mine = await a.create(alice);
    const theirs = await a.create(bob);
    const eventId = await a.eventStore(theirs).storeEvent('s', note(1));
    await a.eventStore(theirs).storeEvent('s', note(2));
    expect(await b.eventStore(mine).getStreamIdForEventId?.(eventId)).toBeUndefined();
    const sent: unknown[] = [];
    await b.eventStore(mine).replayEventsAfter(eventId, { send: async (_, m) => void sent.push(m) });
    expect(sent).toEqual([]);
  });

  it('hands a cancel the run of the call, or leaves a mark when the run is not there yet', async () => {
    const id = await a.create(alice);
    const run = randomUUID();
    expect(await a.registerCall(id, 7, run)).toBe(false);
    expect(await b.cancelCall(id, 7)).toBe(run);
    // Cancelled first: the call learns it when it registers its run, on any replica.
    expect(await b.cancelCall(id, 'early')).toBeUndefined();
    expect(await a.registerCall(id, 'early', randomUUID())).toBe(true);
    await a.forgetCall(id, 7);
    expect(await b.cancelCall(id, 7)).toBeUndefined();
  });
});
