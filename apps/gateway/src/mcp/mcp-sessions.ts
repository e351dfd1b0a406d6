import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AppConfig } from '@switchyard/server-config';
import type { Logger } from '@switchyard/server-observability';
import type { Redis } from '@switchyard/server-queue';
import { APP_CONFIG, LOGGER, REDIS } from '@switchyard/server-runtime';
import type { EventLog } from '../runs/stream-relay';
import { McpSessionCache } from './mcp-session-cache';
import { McpSubscriber } from './mcp-subscriber';

/** A session lives this long after its last request (sliding). */
export const SESSION_TTL_S = 24 * 60 * 60;
/** Per stream, the newest this many events are kept for a Last-Event-ID replay. */
const KEEP_EVENTS = 1_000;
/** The SDK's id of a session's standalone (GET) stream. */
export const STANDALONE_STREAM = '_GET_stream';

export interface McpSession {
  readonly ownerId: string;
  readonly createdAt: string;
}

/** One message of a session stream, as kept and published: `seq` orders it within its stream. */
export interface McpStreamEvent {
  readonly seq: number;
  readonly type: 'message';
  readonly message: JSONRPCMessage;
}

/** Where an event id (`<stream>.<n>`) points; undefined for anything else. */
export function parseEventId(eventId: string): { streamId: string; seq: number } | undefined {
  const m = /^([A-Za-z0-9_-]{1,64})\.(\d{1,15})$/.exec(eventId);
  return m ? { streamId: m[1] as string, seq: Number(m[2]) } : undefined;
}

/** A JSON-RPC response (result or error): the last message of a request's stream. */
export function isResponse(message: JSONRPCMessage): boolean {
  return 'id' in message && ('result' in message || 'error' in message);
}

