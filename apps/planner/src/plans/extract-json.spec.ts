import { extractJsonObject } from './extract-json';

const plan = { steps: [{ id: 'a', tool: 'read_file', arguments: { filePath: 'x.md' } }] };

describe('extractJsonObject', () => {
  it('reads a bare JSON object', () => {
    expect(extractJsonObject(JSON.stringify(plan))).toEqual({ ok: true, value: plan });
  });

  it('reads the object inside a ```json fence, prose around it ignored', () => {
    const answer = `Here is the plan {as asked}:\n\n\`\`\`json\n${JSON.stringify(plan, null, 2)}\n\`\`\`\nLet me know.`;
    expect(extractJsonObject(answer)).toEqual({ ok: true, value: plan });
  });

  it('reads an unlabelled fence too', () => {
    expect(extractJsonObject(`\`\`\`\n${JSON.stringify(plan)}\n\`\`\``)).toEqual({ ok: true, value: plan });
  });

  it('takes the outermost object from prose, not one of its inner objects', () => {
    const answer = `Sure. ${JSON.stringify(plan)} That should do it.`;
    expect(extractJsonObject(answer)).toEqual({ ok: true, value: plan });
  });

  it('skips braces of prose that are not JSON', () => {
    const answer = `I will use {braces} sparingly. ${JSON.stringify(plan)}`;
    expect(extractJsonObject(answer)).toEqual({ ok: true, value: plan });
  });

  it('ignores braces and quotes inside JSON strings', () => {
    const tricky = {
      steps: [
        {
          id: 'w',
          tool: 'write_file',
          arguments: { content: 'a } b { c \\" "quoted" {{steps.0.result}} }}', filePath: 'f' },
        },
      ],
    };
    expect(extractJsonObject(`plan: ${JSON.stringify(tricky)} done }`)).toEqual({ ok: true, value: tricky });
  });

  it('drops <think> blocks before looking', () => {
    const answer = `<think>maybe {"steps": []} or not</think>${JSON.stringify(plan)}`;
    expect(extractJsonObject(answer)).toEqual({ ok: true, value: plan });
  });

  it('says so when there is no JSON object', () => {
    expect(extractJsonObject('I cannot plan this goal.')).toEqual({
      ok: false,
      error: 'the answer holds no JSON object',
    });
    expect(extractJsonObject('[1, 2, 3]')).toMatchObject({ ok: false });
  });

  it('reports a broken object as broken instead of returning an inner object', () => {
    const result = extractJsonObject('{"steps": [{"id": "a", "tool": "t"},]}');
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(/^the JSON object does not parse: /);
  });

  it('reports an object cut off before its end', () => {
    expect(extractJsonObject('{"steps": [{"id": "a", "tool": "t"}')).toEqual({
      ok: false,
      error: 'the JSON object is never closed (is the answer cut off?)',
    });
  });
});
