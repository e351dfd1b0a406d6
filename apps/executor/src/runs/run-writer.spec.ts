import type { Bus } from '@switchyard/server-bus';
import {
  LeaseLostError,
  type NewRunEvent,
  type RunsRepository,
  type RunUpdate,
  type StoredRunEvent,
} from '@switchyard/server-db';
import { RunWriter } from './run-writer';

/** A log in memory standing in for Postgres: records each write's batch. */
class MemoryLog {
  readonly writes: Array<{ types: string[]; update: RunUpdate | undefined }> = [];
  seq = 0;
  fail: Error | undefined;
  release: (() => void) | undefined;

  async append(
    runId: string,
    events: readonly NewRunEvent[],
    opts: { update?: RunUpdate } = {},
  ): Promise<StoredRunEvent[]> {
    this.writes.push({ types: events.map((e) => e.type), update: opts.update });
    if (this.fail) throw this.fail;
    if (this.writes.length === 1) await new Promise<void>((r) => (this.release = r)); // hold the first write
    return events.map((e) => ({ runId, seq: ++this.seq, type: e.type, data: e.data ?? {}, at: '' }));
  }
}

const published: unknown[] = [];
const bus = { publish: (_s: string, e: unknown) => published.push(e) } as unknown as Bus;

describe('RunWriter', () => {
  beforeEach(() => published.splice(0));

  it('writes what is emitted in one turn together, and what comes during a write in the next one, in order', async () => {
    const log = new MemoryLog();
    const failures: unknown[] = [];
    const w = new RunWriter(log as unknown as RunsRepository, bus, 'run', 'replica', (e) => failures.push(e));
    const a = w.emit('a');
    const b = w.emit('b', {}, { status: 'running' });
    await new Promise((r) => setImmediate(r));
    const c = w.emit('c', {}, { summary: 'x' });
    const d = w.emit('d', {}, { status: 'completed' });
    log.release?.();
    const stored = await Promise.all([a, b, c, d]);
    expect(stored.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(log.writes).toEqual([
      { types: ['a', 'b'], update: { status: 'running' } },
      { types: ['c', 'd'], update: { summary: 'x', status: 'completed' } },
    ]);
    expect(published.map((e) => (e as StoredRunEvent).type)).toEqual(['a', 'b', 'c', 'd']);
    expect(failures).toEqual([]);
  });

  it('fails every pending and later emit once a write fails, and reports it once', async () => {
    const log = new MemoryLog();
    log.fail = new LeaseLostError('gone');
    const failures: unknown[] = [];
    const w = new RunWriter(log as unknown as RunsRepository, bus, 'run', 'replica', (e) => failures.push(e));
    await expect(w.emit('a')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(w.emit('b')).rejects.toBeInstanceOf(LeaseLostError);
    expect(failures).toHaveLength(1);
    expect(published).toEqual([]);
  });
});
