import { TokenBatcher } from './token-batcher';

describe('TokenBatcher', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends at once when enough characters wait, and the rest at the end', () => {
    const sent: string[] = [];
    const b = new TokenBatcher((t) => sent.push(t), { maxChars: 5, maxDelayMs: 1_000 });
    for (const piece of ['ab', 'cd', 'ef', 'g']) b.push(piece);
    expect(sent).toEqual(['abcdef']);
    b.end();
    expect(sent).toEqual(['abcdef', 'g']);
  });

  it('sends what waits once the delay has passed, counted from its first character', () => {
    const sent: string[] = [];
    const b = new TokenBatcher((t) => sent.push(t), { maxChars: 100, maxDelayMs: 30 });
    b.push('a');
    jest.advanceTimersByTime(20);
    b.push('b');
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(10);
    expect(sent).toEqual(['ab']);
    b.push('c');
    b.end();
    jest.advanceTimersByTime(100);
    expect(sent).toEqual(['ab', 'c']);
  });

  it('sends everything exactly once, in order, and nothing empty', () => {
    const sent: string[] = [];
    const b = new TokenBatcher((t) => sent.push(t), { maxChars: 7, maxDelayMs: 5 });
    const pieces = Array.from({ length: 50 }, (_, i) => `${i},`);
    pieces.forEach((p, i) => {
      b.push(p);
      b.push('');
      if (i % 3 === 0) jest.advanceTimersByTime(5);
    });
    b.end();
    b.end();
    expect(sent.join('')).toBe(pieces.join(''));
    expect(sent.every((s) => s.length > 0)).toBe(true);
  });
});
