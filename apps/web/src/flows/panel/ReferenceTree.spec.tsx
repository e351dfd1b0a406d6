import { fireEvent, render, screen } from '@testing-library/react';
import type { PathPart } from '@switchyard/plan';
import { I18nProvider } from '../../i18n/i18n';
import { referenceText, type RefSource } from '../types';
import { sourcesFor } from './fields';
import { GRAPH, INPUT_SCHEMA, TOOLS } from './fixtures';
import { REF_MIME, ReferenceTree } from './ReferenceTree';

const sources = sourcesFor({
  nodeId: 'mail',
  graph: GRAPH,
  inputSchema: INPUT_SCHEMA,
  tools: TOOLS,
  results: { fetch: { items: [{ name: 'bolt', price: 2 }], total: 1 } },
});

const row = (ref: string) => {
  const el = document.querySelector<HTMLElement>(`[role="treeitem"][data-ref="${ref}"]`);
  if (!el) throw new Error(`no row ${ref}`);
  return el;
};
const line = (ref: string) => row(ref).querySelector('.ref-line') as HTMLElement;

function mount(expected: Parameters<typeof ReferenceTree>[0]['expected']) {
  const picked: string[] = [];
  const onPick = jest.fn((source: RefSource, path: readonly PathPart[]) => {
    picked.push(referenceText(source, path));
  });
  render(
    <I18nProvider lang="en">
      <ReferenceTree sources={sources} expected={expected} onPick={onPick} />
    </I18nProvider>,
  );
  return { picked, onPick };
}

describe('the reference tree', () => {
  it('for a number input greys text fields with the reason, and binds numbers', () => {
    const { picked, onPick } = mount('number');
    const title = row('{{inputs.title}}');
    expect(title.getAttribute('aria-disabled')).toBe('true');
    expect(line('{{inputs.title}}').title).toContain('expects number, this is text');
    expect(title.getAttribute('draggable')).toBe('false');
    fireEvent.click(line('{{inputs.title}}'));
    fireEvent.keyDown(title, { key: 'Enter' });
    expect(onPick).not.toHaveBeenCalled();

    const count = row('{{inputs.count}}');
    expect(count.getAttribute('aria-disabled')).toBeNull();
    fireEvent.click(line('{{inputs.count}}'));
    expect(picked).toEqual(['{{inputs.count}}']);
    expect(onPick.mock.calls[0]?.[0]).toMatchObject({ kind: 'input', id: 'count' });
  });

  it('expands objects and arrays to reach a nested field, shows its last-run value, and binds it', () => {
    const { picked } = mount('number');
    // An object that cannot fill a number is greyed, but still opens: a field inside may fit.
    expect(row('{{node.fetch.result}}').getAttribute('aria-disabled')).toBe('true');
    expect(document.querySelector('[data-ref="{{node.fetch.result.items[0].price}}"]')).toBeNull();
    fireEvent.keyDown(row('{{node.fetch.result.items}}'), { key: 'ArrowRight' });
    fireEvent.click(screen.getAllByRole('button', { name: 'Expand' })[0]!);
    const price = row('{{node.fetch.result.items[0].price}}');
    expect(price.getAttribute('data-type')).toBe('number');
    expect(price.querySelector('.ref-preview')?.textContent).toBe('2');
    expect(row('{{node.fetch.result.items[0].name}}').getAttribute('aria-disabled')).toBe('true');
    price.focus();
    fireEvent.keyDown(price, { key: 'Enter' });
    expect(picked).toEqual(['{{node.fetch.result.items[0].price}}']);
  });

  it('a text input takes numbers too, but not lists', () => {
    mount('text');
    expect(row('{{inputs.count}}').getAttribute('aria-disabled')).toBeNull();
    expect(row('{{node.fetch.result.items}}').getAttribute('aria-disabled')).toBe('true');
    expect(line('{{node.fetch.result.items}}').title).toContain('expects text, this is list');
  });

  it('rows drag their reference text and copy it', () => {
    mount('any');
    const data = new Map<string, string>();
    const dataTransfer = { setData: (k: string, v: string) => data.set(k, v), effectAllowed: '' };
    fireEvent.dragStart(row('{{node.fetch.result.total}}'), { dataTransfer });
    expect(data.get('text/plain')).toBe('{{node.fetch.result.total}}');
    expect(data.get(REF_MIME)).toBe('{{node.fetch.result.total}}');

    const writeText = jest.fn(() => Promise.resolve());
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    fireEvent.click(screen.getByRole('button', { name: 'Copy {{inputs.title}}' }));
    expect(writeText).toHaveBeenCalledWith('{{inputs.title}}');
    expect(screen.getByRole('button', { name: 'Copy {{inputs.title}}' }).textContent).toBe('Copied');
  });

  it('arrow keys move between visible rows and open and close them', () => {
    mount('any');
    const first = row('{{inputs.count}}');
    first.focus();
    fireEvent.keyDown(first, { key: 'ArrowDown' });
    expect(document.activeElement).toBe(row('{{inputs.title}}'));
    fireEvent.keyDown(document.activeElement!, { key: 'ArrowUp' });
    expect(document.activeElement).toBe(first);
    // Sources start open; ArrowLeft closes one, ArrowRight opens it again.
    const fetch = row('{{node.fetch.result}}');
    expect(fetch.getAttribute('aria-expanded')).toBe('true');
    fireEvent.keyDown(fetch, { key: 'ArrowLeft' });
    expect(fetch.getAttribute('aria-expanded')).toBe('false');
    expect(document.querySelector('[data-ref="{{node.fetch.result.total}}"]')).toBeNull();
    fireEvent.keyDown(fetch, { key: 'ArrowRight' });
    expect(row('{{node.fetch.result.total}}')).toBeTruthy();
  });
});
