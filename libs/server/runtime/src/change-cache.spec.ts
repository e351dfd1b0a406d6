import { ChangeCache } from './change-cache';

describe('ChangeCache', () => {
  let now = 0;
  const clock = () => now;

  beforeEach(() => {
    now = 1_000;
  });

  it('answers from the cache until the ttl passes, sharing one load among concurrent misses', async () => {
    const cache = new ChangeCache<string>(100, 10, clock);
    let loads = 0;
    const load = async () => `v${++loads}`;
    expect(await Promise.all([cache.get('k', load), cache.get('k', load)])).toEqual(['v1', 'v1']);
    expect(cache.has('k')).toBe(true);
    now += 99;
    expect(await cache.get('k', load)).toBe('v1');
    now += 1;
    expect(cache.has('k')).toBe(false);
    expect(await cache.get('k', load)).toBe('v2');
  });

  it('drops what it is told to, and does not keep a load that was in flight across a drop', async () => {
    const cache = new ChangeCache<string>(1_000, 10, clock);
    await cache.get('a', async () => 'a1');
    await cache.get('b', async () => 'b1');
    cache.drop((k) => k === 'a');
    expect(cache.has('a')).toBe(false);
    expect(cache.has('b')).toBe(true);
    let finish!: (v: string) => void;
    const stale = cache.get('a', () => new Promise<string>((r) => (finish = r)));
    cache.drop((k) => k === 'a'); // the change arrives while the old answer is on its way
    finish('a-old');
    expect(await stale).toBe('a-old'); // answered, not kept
    expect(cache.has('a')).toBe(false);
    expect(await cache.get('a', async () => 'a2')).toBe('a2');
    cache.drop();
    expect(cache.has('a') || cache.has('b')).toBe(false);
  });

  it('keeps no refusal, and starts over past its size', async () => {
    const cache = new ChangeCache<string>(1_000, 2, clock);
    await expect(cache.get('x', async () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect(cache.has('x')).toBe(false);
    await cache.get('a', async () => 'a');
    await cache.get('b', async () => 'b');
    await cache.get('c', async () => 'c');
    expect([cache.has('a'), cache.has('b'), cache.has('c')]).toEqual([false, false, true]);
  });
});
