import { modelToolName, resultText } from './registry-tools';

describe('modelToolName', () => {
  it('keeps names models accept', () => {
    expect(modelToolName('read_file')).toBe('read_file');
    expect(modelToolName('mcp__everything__get-sum')).toBe('mcp__everything__get-sum');
  });

  it('cleans and shortens the others, distinctly', () => {
    const a = modelToolName(`mcp__${'x'.repeat(80)}__a.b`);
    const b = modelToolName(`mcp__${'x'.repeat(80)}__a.c`);
    expect(a).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(a).not.toBe(b);
    expect(modelToolName('mcp__my server__do it')).toBe('mcp__my_server__do_it');
  });
});

describe('resultText', () => {
  it('joins text, serialises JSON, flags errors and truncation', () => {
    expect(
      resultText({
        content: [
          { type: 'text', text: 'a' },
          { type: 'json', json: { n: 1 } },
        ],
        isError: false,
        truncated: false,
      }),
    ).toBe('a\n{"n":1}');
    expect(resultText({ content: [{ type: 'text', text: 'boom' }], isError: true, truncated: true })).toBe(
      'ERROR: boom\n[output truncated]',
    );
  });
});
