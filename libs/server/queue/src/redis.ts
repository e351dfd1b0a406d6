import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { RedisSettings } from '@switchyard/server-config';
import { Queue, Worker, type QueueOptions } from 'bullmq';

export type { Redis } from 'ioredis';

export interface RedisOptions extends Pick<RedisSettings, 'url'>, Partial<Omit<RedisSettings, 'url'>> {
  /** Shown in `CLIENT LIST`. */
  readonly name: string;
}

/**
 * A Redis connection (credentials and TLS as configured: REDIS_USERNAME/REDIS_PASSWORD, REDIS_TLS_*)
 * configured the way BullMQ needs it (no per-command retry limit: blocking
 * commands wait through reconnects) that still fails fast at startup when Redis is not there.
 */
export function createRedis(opts: RedisOptions): Redis {
  const read = (f: string | undefined) => (f ? readFileSync(f, 'utf8') : undefined);
  return new Redis(opts.url, {
    ...(opts.username ? { username: opts.username } : {}),
    ...(opts.password ? { password: opts.password } : {}),
    ...(opts.tls
      ? {
          tls: {
            ...(opts.tls.caFile ? { ca: read(opts.tls.caFile) } : {}),
            ...(opts.tls.certFile ? { cert: read(opts.tls.certFile), key: read(opts.tls.keyFile) } : {}),
          },
        }
      : {}),
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

export type { Job, Queue } from 'bullmq';

/**
 * A BullMQ worker on its own connection, closed with it. `concurrency` jobs at once; a job whose
 * worker died is handed to another worker after the stall interval.
 */
export function createWorker<T>(
  name: string,
  opts: RedisOptions & {
    prefix: string;
    concurrency: number;
    stalledIntervalMs?: number;
    /** A job whose worker stopped renewing its lock this long is handed to another worker. */
    lockDurationMs?: number;
  },
  process: (job: import('bullmq').Job<T>) => Promise<void>,
): import('bullmq').Worker<T> {
  const connection = createRedis(opts);
  const worker = new Worker<T>(name, process, {
    connection,
    prefix: opts.prefix,
    concurrency: opts.concurrency,
    stalledInterval: opts.stalledIntervalMs ?? 5_000,
    lockDuration: opts.lockDurationMs ?? 10_000,
    maxStalledCount: 1,
  });
  // BullMQ closes the connections it made (its blocking one), not one it was given: this one goes
  // with the worker (it kept a closed worker's process alive).
  worker.once('closed', () => connection.disconnect());
  return worker;
}
