import { render } from '@testing-library/react';
import { blocksOf, MessageText } from './MessageText';

test('fenced blocks are code (an unclosed one runs to the end, as it streams); the rest is prose', () => {
  expect(blocksOf('Run this:\n```sh\nls -la\n```\nDone.')).toEqual([
    { kind: 'text', text: 'Run this:' },
    { kind: 'code', text: 'ls -la', lang: 'sh' },
    { kind: 'text', text: 'Done.' },
  ]);
  expect(blocksOf('Half:\n```\nline 1\nline')).toEqual([
    { kind: 'text', text: 'Half:' },
    { kind: 'code', text: 'line 1\nline' },
  ]);
  expect(blocksOf('')).toEqual([]);
});

test('model output is text, never markup: tags show as typed, nothing is inserted as HTML', () => {
  const hostile = 'Hi <img src=x onerror="alert(1)"> and <script>alert(2)</script>\n\n`<b>code</b>`';
  const { container } = render(<MessageText text={hostile} />);
  expect(container.querySelector('img, script, b')).toBeNull();
  expect(container.textContent).toContain('<img src=x onerror="alert(1)">');
  expect(container.querySelectorAll('p')).toHaveLength(2);
  expect(container.querySelector('p code')?.textContent).toBe('<b>code</b>');
});

test('line breaks stay inside a paragraph; a blank line starts the next; the caret ends the last one', () => {
  const { container } = render(<MessageText text={'one\ntwo\n\nthree'} caret />);
  const paras = [...container.querySelectorAll('p')];
  expect(paras.map((p) => p.textContent)).toEqual(['one\ntwo', 'three']);
  expect(paras[1]?.querySelector('.caret')).not.toBeNull();
  expect(paras[0]?.querySelector('.caret')).toBeNull();
});
