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

/** The row changes a new run's creation carries: what its first turn's events may set. */
export type CreationUpdate = Pick<RunUpdate, 'status' | 'usage' | 'plan'>;
const CREATION_FIELDS: ReadonlySet<string> = new Set<keyof CreationUpdate>(['status', 'usage', 'plan']);

/**
 * Writes a new run's row with its first events, as `update` leaves the row (one statement), and
 * resolves with the events stored.
 */
export type RunCreation = (
  events: readonly RunEventBody[],
  update: CreationUpdate | undefined,
) => Promise<RunEvent[]>;

interface PendingCreation {
  readonly first: readonly RunEventBody[];
  readonly write: RunCreation;
  readonly resolve: (stored: RunEvent[]) => void;
  readonly reject: (err: unknown) => void;
}

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
  private creation: PendingCreation | undefined;
  /** Nothing was emitted or created yet: a creation may still be the first write. */
  private fresh = true;
  /** The run's creation, when this writer makes it (see `create`): settled once the row is written or refused. */
  private creating: Promise<RunEvent[]> | undefined;

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
    this.fresh = false;
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

  /**
   * Makes the writer's first write the run's creation: `first` (bodies parsed against the catalog
   * already) and the run's first batch (what it emits in one go at once: a given plan, the run's
   * start, its first steps' starts, each step's tool called once durable) are stored by `write` in
   * one statement, instead of the row's and then the batch's. A first turn whose row changes a new
   * row cannot carry (an end) is written after the row, as usual. Resolves with the events stored,
   * once published. A creation that fails rejects, and so does everything emitted since: the run
   * does not exist, so `onFailure` is not told (whoever created the run answers for it).
   */
  create(first: readonly RunEventBody[], write: RunCreation): Promise<RunEvent[]> {
    if (!this.fresh)
      return Promise.reject(new Error(`run ${this.runId} is created by its writer's first write`));
    this.fresh = false;
    this.creating = new Promise<RunEvent[]>((resolve, reject) => {
      this.creation = { first, write, resolve, reject };
      // It leaves with the run's first emit, a batch like any (the run's first work reaches it a few
      // microtasks after this turn, and emits a plan's announcement, its start and its first steps'
      // starts in one go); or, when nothing is emitted by then (a draft), once this turn is over.
      setImmediate(() => this.startCreation());
    });
    return this.creating;
  }

  /** Writes the pending creation now unless a write is on its way (which writes it first). */
  private startCreation(): void {
    if (this.creation) this.flushing ??= this.flush();
  }

  /** The run's row being written by this writer (`create`), if it is: settles once written or refused. */
  get created(): Promise<unknown> | undefined {
    return this.creating;
  }

  /** Publishes events stored by a plain statement (the end `close` writes): the bus checks them. */
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
    // A row still to be written goes first: the error is appended to it.
    this.startCreation();
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
    if (this.creation) await this.writeCreation(this.creation);
    while (this.queue.length && this.failure === undefined) {
      const batch = this.queue.splice(0);
      const update = mergedUpdate(batch);
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

  private async writeCreation(c: PendingCreation): Promise<void> {
    this.creation = undefined;
    const pending = this.queue.splice(0);
    const update = mergedUpdate(pending);
    const joins = update === undefined || Object.keys(update).every((k) => CREATION_FIELDS.has(k));
    const batch = joins ? pending : [];
    // Put back ahead of whatever is emitted while the row is written: the next batch.
    if (!joins) this.queue.unshift(...pending);
    const carried = joins ? update : undefined;
    try {
      const stored = await c.write([...c.first, ...batch.map((p) => p.event)], carried);
      batch.forEach((p) => p.durable());
      this.publishParsed(stored, carried);
      c.resolve(stored);
    } catch (err) {
      this.failure = err;
      for (const p of [...batch, ...this.queue.splice(0)]) p.reject(err);
      c.reject(err);
    }
  }

  private stop(err: unknown, batch: readonly Pending[]): void {
    const first = this.failure === undefined;
    if (first) this.failure = err;
    for (const p of [...batch, ...this.queue.splice(0)]) p.reject(this.failure);
    if (first) this.onFailure(err);
  }
}

/** The row changes a batch's events carry, later ones over earlier ones. */
function mergedUpdate(batch: readonly Pending[]): RunUpdate | undefined {
  return batch.reduce<RunUpdate | undefined>(
    (acc, p) => (p.update ? { ...acc, ...p.update } : acc),
    undefined,
  );
}
