import { capOutput } from './invoke-tool.usecase';

describe('capOutput', () => {
  const rows = { rows: [[1, 'a']] };

  it('keeps a value that fits the limit, whole', () => {
    const r = capOutput(
      { content: [{ type: 'text', text: 'one row' }], isError: false, truncated: false, value: rows },
      100,
    );
    expect(r).toEqual({
      content: [{ type: 'text', text: 'one row' }],
      isError: false,
      truncated: false,
      value: rows,
    });
  });

  it('drops a value larger than the limit and says the output was cut', () => {
    const big = { rows: Array.from({ length: 50 }, (_, i) => [i, 'xxxxxxxx']) };
    const r = capOutput(
      { content: [{ type: 'text', text: 'many rows' }], isError: false, truncated: false, value: big },
      200,
    );
    expect(r).not.toHaveProperty('value');
    expect(r).toMatchObject({ content: [{ type: 'text', text: 'many rows' }], truncated: true });
  });
});
