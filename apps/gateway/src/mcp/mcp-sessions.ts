import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AppConfig } from '@switchyard/server-config';
import type { Redis } from '@switchyard/server-queue';
import { APP_CONFIG, REDIS } from '@switchyard/server-runtime';

/** A session lives this long after its last request (sliding). */
export const SESSION_TTL_S = 24 * 60 * 60;
/** Per stream, the newest this many events are kept for a Last-Event-ID replay. */
const KEEP_EVENTS = 1_000;

export interface McpSession {
  readonly ownerId: string;
  readonly createdAt: string;
}

// One round trip: number the event, keep it (score = number), trim, refresh the expiry.
const STORE_EVENT = `
local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('ZADD', KEYS[2], n, n .. ' ' .. ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -1 - tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
redis.call('EXPIRE', KEYS[3], ARGV[3])
return n`;

// A cancel that arrives before the call has its run leaves a mark the call finds when it registers.
const CANCEL_CALL = `
local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], '!cancelled', 'EX', ARGV[1])
return false`;
const REGISTER_CALL = `
local v = redis.call('GET', KEYS[1])
if v == '!cancelled' then return 1 end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 0`;

/**
 * MCP sessions in Redis, so that any gateway replica answers any request of a session: the session
 * (whose owner it is), the events sent on its streams (for a Last-Event-ID replay on any replica),
 * and the run behind each tool call in flight (a notifications/cancelled may reach another
 * replica than the call). Transport state only: a flushed Redis ends the sessions (clients answered
 * 404 start a new one, as the protocol says) and loses no run — runs live in Postgres.
 */
@Injectable()
export class McpSessions {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prefix = `sy:${config.nats.subjectPrefix}mcp:`;
  }

  private key(id: string, ...rest: string[]): string {
    return [`${this.prefix}s:${id}`, ...rest].join(':');
  }

  async create(ownerId: string): Promise<string> {
    const id = randomUUID();
    const session: McpSession = { ownerId, createdAt: new Date().toISOString() };
    await this.redis.set(this.key(id), JSON.stringify(session), 'EX', SESSION_TTL_S);
    return id;
  }

  /** The session if it exists and belongs to `ownerId` (another owner's id reads as unknown). */
  async find(id: string, ownerId: string): Promise<McpSession | undefined> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return undefined;
    const [[, raw]] = (await this.redis
      .multi()
      .get(this.key(id))
      .expire(this.key(id), SESSION_TTL_S)
      .exec()) as [[Error | null, string | null], unknown];
    if (!raw) return undefined;
    const session = JSON.parse(raw) as McpSession;
    return session.ownerId === ownerId ? session : undefined;
  }

  async end(id: string): Promise<void> {
    const streams = await this.redis.smembers(this.key(id, 'streams'));
    await this.redis.del(
      this.key(id),
      this.key(id, 'seq'),
      this.key(id, 'streams'),
      ...streams.map((s) => this.key(id, 'ev', s)),
    );
  }

  /** The run behind a tool call; true when a cancel of the call came first (cancel the run now). */
  async registerCall(sessionId: string, requestId: string | number, runId: string): Promise<boolean> {
    const r = await this.redis.eval(
      REGISTER_CALL,
      1,
      this.key(sessionId, 'call', String(requestId)),
      runId,
      SESSION_TTL_S,
    );
    return r === 1;
  }

  async forgetCall(sessionId: string, requestId: string | number): Promise<void> {
    await this.redis.del(this.key(sessionId, 'call', String(requestId)));
  }

  /** The run to cancel for a cancelled request, or undefined (then the call cancels it on start). */
  async cancelCall(sessionId: string, requestId: string | number): Promise<string | undefined> {
    const r = await this.redis.eval(CANCEL_CALL, 1, this.key(sessionId, 'call', String(requestId)), 600);
    return typeof r === 'string' && r !== '!cancelled' ? r : undefined;
  }

  /**
   * The session's event store: event ids are `<stream id>.<n>` (n numbers the session's events),
   * so a Last-Event-ID names its stream; ids of another session find nothing here.
   */
  eventStore(sessionId: string): EventStore {
    const streamKey = (streamId: string) => this.key(sessionId, 'ev', streamId);
    const parse = (eventId: string) => {
      const m = /^(.+)\.(\d+)$/.exec(eventId);
      return m ? { streamId: m[1] as string, n: Number(m[2]) } : undefined;
    };
    return {
      storeEvent: async (streamId: string, message: JSONRPCMessage) => {
        const n = await this.redis.eval(
          STORE_EVENT,
          3,
          this.key(sessionId, 'seq'),
          streamKey(streamId),
          this.key(sessionId, 'streams'),
          JSON.stringify(message),
          KEEP_EVENTS,
          SESSION_TTL_S,
          streamId,
        );
        return `${streamId}.${String(n)}`;
      },
      getStreamIdForEventId: async (eventId: string) => {
        const at = parse(eventId);
        if (!at) return undefined;
        return (await this.redis.exists(streamKey(at.streamId))) ? at.streamId : undefined;
      },
      replayEventsAfter: async (lastEventId, { send }) => {
        const at = parse(lastEventId);
        if (!at) throw new Error('unknown event id');
        const stored = await this.redis.zrangebyscore(streamKey(at.streamId), `(${at.n}`, '+inf');
        for (const entry of stored) {
          const space = entry.indexOf(' ');
          const message = JSON.parse(entry.slice(space + 1)) as Partial<JSONRPCMessage>;
          // Priming events (empty data) are stored too: they only carry an id, nothing to replay.
          if (message.jsonrpc)
            await send(`${at.streamId}.${entry.slice(0, space)}`, message as JSONRPCMessage);
        }
        return at.streamId;
      },
    };
  }
}
