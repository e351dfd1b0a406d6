import {
  AppError,
  describeIssues,
  Events,
  RunEventBody,
  toFieldIssues,
  type RunEvent,
  type RunEventData,
  type RunEventType,
  type RunFailed,
} from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import { LeaseLostError, storableText, type RunsRepository, type RunUpdate } from '@switchyard/server-db';

/** What the writer needs of the run's log: the runs repository, or an in-memory log in unit tests. */
export type RunLog = Pick<RunsRepository, 'append' | 'fail'>;

interface Pending {
  readonly event: RunEventBody;
  readonly update: RunUpdate | undefined;
  readonly resolve: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The one writer of a run's audit log on this replica. Each event is parsed against the catalog,
 * stored (with any change of the run row it announces) and then published, in order; whatever is
 * emitted while a write is in flight goes into the next write, so a busy run costs one round trip
 * per batch, not per event. A write that fails (or an event that does not fit the catalog) stops the
 * writer: that batch and everything after it is refused, and `onFailure` is told once.
 */
export class RunWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly repo: RunLog,
    private readonly bus: BusPort,
    readonly runId: string,
    private readonly replica: string,
    private readonly onFailure: (err: unknown) => void,
    /** Told of every batch once published, with the row change it carried (the owner feed follows it). */
    private readonly onPublished?: (events: readonly RunEvent[], update: RunUpdate | undefined) => void,
  ) {}

  /**
   * Resolves once the event is durable and published. A failure is also told to `onFailure`, so a
   * caller that does not wait for the write may leave the rejection unobserved.
   */
  emit<T extends RunEventType>(type: T, data: RunEventData<T>, update?: RunUpdate): Promise<void> {
    const written = this.write(type, data, update);
    written.catch(() => undefined);
    return written;
  }

  private write<T extends RunEventType>(type: T, data: RunEventData<T>, update?: RunUpdate): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const parsed = RunEventBody.safeParse({ type, data });
    if (!parsed.success) {
      const err = new AppError(
        'internal',
        `a ${type} event does not fit the run event catalog: ${describeIssues(toFieldIssues(parsed.error))}`,
      );
      this.stop(err, []);
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ event: parsed.data, update, resolve, reject });
      // Deferred to the end of this turn, so what the run emits together (a step's completion and
      // the starts of the steps it unblocks) is written together.
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** Publishes events stored elsewhere (the run's first events, written with its row). */
  publish(events: readonly RunEvent[], update?: RunUpdate): void {
    const live = Events.run(this.runId);
    for (const e of events) this.bus.emit(live, e);
    this.onPublished?.(events, update);
  }

  /**
   * Ends the run after the writer stopped: an `error` event (code `internal`) saying why, written
   * like any other; if the log refuses even that, the row is marked failed by a plainer statement.
   * Resolves with the event's data; rejects when neither could be written (a lost lease, no database).
   */
  async close(message: string): Promise<RunFailed> {
    await this.flushing;
    const data: RunFailed = { message: storableText(message), code: 'internal' };
    const update: RunUpdate = { status: 'failed', error: data.message, finished: true, release: true };
    let stored: RunEvent[];
    try {
      stored = await this.repo.append(this.runId, [{ type: 'error', data }], {
        replica: this.replica,
        update,
      });
    } catch (err) {
      if (err instanceof LeaseLostError) throw err;
      stored = await this.repo.fail(this.runId, this.replica, data.message);
      if (!stored.length) throw new LeaseLostError(`run ${this.runId} is no longer held by this replica`);
    }
    this.publish(stored, update);
    return data;
  }

  private async flush(): Promise<void> {
    while (this.queue.length && this.failure === undefined) {
      const batch = this.queue.splice(0);
      const update = batch.reduce<RunUpdate | undefined>(
        (acc, p) => (p.update ? { ...acc, ...p.update } : acc),
        undefined,
      );
      try {
        const stored = await this.repo.append(
          this.runId,
          batch.map((p) => p.event),
          { replica: this.replica, ...(update ? { update } : {}) },
        );
        this.publish(stored, update);
        batch.forEach((p) => p.resolve());
      } catch (err) {
        this.stop(err, batch);
      }
    }
    // In the same turn as the last look at the queue: whatever is emitted next starts a new flush.
    this.flushing = undefined;
  }

  private stop(err: unknown, batch: readonly Pending[]): void {
    const first = this.failure === undefined;
    if (first) this.failure = err;
    for (const p of [...batch, ...this.queue.splice(0)]) p.reject(this.failure);
    if (first) this.onFailure(err);
  }
}
