import { Coalescer } from './coalescer';

/** A send the test answers by hand: each call is recorded with its batch. */
function handSend() {
  const batches: Array<{ items: number[]; answer: (o: string[]) => void; fail: (e: Error) => void }> = [];
  const send = (items: number[]) =>
    new Promise<string[]>((answer, fail) => batches.push({ items, answer, fail }));
  return { batches, send };
}

const turn = () => new Promise((r) => setImmediate(r));

/** Lets the event loop run until `ok` holds (a bound only against a hang). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !ok(); i++) await new Promise((r) => setTimeout(r, 1));
  if (!ok()) throw new Error('condition not met');
}

describe('Coalescer', () => {
  it('sends the calls of one turn together, and what comes while a batch is out in the next one', async () => {
    const { batches, send } = handSend();
    const c = new Coalescer(send);
    const first = [c.call(1), c.call(2)];
    await turn();
    expect(batches.map((b) => b.items)).toEqual([[1, 2]]);
    const later = [c.call(3), c.call(4), c.call(5)];
    await turn();
    expect(batches).toHaveLength(1); // still out: the others wait for it
    batches[0]?.answer(['a', 'b']);
    expect(await Promise.all(first)).toEqual(['a', 'b']);
    await until(() => batches.length === 2);
    expect(batches.map((b) => b.items)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    batches[1]?.answer(['c', 'd', 'e']);
    expect(await Promise.all(later)).toEqual(['c', 'd', 'e']);
    // Idle again: a new call goes at the end of its turn.
    const alone = c.call(6);
    await until(() => batches.length === 3);
    batches[2]?.answer(['f']);
    expect(await alone).toBe('f');
  });

  it('keeps batches within the limit', async () => {
    const { batches, send } = handSend();
    const c = new Coalescer(send, { maxBatch: 2 });
    const all = [1, 2, 3, 4, 5].map((i) => c.call(i));
    await until(() => batches.length === 1);
    batches[0]?.answer(['1', '2']);
    await until(() => batches.length === 2);
    batches[1]?.answer(['3', '4']);
    await until(() => batches.length === 3);
    batches[2]?.answer(['5']);
    expect(await Promise.all(all)).toEqual(['1', '2', '3', '4', '5']);
    expect(batches.map((b) => b.items)).toEqual([[1, 2], [3, 4], [5]]);
  });

  it('rejects every call of a failed batch, and of a batch answered with the wrong count; goes on after', async () => {
    const { batches, send } = handSend();
    const c = new Coalescer(send);
    const failed = [c.call(1), c.call(2)].map((p) => p.catch((e: Error) => e.message));
    await turn();
    batches[0]?.fail(new Error('away'));
    expect(await Promise.all(failed)).toEqual(['away', 'away']);
    const short = [c.call(3), c.call(4)].map((p) => p.catch((e: Error) => e.message));
    await until(() => batches.length === 2);
    batches[1]?.answer(['only one']);
    expect(await Promise.all(short)).toEqual([
      'a batch of 2 was answered with 1',
      'a batch of 2 was answered with 1',
    ]);
    const next = c.call(5);
    await until(() => batches.length === 3);
    batches[2]?.answer(['ok']);
    expect(await next).toBe('ok');
  });

  it('does not let a batch whose answer never comes hold the next one back past its patience', async () => {
    const { batches, send } = handSend();
    let now = 0;
    const c = new Coalescer(send, { patienceMs: 5, now: () => now });
    const stuck = c.call(1).catch((e: Error) => e.message);
    await turn();
    const next = c.call(2);
    await turn();
    await new Promise((r) => setTimeout(r, 20));
    expect(batches).toHaveLength(1); // its clock has not moved: still patient
    now += 5;
    await until(() => batches.length === 2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    batches[1]?.answer(['two']);
    expect(await next).toBe('two');
    batches[0]?.fail(new Error('timed out'));
    expect(await stuck).toBe('timed out');
  });
});
