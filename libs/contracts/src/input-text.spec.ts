import fc from 'fast-check';
import { inputTextIssues, MAX_JSON_DEPTH } from './input-text';

/** `levels` nested objects around `leaf`, as a client would send it (parsed from JSON text). */
function nested(levels: number, leaf: unknown = 1): unknown {
  return JSON.parse('{"a":'.repeat(levels) + JSON.stringify(leaf) + '}'.repeat(levels));
}

// UTF-16 code units, weighted towards NUL and the surrogate range.
const codeUnit = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0xd7f0, max: 0xe00f }),
  fc.integer({ min: 0, max: 0xffff }),
);

describe('inputTextIssues', () => {
  it('accepts ordinary text, emoji (surrogate pairs) and nesting up to the limit', () => {
    const body = { goal: 'Résumé 📄 — 日本語', steps: [{ arguments: nested(MAX_JSON_DEPTH - 3) }] };
    expect(inputTextIssues(body, 'body', MAX_JSON_DEPTH)).toEqual([]);
    expect(inputTextIssues(nested(MAX_JSON_DEPTH), 'body', MAX_JSON_DEPTH)).toEqual([]);
  });

  it.each([
    ['NUL', 'a\u0000b', 'U+0000'],
    ['a lone high surrogate', 'a\ud800b', 'unpaired'],
    ['a lone low surrogate', '\udc00', 'unpaired'],
    ['a high surrogate at the end', 'x\udbff', 'unpaired'],
    ['swapped halves', '\udc00\ud800', 'unpaired'],
  ])('refuses %s with the path of the string', (_, s, words) => {
    const issues = inputTextIssues(
      JSON.parse(`{"steps":[{"args":{"q":${JSON.stringify(s)}}}]}`),
      'body',
      MAX_JSON_DEPTH,
    );
    expect(issues).toEqual([{ path: 'body.steps.0.args.q', message: expect.stringContaining(words) }]);
  });

  it('refuses a hostile key, naming it escaped', () => {
    const issues = inputTextIssues(JSON.parse('{"inputs":{"k\\u0000":1}}'), 'body', MAX_JSON_DEPTH);
    expect(issues).toEqual([{ path: 'body.inputs.k\\u0000', message: expect.stringContaining('key') }]);
    expect(JSON.stringify(issues)).not.toContain('\u0000');
  });

  it('refuses one level too many at the path where it happens', () => {
    const issues = inputTextIssues(nested(MAX_JSON_DEPTH + 1), 'body', MAX_JSON_DEPTH);
    expect(issues).toEqual([
      { path: `body${'.a'.repeat(MAX_JSON_DEPTH)}`, message: expect.stringContaining('64 levels') },
    ]);
  });

  it('walks 100,000 levels of arrays without overflowing the stack', () => {
    const deep: unknown = JSON.parse('['.repeat(100_000) + ']'.repeat(100_000));
    const issues = inputTextIssues({ x: deep }, 'query', MAX_JSON_DEPTH);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe(`query.x${'.0'.repeat(MAX_JSON_DEPTH - 1)}`);
  });

  it('reports at most 20 issues', () => {
    expect(inputTextIssues(Array(1000).fill('\u0000'), 'body', MAX_JSON_DEPTH)).toHaveLength(20);
  });

  it('agrees with String.prototype.isWellFormed on any string, NUL aside', () => {
    fc.assert(
      fc.property(fc.array(codeUnit, { maxLength: 8 }), (units) => {
        const s = String.fromCharCode(...units);
        const refused = inputTextIssues(s, 'v', MAX_JSON_DEPTH).length > 0;
        const wellFormed = (s as string & { isWellFormed(): boolean }).isWellFormed();
        expect(refused).toBe(!wellFormed || s.includes('\u0000'));
      }),
      { numRuns: 2_000 },
    );
  });
});
