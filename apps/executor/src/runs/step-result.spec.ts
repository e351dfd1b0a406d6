import { capResult, keptValue, resultText, resultValue } from './step-result';

const text = (...t: string[]) => ({
  content: t.map((x) => ({ type: 'text' as const, text: x })),
  isError: false,
  truncated: false,
});

describe('step results', () => {
  it('takes a single JSON block as its value', () => {
    expect(
      resultValue({ content: [{ type: 'json', json: { a: [1] } }], isError: false, truncated: false }),
    ).toEqual({
      a: [1],
    });
  });

  it('parses text that is a JSON object or array, and keeps other text as text', () => {
    expect(resultValue(text('{"rows": [1, 2]}'))).toEqual({ rows: [1, 2] });
    expect(resultValue(text(' [1] '))).toEqual([1]);
    expect(resultValue(text('42'))).toBe('42');
    expect(resultValue(text('{not json}'))).toBe('{not json}');
    expect(resultValue(text('a', 'b'))).toBe('a\nb');
  });

  it('caps what the history keeps and says so', () => {
    expect(capResult({ a: 1 }, 100)).toEqual({ value: { a: 1 }, truncated: false });
    const big = capResult({ s: 'x'.repeat(500) }, 100);
    expect(big.truncated).toBe(true);
    expect(big.value).toHaveLength(100);
    expect(capResult(undefined, 10)).toEqual({ value: undefined, truncated: false });
  });

  it('keeps a value holding NUL or half a surrogate pair as its JSON text, flagged, and gives it back', () => {
    const value = { out: 'cat\u0000/proc/self/cmdline\u0000', lone: '\ud800', pair: '\ud83d\ude00' };
    const kept = capResult(value, 1_000);
    expect(kept).toEqual({ value: JSON.stringify(value), truncated: false, encoded: 'json' });
    expect(keptValue(kept)).toEqual(value);
    // A backslash followed by "u0000" is plain text, and a whole surrogate pair is storable.
    expect(capResult({ s: '\\u0000 \ud83d\ude00' }, 1_000)).toEqual({
      value: { s: '\\u0000 \ud83d\ude00' },
      truncated: false,
    });
    expect(keptValue({ value: 'as is' })).toBe('as is');
  });

  it('never cuts a kept prefix between the halves of a surrogate pair', () => {
    const json = JSON.stringify('ab\ud83d\ude00'); // "ab😀": the pair sits at characters 3 and 4
    expect(capResult('ab\ud83d\ude00', 4)).toEqual({ value: json.slice(0, 3), truncated: true });
    expect(capResult('ab\ud83d\ude00', 5)).toEqual({ value: json.slice(0, 5), truncated: true });
  });

  it('reports an error text, cut, with a fallback when the tool said nothing', () => {
    expect(resultText(text('boom'))).toBe('boom');
    expect(resultText(text('x'.repeat(50)), 10)).toBe(`${'x'.repeat(10)}…`);
    expect(resultText({ content: [], isError: true, truncated: false })).toContain('without a message');
    expect(resultText(text('nul\u0000 and \udc00'))).toBe('nul\ufffd and \ufffd');
  });
});
