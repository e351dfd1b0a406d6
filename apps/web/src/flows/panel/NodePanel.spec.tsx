import { useState } from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { I18nProvider } from '../../i18n/i18n';
import type { ToolNodeData } from '../types';
import { sourcesFor, type ToolWithOutput } from './fields';
import { GRAPH, INPUT_SCHEMA, TOOLS } from './fixtures';
import { NodePanel, type PanelIssue } from './NodePanel';
import { REF_MIME } from './ReferenceTree';

const report: ToolWithOutput = {
  name: 'summarise',
  description: 'Summarises rows',
  inputSchema: {
    type: 'object',
    properties: {
      limit: { type: 'integer', description: 'at most this many' },
      url: { type: 'string', examples: ['https://example.org'] },
      format: { enum: ['csv', 'json'] },
      headers: { type: 'object' },
    },
    required: ['limit'],
  },
  effect: 'read',
  idempotent: true,
  source: 'builtin',
};
const mailer = TOOLS.find((t) => t.name === 'send_mail')!;
const sources = sourcesFor({
  nodeId: 'sum',
  graph: GRAPH,
  inputSchema: INPUT_SCHEMA,
  tools: TOOLS,
  results: { fetch: { items: [], total: 4 } },
});

function Harness(props: {
  tool?: ToolWithOutput;
  data?: ToolNodeData;
  issues?: PanelIssue[];
  lastResult?: unknown;
  onChange: jest.Mock;
  onReferenceNode?: jest.Mock;
}) {
  const [data, setData] = useState<ToolNodeData>(props.data ?? { tool: 'summarise' });
  return (
    <I18nProvider lang="en">
      <NodePanel
        node={{ id: 'sum', data }}
        tool={props.tool ?? report}
        sources={sources}
        issues={props.issues ?? []}
        lastResult={props.lastResult}
        onChange={(d) => {
          props.onChange(d);
          setData(d);
        }}
        onReferenceNode={props.onReferenceNode ?? jest.fn()}
        onClose={jest.fn()}
      />
    </I18nProvider>
  );
}

const last = (mock: jest.Mock) => mock.mock.calls[mock.mock.calls.length - 1]?.[0] as ToolNodeData;
const field = (name: string) => document.querySelector(`.input-field[data-arg="${name}"]`) as HTMLElement;