// Keep one message of a stream (`<n> <json>`, score n), trim, refresh the expiries, and publish it
// to whoever follows the stream live: stored and published in one step, so a follower that
// subscribes before it reads the stream misses nothing.
// KEYS: events, streams; ARGV: entry, n, keep, ttl, stream id, channel.
const STORE_EVENT = `
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[3]))
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('SADD', KEYS[2], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', ARGV[6], ARGV[1])
return 1`;
// The same with the number drawn here: the standalone stream has a writer per open GET, on any replica.
// KEYS: events, streams, counter; ARGV: message, keep, ttl, stream id, channel.
const STORE_NUMBERED_EVENT = `
local n = redis.call('INCR', KEYS[3])
redis.call('EXPIRE', KEYS[3], ARGV[3])
local entry = n .. ' ' .. ARGV[1]
redis.call('ZADD', KEYS[1], n, entry)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -1 - tonumber(ARGV[2]))
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', ARGV[5], entry)
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

type Args = Array<string | number>;
/** The scripts above as commands (ioredis defineCommand: EVALSHA, the source only once per connection). */
interface McpCommands {
  syMcpStoreEvent(...args: Args): Promise<number>;
  syMcpStoreNumberedEvent(...args: Args): Promise<number>;
  syMcpCancelCall(...args: Args): Promise<string | null>;
  syMcpRegisterCall(...args: Args): Promise<number>;
}
interface Batch {
  syMcpStoreEvent(...args: Args): Batch;
  del(...keys: string[]): Batch;
}

/**
 * MCP sessions in Redis, so that any gateway replica answers any request of a session: the session
 * (whose owner it is; read through a tracked cache, so a request costs no round trip), the messages
 * sent on its streams (for a Last-Event-ID resume on any replica, which then follows the stream live
 * through Redis pub/sub), and the run behind each tool call in flight (a notifications/cancelled may
 * reach another replica than the call). Transport state only: a flushed Redis ends the sessions
 * (clients answered 404 start a new one, as the protocol says) and loses no run — runs live in
 * Postgres.
 */
@Injectable()
export class McpSessions {
  private readonly prefix: string;
  private readonly commands: McpCommands;
  private pending: Array<(batch: Batch) => void> = [];
  private flushed: Promise<void> | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly cache: McpSessionCache,
    private readonly subscriber: McpSubscriber,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.prefix = `sy:${config.nats.subjectPrefix}mcp:`;
    redis.defineCommand('syMcpStoreEvent', { numberOfKeys: 2, lua: STORE_EVENT });
    redis.defineCommand('syMcpStoreNumberedEvent', { numberOfKeys: 3, lua: STORE_NUMBERED_EVENT });
    redis.defineCommand('syMcpCancelCall', { numberOfKeys: 1, lua: CANCEL_CALL });
    redis.defineCommand('syMcpRegisterCall', { numberOfKeys: 1, lua: REGISTER_CALL });
    this.commands = redis as unknown as McpCommands;
  }

  private key(id: string, ...rest: string[]): string {
    return [`${this.prefix}s:${id}`, ...rest].join(':');
  }

  private channel(sessionId: string, streamId: string): string {
    return this.key(sessionId, 'live', streamId);
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
    const raw = await this.cache.get(this.key(id), SESSION_TTL_S);
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
    this.cache.drop(this.key(id));
  }

  /** The run behind a tool call; true when a cancel of the call came first (cancel the run now). */
  async registerCall(sessionId: string, requestId: string | number, runId: string): Promise<boolean> {
    const r = await this.commands.syMcpRegisterCall(
      this.key(sessionId, 'call', String(requestId)),
      runId,
      SESSION_TTL_S,
    );
    return r === 1;
  }

  /** Off the answer's path: written with the next batch (a leftover entry only expires with the session). */
  forgetCall(sessionId: string, requestId: string | number): Promise<void> {
    return this.queue((b) => b.del(this.key(sessionId, 'call', String(requestId))));
  }

  /** The run to cancel for a cancelled request, or undefined (then the call cancels it on start). */
  async cancelCall(sessionId: string, requestId: string | number): Promise<string | undefined> {
    const r = await this.commands.syMcpCancelCall(this.key(sessionId, 'call', String(requestId)), 600);
    return typeof r === 'string' && r !== '!cancelled' ? r : undefined;
  }

  /**
   * The session's event store for one request's transport. Event ids are `<stream id>.<n>`, so a
   * Last-Event-ID names its stream; ids of another session find nothing here.
   *
   * A request's stream has one writer (the transport of the replica serving that POST), so its
   * messages are numbered here (1, 2, …; the priming event, which carries no message, is 0 and not
   * kept) and written behind the answer: every message written in one turn of the event loop goes
   * to Redis in one pipeline, after the SSE frame left. That is safe for a resume because each
   * message is stored and published in one step (STORE_EVENT) and a resumed stream subscribes
   * before it reads: a message is either stored before the read or delivered live.
   * The standalone stream's notifications are numbered by Redis (writers on several replicas).
   */
  eventStore(sessionId: string): EventStore {
    const counters = new Map<string, number>();
    return {
      storeEvent: async (streamId: string, message: JSONRPCMessage) => {
        if (streamId === STANDALONE_STREAM) return this.storeStandalone(sessionId, message);
        if (!('jsonrpc' in message)) return `${streamId}.0`;
        const n = (counters.get(streamId) ?? 0) + 1;
        counters.set(streamId, n);
        const entry = `${n} ${JSON.stringify(message)}`;
        void this.queue((b) =>
          b.syMcpStoreEvent(
            this.key(sessionId, 'ev', streamId),
            this.key(sessionId, 'streams'),
            entry,
            n,
            KEEP_EVENTS,
            SESSION_TTL_S,
            streamId,
            this.channel(sessionId, streamId),
          ),
        );
        return `${streamId}.${n}`;
      },
      replayEventsAfter: async (lastEventId, { send }) => {
        const at = parseEventId(lastEventId);
        if (!at) throw new Error('unknown event id');
        for (let after = at.seq; ;) {
          const page = await this.readAfter(sessionId, at.streamId, after, 500);
          for (const e of page) await send(`${at.streamId}.${e.seq}`, e.message);
          if (page.length < 500) return at.streamId;
          after = page[page.length - 1]?.seq ?? after;
        }
      },
    };
  }

  /** Keeps and publishes a message of the session's standalone stream; answers its event id. */
  async storeStandalone(sessionId: string, message: JSONRPCMessage): Promise<string> {
    const n = await this.commands.syMcpStoreNumberedEvent(
      this.key(sessionId, 'ev', STANDALONE_STREAM),
      this.key(sessionId, 'streams'),
      this.key(sessionId, 'seq'),
      JSON.stringify(message),
      KEEP_EVENTS,
      SESSION_TTL_S,
      STANDALONE_STREAM,
      this.channel(sessionId, STANDALONE_STREAM),
    );
    return `${STANDALONE_STREAM}.${String(n)}`;
  }

  /** A stream's kept messages after `afterSeq`, in order, at most `limit`. */
  async readAfter(
    sessionId: string,
    streamId: string,
    afterSeq: number,
    limit: number,
  ): Promise<McpStreamEvent[]> {
    const stored = await this.redis.zrangebyscore(
      this.key(sessionId, 'ev', streamId),
      `(${afterSeq}`,
      '+inf',
      'LIMIT',
      0,
      limit,
    );
    return stored.flatMap((entry) => {
      const event = parseEntry(entry);
      // Entries of older versions kept priming events (no message): nothing to replay.
      return event ? [event] : [];
    });
  }

  /**
   * A stream as the SSE relay follows it (live from Redis pub/sub, gaps and the replay from the
   * kept messages). `lost` is called when the live feed broke (the subscriber connection dropped):
   * the follower must end, and its client resumes again.
   */
  log(sessionId: string, streamId: string, lost: () => void): EventLog<McpStreamEvent> {
    return {
      label: { mcpSession: sessionId, stream: streamId },
      follow: (listener) =>
        this.subscriber.subscribe(
          this.channel(sessionId, streamId),
          (payload) => {
            const event = parseEntry(payload);
            if (event) listener.heard(event);
          },
          lost,
        ),
      readAfter: (after, limit) => this.readAfter(sessionId, streamId, after, limit),
      // A request's stream ends with the response; the standalone stream goes on.
      isTerminal: (e) => streamId !== STANDALONE_STREAM && isResponse(e.message),
    };
  }

  /**
   * Writes queued in one turn of the event loop leave in one pipeline, after that turn; resolves
   * once written (a failure is logged: these writes are behind an answer already sent).
   */
  private queue(add: (batch: Batch) => void): Promise<void> {
    this.pending.push(add);
    this.flushed ??= new Promise((resolve) =>
      setImmediate(() => {
        this.flushed = undefined;
        void this.flush().then(resolve);
      }),
    );
    return this.flushed;
  }

  private async flush(): Promise<void> {
    const adds = this.pending;
    this.pending = [];
    const pipeline = this.redis.pipeline();
    adds.forEach((add) => add(pipeline as unknown as Batch));
    try {
      const failed = (await pipeline.exec())?.find(([err]) => err)?.[0];
      if (failed) throw failed;
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, writes: adds.length },
        'could not keep MCP stream messages',
      );
    }
  }
}

/** A kept or published message: `<n> <json>`. */
function parseEntry(entry: string): McpStreamEvent | undefined {
  const space = entry.indexOf(' ');
  if (space < 1) return undefined;
  const seq = Number(entry.slice(0, space));
  let message: Partial<JSONRPCMessage> | null;
  try {
    message = JSON.parse(entry.slice(space + 1)) as Partial<JSONRPCMessage> | null;
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(seq) || !message?.jsonrpc) return undefined;
  return { seq, type: 'message', message: message as JSONRPCMessage };
}
