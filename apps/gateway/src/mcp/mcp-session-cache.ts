import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from '@switchyard/server-queue';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER, REDIS } from '@switchyard/server-runtime';
import { McpSubscriber } from './mcp-subscriber';

/** A cached read is trusted this long at most; the read after it also slides the key's expiry. */
export const SESSION_CACHE_FRESH_MS = 60_000;
const MAX_ENTRIES = 10_000;

/**
 * Session records read on every /mcp request, cached in this process and kept true by Redis itself
 * (client-side caching, `CLIENT TRACKING … REDIRECT … NOLOOP`): the keys are read on a connection of
 * their own that Redis tracks, and a change of one by anyone else (a DELETE /mcp on another replica,
 * a flush) sends its invalidation to the MCP subscriber connection. Redis queues that invalidation
 * before it answers the write, so a request that reaches this replica after another replica ended
 * the session finds the invalidation already in its socket, ahead of the request.
 *
 * A hit costs no round trip. A miss reads the key and slides its expiry in one pipeline (which also
 * turns tracking on, so a reconnected reader is tracked again). Nothing is cached while the
 * subscriber is not subscribed, and a read that overlapped an invalidation or a lost connection is
 * not cached either.
 */
@Injectable()
export class McpSessionCache implements OnModuleInit, OnModuleDestroy {
  private reader: Redis | undefined;
  private readonly entries = new Map<string, { value: string; until: number }>();
  /** Bumped by every invalidation and connection loss: a read that began before one is not kept. */
  private generation = 0;
  private offInvalidate: (() => void) | undefined;
  private warned = false;
  /** Reads sent to Redis so far (the misses). */
  reads = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly subscriber: McpSubscriber,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const reader = this.redis.duplicate({ connectionName: 'switchyard-gateway-mcp-sessions' });
    reader.on('close', () => this.flush());
    reader.on('error', () => undefined); // reconnects; a read waits for it like any command
    reader.connect().catch(() => undefined);
    this.reader = reader;
    this.offInvalidate = this.subscriber.onInvalidate((keys) => {
      if (keys === null) return this.flush();
      this.generation++;
      keys.forEach((k) => this.entries.delete(k));
    });
  }

  onModuleDestroy(): void {
    this.offInvalidate?.();
    this.reader?.disconnect();
    this.flush();
  }

  /** The value of `key` (null: none), from the cache or read (sliding its expiry to `ttlS`). */
  async get(key: string, ttlS: number): Promise<string | null> {
    const hit = this.entries.get(key);
    if (hit && hit.until > Date.now()) return hit.value;
    const reader = this.reader;
    if (!reader) throw new Error('the MCP session cache is not started');
    this.reads++;
    const generation = this.generation;
    const trackingId = this.subscriber.trackingId;
    const pipeline = reader.pipeline();
    if (trackingId !== undefined) pipeline.client('TRACKING', 'ON', 'REDIRECT', trackingId, 'NOLOOP');
    // EXPIRE before GET: a connection's own write stops its tracking of the key, the read restarts it.
    pipeline.expire(key, ttlS).get(key);
    const results = (await pipeline.exec()) ?? [];
    const [readErr, value] = results[results.length - 1] ?? [new Error('no reply')];
    if (readErr) throw readErr;
    const tracked = trackingId !== undefined && !results[0]?.[0];
    if (trackingId !== undefined && !tracked && !this.warned) {
      this.warned = true;
      this.logger.warn(
        { err: (results[0]?.[0] as Error | undefined)?.message },
        'Redis refused CLIENT TRACKING: MCP sessions are read on every request',
      );
    }
    if (typeof value !== 'string') {
      this.entries.delete(key);
      return null;
    }
    if (tracked && generation === this.generation && this.subscriber.trackingId === trackingId) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, { value, until: Date.now() + SESSION_CACHE_FRESH_MS });
    }
    return value;
  }

  /** Forgets `key` here at once (other replicas hear it from Redis). */
  drop(key: string): void {
    this.generation++;
    this.entries.delete(key);
  }

  private flush(): void {
    this.generation++;
    this.entries.clear();
  }
}