describe('the node panel', () => {
  it('binds an argument to an upstream output by reference and asks the canvas for the edge', () => {
    const onChange = jest.fn();
    const onReferenceNode = jest.fn();
    render(<Harness onChange={onChange} onReferenceNode={onReferenceNode} />);
    const limit = within(field('limit'));
    fireEvent.click(limit.getByRole('radio', { name: 'Reference' }));
    expect(last(onChange).inputModes).toEqual({ limit: 'reference' });
    // A number argument: the text input is greyed, the fetched total (a number) binds.
    expect(field('limit').querySelector('[data-ref="{{inputs.title}}"]')?.getAttribute('aria-disabled')).toBe(
      'true',
    );
    const total = field('limit').querySelector(
      '[data-ref="{{node.fetch.result.total}}"] .ref-line',
    ) as HTMLElement;
    fireEvent.click(total);
    expect(last(onChange).arguments).toEqual({ limit: '{{node.fetch.result.total}}' });
    expect(onReferenceNode).toHaveBeenCalledWith('fetch');
    expect(field('limit').querySelector('.ref-chip')?.textContent).toContain('{{node.fetch.result.total}}');
    // Back to manual: a reference is not a number, so the field empties.
    fireEvent.click(limit.getByRole('radio', { name: 'Manual' }));
    expect(last(onChange).arguments).toEqual({});
  });

  it('binds a reference dropped on an argument', () => {
    const onChange = jest.fn();
    const onReferenceNode = jest.fn();
    render(<Harness onChange={onChange} onReferenceNode={onReferenceNode} />);
    const ref = '{{node.fetch.result.total}}';
    const dataTransfer = {
      types: [REF_MIME, 'text/plain'],
      getData: (k: string) => (k === REF_MIME ? ref : ''),
    };
    fireEvent.drop(field('limit'), { dataTransfer });
    expect(last(onChange)).toMatchObject({ arguments: { limit: ref }, inputModes: { limit: 'reference' } });
    expect(onReferenceNode).toHaveBeenCalledWith('fetch');
  });

  it('shows the widget for each schema type, marks required fields and puts issues under their field', () => {
    const onChange = jest.fn();
    render(
      <Harness
        onChange={onChange}
        issues={[
          { path: 'arguments.limit', message: 'limit must be at most 100' },
          { path: 'tool', message: 'tool is gone' },
        ]}
      />,
    );
    expect(within(field('limit')).getByText('required')).toBeTruthy();
    expect(within(field('url')).queryByText('required')).toBeNull();
    expect(within(field('limit')).getByRole('alert').textContent).toBe('limit must be at most 100');
    expect(screen.getAllByRole('alert')[0]?.textContent).toContain('tool is gone');

    fireEvent.change(within(field('limit')).getByRole('spinbutton'), { target: { value: '12' } });
    expect((screen.getByPlaceholderText('e.g. https://example.org') as HTMLInputElement).type).toBe('text');
    fireEvent.change(within(field('format')).getByRole('combobox'), { target: { value: '1' } });
    const headers = within(field('headers')).getByRole('textbox');
    fireEvent.change(headers, { target: { value: '{"a": ' } });
    expect(within(field('headers')).getByRole('alert').textContent).toContain('Not valid JSON');
    fireEvent.change(headers, { target: { value: '[1]' } });
    expect(within(field('headers')).getByRole('alert').textContent).toContain('Must be a JSON object');
    fireEvent.change(headers, { target: { value: '{"a": "b"}' } });
    expect(last(onChange).arguments).toEqual({ limit: 12, format: 'json', headers: { a: 'b' } });
  });

  it('writes an expression, with unknown references flagged', () => {
    const onChange = jest.fn();
    render(<Harness onChange={onChange} />);
    fireEvent.click(within(field('url')).getByRole('radio', { name: 'Expression' }));
    const box = within(field('url')).getByRole('textbox');
    fireEvent.change(box, { target: { value: 'https://x/{{inputs.nope}}' } });
    expect(within(field('url')).getByRole('alert').textContent).toContain('declares no such input');
    expect(last(onChange)).toMatchObject({
      arguments: { url: 'https://x/{{inputs.nope}}' },
      inputModes: { url: 'expression' },
    });
  });

  it('offers retries only for retry-safe tools and keeps them within 1–5 attempts', () => {
    const onChange = jest.fn();
    const { unmount } = render(<Harness onChange={onChange} />);
    fireEvent.click(screen.getByRole('checkbox', { name: 'Retry when it fails' }));
    expect(last(onChange).retry).toEqual({ attempts: 3, backoffMs: 1000 });
    fireEvent.change(screen.getByRole('spinbutton', { name: 'Attempts (1–5)' }), { target: { value: '9' } });
    expect(last(onChange).retry).toEqual({ attempts: 5, backoffMs: 1000 });
    fireEvent.click(screen.getByRole('checkbox', { name: 'Ask for approval before this step runs' }));
    expect(last(onChange).requiresApproval).toBe(true);
    unmount();

    render(
      <Harness tool={mailer} data={{ tool: 'send_mail', retry: { attempts: 2 } }} onChange={onChange} />,
    );
    expect(screen.queryByRole('checkbox', { name: 'Retry when it fails' })).toBeNull();
    expect(screen.getByText(/Retries are offered only for tools that read or are idempotent/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Remove the retry policy' }));
    expect('retry' in last(onChange)).toBe(false);
  });

  it('pins the last result, shows the pin, and unpins', () => {
    const onChange = jest.fn();
    render(<Harness onChange={onChange} lastResult={{ rows: 3, ok: true }} />);
    expect(screen.getByRole('list', { name: 'Output value' }).textContent).toContain('rows: 3');
    fireEvent.click(screen.getByRole('button', { name: /Pin this result/ }));
    expect(last(onChange).pinned).toEqual({ result: { rows: 3, ok: true } });
    expect(screen.getByRole('heading', { level: 2 }).textContent).toContain('pinned');
    fireEvent.click(screen.getByRole('button', { name: 'Unpin' }));
    expect('pinned' in last(onChange)).toBe(false);
  });
});
