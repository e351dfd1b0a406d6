import { PERMISSIONS_CHANGED_SUBJECT, PermissionsChanged } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import { GLOBAL_SCOPE } from '@switchyard/server-db-runs';

/** How long rules and hooks are trusted without a change event (a lost broadcast heals by then). */
export const PERMISSIONS_CACHE_MS = 5_000;

/**
 * Per-owner copies of what the gate needs, so a decision needs no round trip. A change of an owner's
 * rules or hooks drops that owner's copy, a change of the global scope drops every copy, on every
 * replica through `events.executor.permissions.changed`.
 */
export class OwnerCache<T> {
  private readonly entries = new Map<string, { readonly value: T; readonly at: number }>();
  /** Loads in flight, one per owner: every caller of `load` meanwhile shares it. */
  private readonly loading = new Map<string, Promise<T>>();
  /** Bumped by every drop: a load begun before a change is not kept after it. */
  private era = 0;

  constructor(private readonly ttlMs = PERMISSIONS_CACHE_MS) {}

  /** The owner's copy if it is recent enough to decide with. */
  fresh(ownerId: string): T | undefined {
    const entry = this.entries.get(ownerId);
    return entry && Date.now() - entry.at <= this.ttlMs ? entry.value : undefined;
  }

  /** The owner's copy however old (observing hooks fire with what the run started with). */
  any(ownerId: string): T | undefined {
    return this.entries.get(ownerId)?.value;
  }

  set(ownerId: string, value: T): void {
    this.entries.set(ownerId, { value, at: Date.now() });
  }

  /**
   * Reads the owner's copy with `read` and keeps it, once however many ask at the same time: when
   * the copy goes stale under load, every step in flight asks for it, and a read each would be
   * thousands of queries at once (a stall of a second was measured with a thousand parallel steps).
   * A read begun before a change was announced is not kept, and callers after the change start a
   * read of their own.
   */
  load(ownerId: string, read: () => Promise<T>): Promise<T> {
    const pending = this.loading.get(ownerId);
    if (pending) return pending;
    const era = this.era;
    const loaded: Promise<T> = read()
      .then((value) => {
        if (this.era === era) this.set(ownerId, value);
        return value;
      })
      .finally(() => {
        if (this.loading.get(ownerId) === loaded) this.loading.delete(ownerId);
      });
    this.loading.set(ownerId, loaded);
    return loaded;
  }

  /** `scope`: an owner id, or GLOBAL_SCOPE for everyone. */
  drop(scope: string): void {
    this.era++;
    if (scope === GLOBAL_SCOPE) {
      this.entries.clear();
      this.loading.clear();
    } else {
      this.entries.delete(scope);
      this.loading.delete(scope);
    }
  }

  /** Drops copies when any replica announces a change; returns the unsubscribe. */
  follow(bus: BusPort): () => void {
    return bus.subscribe(PERMISSIONS_CHANGED_SUBJECT, (payload) => {
      const msg = PermissionsChanged.safeParse(payload);
      if (msg.success) this.drop(msg.data.scope);
    });
  }
}

/** Tells every replica (this one included) that `scope`'s rules or hooks changed. */
export function announceChange(bus: BusPort, scope: string): void {
  bus.publish(PERMISSIONS_CHANGED_SUBJECT, { scope });
}
