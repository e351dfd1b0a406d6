import { resultValue } from './result-value';

const result = (content: Array<{ type: 'text'; text: string } | { type: 'json'; json: unknown }>) => ({
  content,
  isError: false,
  truncated: false,
});

describe('resultValue', () => {
  it("takes the tool's value over its content", () => {
    const both = result([
      { type: 'text', text: '{"t":36}' },
      { type: 'json', json: { t: 36 } },
    ]);
    // Without a value, text beside JSON reads as text.
    expect(resultValue(both)).toBe('{"t":36}\n{"t":36}');
    expect(resultValue({ ...both, value: { t: 36 } })).toEqual({ t: 36 });
    expect(resultValue({ ...both, value: null })).toBeNull();
  });

  it('reads the content when there is no value', () => {
    expect(resultValue(result([{ type: 'json', json: [1] }]))).toEqual([1]);
    expect(resultValue(result([{ type: 'text', text: ' {"a": 1} ' }]))).toEqual({ a: 1 });
    expect(resultValue(result([{ type: 'text', text: 'plain' }]))).toBe('plain');
  });
});
