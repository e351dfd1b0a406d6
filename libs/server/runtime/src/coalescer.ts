/**
 * Group commit for calls that can be answered together: what is asked while a batch is on its way
 * goes in the next batch, so an idle caller pays no wait (its call leaves at the end of the turn)
 * and a busy one makes one round trip for many. `send` answers a batch in its order; a batch that
 * fails rejects each of its calls with that error (callers retry as they would a single call).
 */
export class Coalescer<I, O> {
  private queue: Array<{ item: I; resolve: (o: O) => void; reject: (err: unknown) => void }> = [];
  private sending = false;

  constructor(
    private readonly send: (items: I[]) => Promise<O[]>,
    private readonly maxBatch = 256,
  ) {}

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.sending) {
        this.sending = true;
        // Whatever else this turn asks for leaves with it.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const batch = this.queue.splice(0, this.maxBatch);
      try {
        const answers = await this.send(batch.map((b) => b.item));
        if (answers.length !== batch.length)
          throw new Error(`a batch of ${batch.length} was answered with ${answers.length}`);
        batch.forEach((b, i) => b.resolve(answers[i] as O));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    // In the same turn as the last look at the queue: a call made next starts a new drain.
    this.sending = false;
  }
}
