import { DEFAULT_LIMITS, FairQueue, priorityCycle } from './fair-queue';
import type { Redis } from './redis';

describe('priorityCycle', () => {
  it('spreads 4:2:1 over one seven-slot cycle instead of running a class back to back', () => {
    expect(priorityCycle()).toEqual([
      'interactive',
      'normal',
      'interactive',
      'batch',
      'interactive',
      'normal',
      'interactive',
    ]);
  });

  it('follows other weights', () => {
    expect(priorityCycle({ interactive: 1, normal: 1, batch: 1 })).toEqual([
      'interactive',
      'normal',
      'batch',
    ]);
    const cycle = priorityCycle({ interactive: 1, normal: 3, batch: 2 });
    expect(cycle.filter((p) => p === 'normal')).toHaveLength(3);
    expect(cycle.filter((p) => p === 'batch')).toHaveLength(2);
    expect(cycle).toHaveLength(6);
  });

  it('refuses a weight that would starve or stall a class', () => {
    expect(() => priorityCycle({ interactive: 4, normal: 2, batch: 0 })).toThrow(/batch must be a positive/);
    expect(() => priorityCycle({ interactive: 1.5, normal: 2, batch: 1 })).toThrow(/interactive/);
    expect(() => priorityCycle({ interactive: 60, normal: 4, batch: 1 })).toThrow(/at most 64/);
  });
});

describe('FairQueue options', () => {
  // The constructor sends nothing to Redis.
  const redis = {} as Redis;

  it('takes the seed limits by default and overrides only what it is given', () => {
    expect(DEFAULT_LIMITS).toEqual({
      running: 16,
      globalQueue: 128,
      ownerQueue: 32,
      batchOwner: 16,
      batchGlobal: 64,
      nonInteractiveOwner: 24,
      nonInteractiveGlobal: 96,
    });
    const queue = new FairQueue(redis, { prefix: 'p:', limits: { running: 4, ownerQueue: 8 } });
    expect(queue.limits).toEqual({ ...DEFAULT_LIMITS, running: 4, ownerQueue: 8 });
  });

  it('refuses a missing prefix and a limit that is not a count', () => {
    expect(() => new FairQueue(redis, { prefix: '' })).toThrow(/prefix/);
    expect(() => new FairQueue(redis, { prefix: 'p:', limits: { globalQueue: -1 } })).toThrow(/globalQueue/);
    expect(() => new FairQueue(redis, { prefix: 'p:', limits: { running: 2.5 } })).toThrow(/running/);
  });
});
