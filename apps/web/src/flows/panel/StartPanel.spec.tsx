import { useState } from 'react';
import { fireEvent, render, screen, within } from '@testing-library/react';
import { I18nProvider } from '../../i18n/i18n';
import { StartPanel } from './StartPanel';

function Harness({ initial, onChange }: { initial: Record<string, unknown>; onChange: jest.Mock }) {
  const [schema, setSchema] = useState(initial);
  return (
    <I18nProvider lang="en">
      <StartPanel
        inputSchema={schema}
        onChange={(s) => {
          onChange(s);
          setSchema(s);
        }}
        issues={[{ path: 'inputSchema.properties.city', message: 'the server says no' }]}
      />
    </I18nProvider>
  );
}

const cells = (label: string) => screen.queryAllByRole('textbox', { name: label }) as HTMLInputElement[];
const last = (mock: jest.Mock) => mock.mock.calls[mock.mock.calls.length - 1]?.[0] as unknown;

describe('the start node editor', () => {
  it('builds the input schema from the table', () => {
    const onChange = jest.fn();
    render(<Harness initial={{ type: 'object', properties: {} }} onChange={onChange} />);
    expect(screen.getByText(/No inputs/)).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: 'Add input' }));
    fireEvent.change(cells('Name')[0]!, { target: { value: 'amount' } });
    fireEvent.change(cells('Label')[0]!, { target: { value: 'Amount to pay' } });
    fireEvent.change(screen.getAllByRole('combobox', { name: 'Type' })[0]!, { target: { value: 'number' } });
    fireEvent.click(screen.getAllByRole('checkbox', { name: 'Required' })[0]!);
    fireEvent.change(cells('Options')[0]!, { target: { value: '10, 20,50' } });
    fireEvent.change(cells('Example')[0]!, { target: { value: '20' } });

    fireEvent.click(screen.getByRole('button', { name: 'Add input' }));
    fireEvent.change(cells('Name')[1]!, { target: { value: 'report' } });
    fireEvent.change(screen.getAllByRole('combobox', { name: 'Type' })[1]!, { target: { value: 'file' } });
    expect(cells('Options')[1]!.disabled).toBe(true);

    fireEvent.click(screen.getByRole('button', { name: 'Add input' }));
    fireEvent.change(cells('Name')[2]!, { target: { value: 'tags' } });
    fireEvent.change(screen.getAllByRole('combobox', { name: 'Type' })[2]!, { target: { value: 'list' } });
    fireEvent.change(cells('Example')[2]!, { target: { value: '["a","b"]' } });

    expect(last(onChange)).toEqual({
      type: 'object',
      properties: {
        amount: { type: 'number', title: 'Amount to pay', enum: [10, 20, 50], examples: [20] },
        report: { type: 'string', format: 'switchyard-file' },
        tags: { type: 'array', examples: [['a', 'b']] },
      },
      required: ['amount'],
    });

    fireEvent.click(screen.getByRole('button', { name: 'Remove input report' }));
    expect(Object.keys((last(onChange) as { properties: object }).properties)).toEqual(['amount', 'tags']);
  });

  it('refuses bad and repeated names inline and applies nothing until they are fixed', () => {
    const onChange = jest.fn();
    render(
      <Harness
        initial={{ type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } } }}
        onChange={onChange}
      />,
    );
    fireEvent.change(cells('Name')[1]!, { target: { value: '2zip' } });
    expect(screen.getByText(/“2zip” is not a name/)).toBeTruthy();
    fireEvent.change(cells('Name')[1]!, { target: { value: 'city' } });
    expect(screen.getByText('Another input is already called city')).toBeTruthy();
    expect(cells('Name')[1]!.getAttribute('aria-invalid')).toBe('true');
    expect(onChange).not.toHaveBeenCalled();
    fireEvent.change(cells('Name')[1]!, { target: { value: 'postcode' } });
    expect(last(onChange)).toEqual({
      type: 'object',
      properties: { city: { type: 'string' }, postcode: { type: 'string' } },
    });
    // The server's message lands on the row it names.
    const cityRow = document.querySelector('tr[data-input="city"]') as HTMLElement;
    expect(within(cityRow).getByText('the server says no')).toBeTruthy();
  });

  it('keeps keywords the table does not edit', () => {
    const onChange = jest.fn();
    render(
      <Harness
        initial={{
          type: 'object',
          title: 'Order',
          properties: { n: { type: 'integer', description: 'how many', minimum: 1 } },
        }}
        onChange={onChange}
      />,
    );
    fireEvent.change(cells('Example')[0]!, { target: { value: '2.5' } });
    expect(screen.getByText('The example is not a valid number')).toBeTruthy();
    fireEvent.change(cells('Example')[0]!, { target: { value: '3' } });
    expect(last(onChange)).toEqual({
      type: 'object',
      title: 'Order',
      properties: { n: { type: 'integer', description: 'how many', minimum: 1, examples: [3] } },
    });
  });

  it('edits the raw JSON Schema: invalid JSON is shown and not applied, valid JSON fills the table', () => {
    const onChange = jest.fn();
    render(
      <Harness initial={{ type: 'object', properties: { a: { type: 'string' } } }} onChange={onChange} />,
    );
    fireEvent.click(screen.getByRole('tab', { name: 'JSON Schema' }));
    const raw = screen.getByRole('textbox', { name: 'Input schema (JSON Schema)' });
    expect(JSON.parse((raw as HTMLTextAreaElement).value)).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    fireEvent.change(raw, { target: { value: '{"type": "object", "properties": {' } });
    const panel = within(screen.getByRole('tabpanel'));
    expect(panel.getByRole('alert').textContent).toContain('Not valid JSON');
    fireEvent.change(raw, { target: { value: '{"type": "array"}' } });
    expect(panel.getByRole('alert').textContent).toContain('Must be a JSON Schema object');
    expect(onChange).not.toHaveBeenCalled();

    const next = { type: 'object', properties: { b: { type: 'boolean', title: 'Bee' } }, required: ['b'] };
    fireEvent.change(raw, { target: { value: JSON.stringify(next) } });
    expect(last(onChange)).toEqual(next);
    fireEvent.click(screen.getByRole('tab', { name: 'Fields' }));
    expect(cells('Name').map((c) => c.value)).toEqual(['b']);
    expect(cells('Label')[0]!.value).toBe('Bee');
    expect((screen.getByRole('checkbox', { name: 'Required' }) as HTMLInputElement).checked).toBe(true);
  });
});
