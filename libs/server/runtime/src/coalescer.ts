/** How long a batch on its way holds the next one back; past this it is presumed stuck. */
export const COALESCE_PATIENCE_MS = 1_000;

export interface CoalescerOptions {
  /** The most calls in one batch. */
  readonly maxBatch?: number;
  /**
   * How long a batch on its way holds the next one back. A batch whose answer never comes (its
   * receiver died mid-call: the call waits for its timeout) must not stall every call after it:
   * past this, the next batch leaves anyway.
   */
  readonly patienceMs?: number;
  /** The clock that ages batches (tests move theirs by hand). */
  readonly now?: () => number;
}

/**
 * Group commit for calls that can be answered together: what is asked while a batch is on its way
 * goes in the next batch, so an idle caller pays no wait (its call leaves at the end of the turn)
 * and a busy one makes one round trip for many. `send` answers a batch in its order; a batch that
 * fails rejects each of its calls with that error (callers retry as they would a single call).
 */
export class Coalescer<I, O> {
  private queue: Array<{ item: I; resolve: (o: O) => void; reject: (err: unknown) => void }> = [];
  /** When each batch on its way left. */
  private readonly out = new Set<{ readonly since: number }>();
  private scheduled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxBatch: number;
  private readonly patienceMs: number;
  private readonly now: () => number;

  constructor(
    private readonly send: (items: I[]) => Promise<O[]>,
    opts: CoalescerOptions = {},
  ) {
    this.maxBatch = opts.maxBatch ?? 256;
    this.patienceMs = opts.patienceMs ?? COALESCE_PATIENCE_MS;
    this.now = opts.now ?? Date.now;
  }

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.kick();
    });
  }

  /** Sends the next batch at the end of this turn, unless a recent batch is still on its way. */
  private kick(): void {
    if (this.scheduled || !this.queue.length) return;
    const now = this.now();
    if ([...this.out].some((b) => now - b.since < this.patienceMs)) {
      // Looked at again when that batch is answered, or once it has been out too long.
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.kick();
      }, this.patienceMs).unref();
      return;
    }
    this.scheduled = true;
    // Whatever else this turn asks for leaves with it.
    setImmediate(() => {
      this.scheduled = false;
      void this.sendNext();
    });
  }

  private async sendNext(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    if (!batch.length) return;
    const entry = { since: this.now() };
    this.out.add(entry);
    try {
      const answers = await this.send(batch.map((b) => b.item));
      if (answers.length !== batch.length)
        throw new Error(`a batch of ${batch.length} was answered with ${answers.length}`);
      batch.forEach((b, i) => b.resolve(answers[i] as O));
    } catch (err) {
      for (const b of batch) b.reject(err);
    } finally {
      this.out.delete(entry);
      this.kick();
    }
  }
}
