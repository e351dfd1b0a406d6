/**
 * Answers of another service kept for a short while and dropped when an event says they changed.
 * NATS events are at most once, so `ttlMs` bounds how long a missed one can leave a stale answer. A
 * load that was in flight when its key was dropped is answered but not kept (it may predate the
 * change); concurrent misses of one key share a single load.
 */
export class ChangeCache<V> {
  private readonly entries = new Map<string, { value: V; at: number }>();
  private readonly loading = new Map<string, { promise: Promise<V>; generation: number }>();
  /** Bumped by every drop: a load that started before a drop is not kept. */
  private generation = 0;

  constructor(
    private readonly ttlMs: number,
    /** Entries held at once; past this the cache starts over (it only saves round trips). */
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** The kept answer for `key`, or `load`'s (kept unless something was dropped meanwhile). */
  get(key: string, load: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && this.now() - hit.at < this.ttlMs) return Promise.resolve(hit.value);
    const pending = this.loading.get(key);
    if (pending && pending.generation === this.generation) return pending.promise;
    const generation = this.generation;
    const promise = load().then(
      (value) => {
        if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
        if (generation === this.generation) {
          if (this.entries.size >= this.maxEntries && !this.entries.has(key)) this.entries.clear();
          this.entries.set(key, { value, at: this.now() });
        }
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key)?.promise === promise) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, { promise, generation });
    return promise;
  }

  /** Whether `key` would be answered from the cache now. */
  has(key: string): boolean {
    const hit = this.entries.get(key);
    return hit !== undefined && this.now() - hit.at < this.ttlMs;
  }

  /** Drops the entries `which` selects (every entry without it). */
  drop(which?: (key: string) => boolean): void {
    this.generation++;
    if (!which) {
      this.entries.clear();
      return;
    }
    for (const key of [...this.entries.keys()]) if (which(key)) this.entries.delete(key);
  }
}
