import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '@switchyard/server-config';
import type { Redis } from '@switchyard/server-queue';
import { APP_CONFIG, REDIS } from '@switchyard/server-runtime';

export const FAILURE_THRESHOLD = 3;
export const DISABLE_MS = 5 * 60_000;

/** Time source, injectable so tests can move it. */
export interface Clock {
  now(): number;
}
export const CLOCK = Symbol('CLOCK');
export const systemClock: Clock = { now: () => Date.now() };

// Atomic: count a failure; at the threshold set disabledUntil and start counting again.
const RECORD_FAILURE = `
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local disabledUntil = false
if failures >= tonumber(ARGV[1]) then
  disabledUntil = tonumber(ARGV[2]) + tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'disabledUntil', disabledUntil, 'failures', 0)
end
redis.call('PEXPIRE', KEYS[1], 86400000)
return { failures, disabledUntil and tostring(disabledUntil) or '' }
`;

/**
 * Connection health of MCP records, shared by every replica through Redis: three consecutive
 * failures to connect (or to list tools) disable a record for five minutes. A success, a
 * successful Test or a new configuration clears the count. Tool-call errors do not count.
 */
@Injectable()
export class RecordHealth {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    this.prefix = `sy:${config.nats.subjectPrefix}registry:health:`;
  }

  async recordFailure(id: number): Promise<{ failures: number; disabledUntil: number | null }> {
    const [failures, until] = (await this.redis.eval(
      RECORD_FAILURE,
      1,
      this.prefix + id,
      FAILURE_THRESHOLD,
      this.clock.now(),
      DISABLE_MS,
    )) as [number, string];
    return { failures, disabledUntil: until ? Number(until) : null };
  }

  async clear(id: number): Promise<void> {
    await this.redis.del(this.prefix + id);
  }

  /** Epoch ms until which the record is disabled, or null when it is usable. */
  async disabledUntil(id: number): Promise<number | null> {
    const value = await this.redis.hget(this.prefix + id, 'disabledUntil');
    const until = value ? Number(value) : 0;
    return until > this.clock.now() ? until : null;
  }

  async disabledMap(ids: number[]): Promise<Map<number, number>> {
    if (!ids.length) return new Map();
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.prefix + id, 'disabledUntil');
    const answers = (await pipeline.exec()) ?? [];
    const now = this.clock.now();
    const out = new Map<number, number>();
    answers.forEach(([, value], i) => {
      const until = value ? Number(value) : 0;
      if (until > now) out.set(ids[i] as number, until);
    });
    return out;
  }
}
