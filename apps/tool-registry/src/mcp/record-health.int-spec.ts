import { randomBytes } from 'node:crypto';
import { createRedis, type Redis } from '@switchyard/server-queue';
import { testConfig, uniquePrefix } from '@switchyard/testing';
import { DISABLE_MS, RecordHealth, type Clock } from './record-health';

/** Real Redis, a clock the test moves: the three-strikes rule and its expiry, shared by replicas. */
describe('RecordHealth', () => {
  let redis: Redis;
  let now = Date.UTC(2026, 11, 2, 12, 0, 0);
  const clock: Clock = { now: () => now };
  const config = testConfig('tool-registry', { NATS_SUBJECT_PREFIX: uniquePrefix('health') });
  let replicaA: RecordHealth;
  let replicaB: RecordHealth;
  const id = Number.parseInt(randomBytes(3).toString('hex'), 16);

  beforeAll(async () => {
    redis = createRedis({ url: 'redis://127.0.0.1:6379', name: 'health-test' });
    await redis.connect();
    replicaA = new RecordHealth(redis, config, clock);
    replicaB = new RecordHealth(redis, config, clock);
  });

  afterAll(async () => {
    await replicaA.clear(id);
    await redis.quit();
  });

  it('disables a record for five minutes after three consecutive failures, seen by every replica', async () => {
    expect(await replicaA.recordFailure(id)).toEqual({ failures: 1, disabledUntil: null });
    expect(await replicaB.recordFailure(id)).toEqual({ failures: 2, disabledUntil: null });
    expect(await replicaB.disabledUntil(id)).toBeNull();
    const third = await replicaA.recordFailure(id);
    expect(third.disabledUntil).toBe(now + DISABLE_MS);
    expect(await replicaB.disabledUntil(id)).toBe(now + DISABLE_MS);
    expect((await replicaB.disabledMap([id, id + 1])).get(id)).toBe(now + DISABLE_MS);

    now += DISABLE_MS - 1;
    expect(await replicaA.disabledUntil(id)).not.toBeNull();
    now += 1;
    expect(await replicaA.disabledUntil(id)).toBeNull();
  });

  it('forgets failures on success, so only consecutive failures count', async () => {
    await replicaA.recordFailure(id);
    await replicaA.recordFailure(id);
    await replicaA.clear(id); // a success, a successful Test, or a new configuration
    expect(await replicaA.recordFailure(id)).toEqual({ failures: 1, disabledUntil: null });
  });

  it('is cleared by a successful Test even while disabled', async () => {
    await replicaA.clear(id);
    for (let i = 0; i < 3; i++) await replicaA.recordFailure(id);
    expect(await replicaA.disabledUntil(id)).not.toBeNull();
    await replicaB.clear(id);
    expect(await replicaA.disabledUntil(id)).toBeNull();
  });
});
