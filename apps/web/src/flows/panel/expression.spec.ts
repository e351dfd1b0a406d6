import { applyCompletion, completionsAt, referenceProblems } from './expression';
import { sourcesFor } from './fields';
import { GRAPH, INPUT_SCHEMA, TOOLS } from './fixtures';

const sources = sourcesFor({
  nodeId: 'mail',
  graph: GRAPH,
  inputSchema: INPUT_SCHEMA,
  tools: TOOLS,
  results: { sum: { text: 'short' } },
});

/** Completions with the cursor where `|` is. */
function at(marked: string) {
  const cursor = marked.indexOf('|');
  const text = marked.replace('|', '');
  return { text, completion: completionsAt(text, cursor, sources) };
}
const labels = (marked: string) => at(marked).completion?.options.map((o) => o.label);

describe('expression completion', () => {
  it('offers inputs and upstream results right after {{, one level at a time', () => {
    expect(labels('Hello {{|')).toEqual([
      'inputs.count',
      'inputs.title',
      'node.sum.result',
      'node.fetch.result',
    ]);
    expect(labels('Hello {{ inp|')).toEqual(['inputs.count', 'inputs.title']);
  });

  it('inside a half-typed {{node. offers only nodes, replacing what is typed and closing the braces', () => {
    const { text, completion } = at('Total: {{node.|');
    expect(completion?.options.map((o) => o.label)).toEqual(['node.sum.result', 'node.fetch.result']);
    expect(completion).toMatchObject({ from: 9, to: 14, close: true });
    const fetch = completion!.options[1]!;
    expect(fetch.source.id).toBe('fetch');
    expect(applyCompletion(text, completion!, fetch)).toEqual({
      text: 'Total: {{node.fetch.result}}',
      cursor: 'Total: {{node.fetch.result}}'.length,
    });
  });

  it('walks into fields: object properties, the [0] element, fields seen only in the last run', () => {
    expect(labels('{{node.fetch.result.|')).toEqual(['node.fetch.result.items', 'node.fetch.result.total']);
    expect(labels('{{node.fetch.result.it|')).toEqual(['node.fetch.result.items']);
    expect(labels('{{node.fetch.result.items|')).toEqual([
      'node.fetch.result.items',
      'node.fetch.result.items[0]',
    ]);
    expect(labels('{{node.fetch.result.items[0].|')).toEqual([
      'node.fetch.result.items[0].name',
      'node.fetch.result.items[0].price',
    ]);
    expect(labels('{{node.sum.result.|')).toEqual(['node.sum.result.text']);
    expect(at('{{node.fetch.result.items[0].p|').completion?.options[0]?.type).toBe('number');
  });

  it('completing inside an existing placeholder replaces the whole name and keeps its braces', () => {
    const { text, completion } = at('a {{ inputs.co|unt }} b');
    expect(completion).toMatchObject({ from: 5, to: 17, close: false });
    expect(completion?.options.map((o) => o.label)).toEqual(['inputs.count']);
    const applied = applyCompletion(text, completion!, completion!.options[0]!);
    expect(applied.text).toBe('a {{ inputs.count }} b');
    expect(applied.text.slice(applied.cursor)).toBe(' b');
  });

  it('offers nothing outside a placeholder, after a closed one, or on non-reference text', () => {
    expect(at('plain |text').completion).toBeUndefined();
    expect(at('{{inputs.count}} and |').completion).toBeUndefined();
    expect(at('{{ 1 + |').completion).toBeUndefined();
    expect(labels('{{nothing|')).toEqual([]);
  });
});

describe('reference problems', () => {
  it('accepts references the node can see', () => {
    expect(
      referenceProblems(
        'Dear {{inputs.title}}, {{ node.fetch.result.items[0].price }} x {{inputs.count}} {{node.sum.result.text}}',
        sources,
      ),
    ).toEqual([]);
  });

  it('flags unknown inputs, nodes that are not upstream and missing fields, with their place', () => {
    const text =
      'x {{inputs.nope}} {{node.other.result}} {{node.fetch.result.itemz}} {{node.fetch.result.total.x}}';
    const problems = referenceProblems(text, sources);
    expect(problems.map((p) => [p.code, p.raw, p.field])).toEqual([
      ['unknown_input', '{{inputs.nope}}', undefined],
      ['unknown_node', '{{node.other.result}}', undefined],
      ['unknown_field', '{{node.fetch.result.itemz}}', 'itemz'],
      ['unknown_field', '{{node.fetch.result.total.x}}', 'x'],
    ]);
    expect(text.slice(problems[0]!.from, problems[0]!.to)).toBe('{{inputs.nope}}');
    expect(text.slice(problems[3]!.from, problems[3]!.to)).toBe('{{node.fetch.result.total.x}}');
  });

  it('does not guess about results whose shape is unknown', () => {
    const noRun = sourcesFor({ nodeId: 'mail', graph: GRAPH, inputSchema: INPUT_SCHEMA, tools: TOOLS });
    expect(referenceProblems('{{node.sum.result.anything[3].deep}}', noRun)).toEqual([]);
  });

  it('flags malformed placeholders and stray braces', () => {
    const problems = referenceProblems('{{ 1 + 2 }} and {{inputs.count', sources);
    expect(problems.map((p) => [p.code, p.raw, p.from])).toEqual([
      ['malformed', '{{ 1 + 2 }}', 0],
      ['unbalanced', '{{', 16],
    ]);
    expect(referenceProblems('done }}', sources).map((p) => p.code)).toEqual(['unbalanced']);
  });
});
