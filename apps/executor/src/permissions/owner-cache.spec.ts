import { GLOBAL_SCOPE } from '@switchyard/server-db-runs';
import { OwnerCache } from './owner-cache';

/** A read that settles when told to, counting how often it was started. */
function gatedRead(values: string[]) {
  let reads = 0;
  const waiting: Array<() => void> = [];
  const read = () => {
    const value = values[reads++] ?? 'more';
    return new Promise<string>((resolve) => waiting.push(() => resolve(value)));
  };
  return {
    read,
    reads: () => reads,
    settleAll: () => waiting.splice(0).forEach((go) => go()),
  };
}

describe('OwnerCache.load', () => {
  it('reads once for every caller while a read is in flight, and keeps the copy', async () => {
    const cache = new OwnerCache<string>(60_000);
    const r = gatedRead(['rules v1']);
    const callers = Array.from({ length: 1000 }, () => cache.load('alice', r.read));
    expect(r.reads()).toBe(1);
    r.settleAll();
    expect(new Set(await Promise.all(callers))).toEqual(new Set(['rules v1']));
    expect(cache.fresh('alice')).toBe('rules v1');
    // Settled: the next load is a read of its own.
    const again = cache.load('alice', r.read);
    expect(r.reads()).toBe(2);
    r.settleAll();
    await again;
  });

  it('reads per owner: one owner waiting does not hold another', async () => {
    const cache = new OwnerCache<string>(60_000);
    const r = gatedRead(['a', 'b']);
    const a = cache.load('alice', r.read);
    const b = cache.load('bob', r.read);
    expect(r.reads()).toBe(2);
    r.settleAll();
    expect([await a, await b]).toEqual(['a', 'b']);
  });

  it.each([
    ['the owner', 'alice'],
    ['the global scope', GLOBAL_SCOPE],
  ])(
    'does not keep a read begun before a change of %s, and callers after the change read again',
    async (_what, scope) => {
      const cache = new OwnerCache<string>(60_000);
      const r = gatedRead(['before the change', 'after the change']);
      const early = cache.load('alice', r.read);
      cache.drop(scope);
      const late = cache.load('alice', r.read);
      expect(r.reads()).toBe(2);
      r.settleAll();
      expect(await early).toBe('before the change');
      expect(await late).toBe('after the change');
      expect(cache.fresh('alice')).toBe('after the change');
    },
  );

  it('keeps nothing from a failed read, and the next caller reads again', async () => {
    const cache = new OwnerCache<string>(60_000);
    await expect(cache.load('alice', () => Promise.reject(new Error('database away')))).rejects.toThrow(
      'database away',
    );
    expect(cache.fresh('alice')).toBeUndefined();
    await expect(cache.load('alice', () => Promise.resolve('back'))).resolves.toBe('back');
  });
});
