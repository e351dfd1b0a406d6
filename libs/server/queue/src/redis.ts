import { Redis } from 'ioredis';
import { Queue, type QueueOptions } from 'bullmq';

export type { Redis } from 'ioredis';

export interface RedisOptions {
  readonly url: string;
  /** Shown in `CLIENT LIST`. */
  readonly name: string;
}

/**
 * A Redis connection configured the way BullMQ needs it (no per-command retry limit: blocking
 * commands wait through reconnects) that still fails fast at startup when Redis is not there.
 */
export function createRedis(opts: RedisOptions): Redis {
  return new Redis(opts.url, {
    connectionName: opts.name,
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    lazyConnect: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/** One round trip to Redis (readiness); the caller bounds and times it. */
export async function pingRedis(redis: Redis): Promise<void> {
  await redis.ping();
}

/** BullMQ queues share one naming scheme so several stacks can share one Redis. */
export function createQueue<T = unknown>(
  name: string,
  redis: Redis,
  prefix: string,
  opts: Partial<QueueOptions> = {},
): Queue<T> {
  return new Queue<T>(name, { connection: redis, prefix, ...opts });
}
