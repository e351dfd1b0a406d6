import { runEventsSubject } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { RunsRepository, RunUpdate, StoredRunEvent } from '@switchyard/server-db';

interface Pending {
  readonly type: string;
  readonly data: Record<string, unknown>;
  readonly update: RunUpdate | undefined;
  readonly resolve: (e: StoredRunEvent) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The one writer of a run's audit log on this replica. Events are stored (with any change of the
 * run row they announce) and then published, in order; whatever is emitted while a write is in
 * flight goes into the next write, so a busy run costs one round trip per batch, not per event.
 */
export class RunWriter {
  private queue: Pending[] = [];
  private flushing = false;
  private failure: unknown;

  constructor(
    private readonly repo: RunsRepository,
    private readonly bus: Bus,
    readonly runId: string,
    private readonly replica: string,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  /** Resolves once the event is durable and published. */
  emit(type: string, data: Record<string, unknown> = {}, update?: RunUpdate): Promise<StoredRunEvent> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.queue.push({ type, data, update, resolve, reject });
      if (!this.flushing) {
        // Deferred to the end of this turn, so what the run emits together (a step's completion
        // and the starts of the steps it unblocks) is written together.
        this.flushing = true;
        queueMicrotask(() => void this.flush());
      }
    });
  }

  /** Publishes events stored elsewhere (the run's first events, written with its row). */
  publish(events: readonly StoredRunEvent[]): void {
    for (const e of events) this.bus.publish(runEventsSubject(this.runId), e);
  }

  private async flush(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0);
      const update = batch.reduce<RunUpdate | undefined>(
        (acc, p) => (p.update ? { ...acc, ...p.update } : acc),
        undefined,
      );
      try {
        const stored = await this.repo.append(
          this.runId,
          batch.map((p) => ({ type: p.type, data: p.data })),
          { replica: this.replica, ...(update ? { update } : {}) },
        );
        this.publish(stored);
        stored.forEach((e, i) => batch[i]?.resolve(e));
      } catch (err) {
        this.failure = err;
        for (const p of [...batch, ...this.queue.splice(0)]) p.reject(err);
        this.onFailure(err);
      }
    }
    this.flushing = false;
  }
}
