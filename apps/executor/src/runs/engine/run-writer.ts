import {
  AppError,
  describeIssues,
  RunEventBody,
  toFieldIssues,
  type RunEvent,
  type RunEventData,
  type RunEventType,
  type RunFailed,
} from '@switchyard/contracts';
import { storableText } from '@switchyard/server-db';
import { LeaseLostError, type RunsRepository, type RunUpdate } from '@switchyard/server-db-runs';
import type { RunEventOutbox } from './run-event-outbox';

/** What the writer needs of the run's log: the runs repository, or an in-memory log in unit tests. */
export type RunLog = Pick<RunsRepository, 'append' | 'fail'>;

interface Pending {
  readonly event: RunEventBody;
  readonly update: RunUpdate | undefined;
  /** Called once the event is durable (it settles the emit). */
  readonly durable: () => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The one writer of a run's audit log on this replica. Each event is parsed against the catalog
 * (once: what is published after is not parsed again), stored (with any change of the run row it
 * announces) and then published, in order; whatever is emitted while a write is in flight goes into
 * the next write, so a busy run costs one round trip per batch, not per event. A write that fails
 * (or an event that does not fit the catalog) stops the writer: that batch and everything after it
 * is refused, and `onFailure` is told once.
 */
export class RunWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly repo: RunLog,
    /** Where stored events leave for the live streams (the replica's one outbox). */
    private readonly outbox: RunEventOutbox,
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
    const written = this.write(type, data, update, () => undefined);
    written.catch(() => undefined);
    return written;
  }

  /**
   * Like `emit`, and once the event is durable calls `next` right away, in the turn that publishes
   * the batch and ahead of it; resolves with what `next` returned (`next` throwing rejects it). A
   * step's tool call goes out this way: in the turn its start became durable, in the same socket
   * write as the events that announce it unless the outbox holds those, instead of a write of its
   * own a few microtasks later (a write wakes a process: the costliest part of a step on a busy
   * machine).
   */
  emitThen<T extends RunEventType, R>(type: T, data: RunEventData<T>, next: () => R): Promise<R> {
    const written = this.write(type, data, undefined, next);
    written.catch(() => undefined);
    return written;
  }

  private write<T extends RunEventType, R>(
    type: T,
    data: RunEventData<T>,
    update: RunUpdate | undefined,
    next: () => R,
  ): Promise<R> {
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
    return new Promise<R>((resolve, reject) => {
      const durable = () => {
        try {
          resolve(next());
        } catch (err) {
          reject(err);
        }
      };
      this.queue.push({ event: parsed.data, update, durable, reject });
      // Deferred to the end of this turn, so what the run emits together (a step's completion and
      // the starts of the steps it unblocks) is written together.
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** Publishes events stored elsewhere (the run's first events, written with its row). */
  publish(events: readonly RunEvent[], update?: RunUpdate): void {
    this.outbox.publishUnchecked(events);
    this.onPublished?.(events, update);
  }

  /** Publishes events this writer stored: their bodies were parsed against the catalog in `write`. */
  private publishParsed(events: readonly RunEvent[], update: RunUpdate | undefined): void {
    this.outbox.publish(events);
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
        // What waited for the batch to be durable goes first (a tool call), then the batch's events
        // (which leave in the same bus write unless the outbox holds them for its window).
        batch.forEach((p) => p.durable());
        this.publishParsed(stored, update);
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
