import { useState } from 'react';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { I18nProvider } from '../../i18n/i18n';
import { ExpressionEditor } from './ExpressionEditor';
import { sourcesFor } from './fields';
import { GRAPH, INPUT_SCHEMA, TOOLS } from './fixtures';

const sources = sourcesFor({ nodeId: 'mail', graph: GRAPH, inputSchema: INPUT_SCHEMA, tools: TOOLS });

function Harness({ initial, onNode }: { initial: string; onNode?: (id: string) => void }) {
  const [value, setValue] = useState(initial);
  return (
    <I18nProvider lang="en">
      <ExpressionEditor
        label="Body"
        value={value}
        onChange={setValue}
        sources={sources}
        onReferenceNode={onNode}
      />
      <output data-testid="value">{value}</output>
    </I18nProvider>
  );
}

const box = () => screen.getByRole('textbox', { name: 'Body' }) as HTMLTextAreaElement;
const typeIn = (text: string) => {
  act(() => box().focus());
  fireEvent.change(box(), { target: { value: text } });
};

describe('the expression editor', () => {
  it('offers references inside {{ and inserts the chosen one with the keyboard', () => {
    const onNode = jest.fn();
    render(<Harness initial="" onNode={onNode} />);
    typeIn('Total: {{node.');
    const options = screen.getAllByRole('option').map((o) => o.querySelector('code')?.textContent);
    expect(options).toEqual(['node.sum.result', 'node.fetch.result']);
    expect(screen.getAllByRole('option')[0]?.getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(box(), { key: 'ArrowDown' });
    expect(screen.getAllByRole('option')[1]?.getAttribute('aria-selected')).toBe('true');
    fireEvent.keyDown(box(), { key: 'Enter' });
    expect(screen.getByTestId('value').textContent).toBe('Total: {{node.fetch.result}}');
    expect(onNode).toHaveBeenCalledWith('fetch');
    expect(screen.queryByRole('listbox')).toBeNull();
  });

  it('Escape closes the list without changing the text', () => {
    render(<Harness initial="" />);
    typeIn('{{inputs.');
    expect(screen.getAllByRole('option')).toHaveLength(2);
    fireEvent.keyDown(box(), { key: 'Escape' });
    expect(screen.queryByRole('listbox')).toBeNull();
    expect(screen.getByTestId('value').textContent).toBe('{{inputs.');
  });

  it('clicking an option inserts it', () => {
    render(<Harness initial="" />);
    typeIn('Hi {{ inputs.t');
    fireEvent.click(screen.getByRole('option'));
    expect(screen.getByTestId('value').textContent).toBe('Hi {{ inputs.title}}');
  });

  it('flags unknown and malformed references inline before saving', () => {
    render(<Harness initial="Hi {{inputs.title}}" />);
    expect(screen.queryByRole('alert')).toBeNull();
    expect(box().getAttribute('aria-invalid')).toBeNull();
    typeIn('Hi {{inputs.nope}} and {{node.ghost.result}} {{ oops }}');
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('{{inputs.nope}}: the workflow declares no such input');
    expect(alert.textContent).toContain('{{node.ghost.result}}: no tool node with that id can feed this one');
    expect(alert.textContent).toContain('{{ oops }} is not a reference');
    expect(box().getAttribute('aria-invalid')).toBe('true');
    const marked = [...document.querySelectorAll('.expr-backdrop mark.expr-bad')].map((m) => m.textContent);
    expect(marked).toEqual(['{{inputs.nope}}', '{{node.ghost.result}}', '{{ oops }}']);
  });
});
