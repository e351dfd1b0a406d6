import { ReferenceError, resolveArguments, type ResolutionContext } from './resolve';
import { exactPlaceholder, placeholdersIn } from './references';

const ctx: ResolutionContext = {
  stepIds: ['list', 'count', 'report'],
  currentIndex: 2,
  results: new Map<string, unknown>([
    [
      'list',
      {
        files: [
          { name: 'a.txt', size: 3 },
          { name: 'b.txt', size: 5 },
        ],
        ok: true,
      },
    ],
    ['count', 2],
  ]),
  inputs: { user: 'ada', limits: { max: 10 }, flag: false },
};

describe('resolveArguments', () => {
  it('keeps the JSON type of an exact placeholder', () => {
    expect(
      resolveArguments(
        {
          files: '{{node.list.result.files}}',
          first: '{{steps.0.result.files[0].name}}',
          n: '{{last.result}}',
          limits: '{{inputs.limits}}',
          flag: ' {{ inputs.flag }} ',
          max: '{{inputs.limits.max}}',
        },
        ctx,
      ),
    ).toEqual({
      files: [
        { name: 'a.txt', size: 3 },
        { name: 'b.txt', size: 5 },
      ],
      first: 'a.txt',
      n: 2,
      limits: { max: 10 },
      flag: false,
      max: 10,
    });
  });

  it('renders placeholders inside text as strings', () => {
    expect(
      resolveArguments(
        { text: '{{inputs.user}} has {{last.result}} files: {{node.list.result.files[1]}}' },
        ctx,
      ),
    ).toEqual({
      text: 'ada has 2 files: {"name":"b.txt","size":5}',
    });
  });

  it('walks arrays and leaves non-strings alone', () => {
    expect(
      resolveArguments({ list: ['{{last.result}}', 3, null, { deep: '{{inputs.user}}' }] }, ctx),
    ).toEqual({ list: [2, 3, null, { deep: 'ada' }] });
  });

  it.each([
    ['a missing property', '{{node.list.result.nothing}}', /node\.list\.result\.nothing does not exist/],
    ['an index past the end', '{{node.list.result.files[7]}}', /files\[7\] does not exist/],
    ['an index into a non-array', '{{node.list.result.ok[0]}}', /ok\[0\] does not exist/],
    ['a step that has not completed', '{{node.report.result}}', /has no result/],
    ['an input that was not given', '{{inputs.missing}}', /input missing was not given/],
    ['a prototype property', '{{node.list.result.constructor}}', /does not exist/],
    ['garbage', '{{ rm -rf / }}', /is not a reference/],
  ])('fails clearly on %s', (_, value, message) => {
    expect(() => resolveArguments({ v: value }, ctx)).toThrow(ReferenceError);
    expect(() => resolveArguments({ v: value }, ctx)).toThrow(message);
  });
});

describe('placeholders', () => {
  it('recognises exact placeholders only when the whole value is one', () => {
    expect(exactPlaceholder('{{inputs.a}}')?.ok).toBe(true);
    expect(exactPlaceholder('{{inputs.a}} and {{inputs.b}}')).toBeUndefined();
    expect(exactPlaceholder('x {{inputs.a}}')).toBeUndefined();
  });

  it('parses paths with names and indexes', () => {
    const [p] = placeholdersIn('{{node.n.result.files[0].name}}');
    expect(p).toMatchObject({
      ok: true,
      ref: { root: { kind: 'node', id: 'n' }, path: ['files', 0, 'name'] },
    });
  });
});
