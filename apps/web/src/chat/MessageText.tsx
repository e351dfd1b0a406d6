import { memo, type ReactNode } from 'react';

/** A run of a message: prose, or a fenced code block (with the language the fence names). */
export type TextBlock =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'code'; readonly text: string; readonly lang?: string };

/**
 * Splits model text at ``` fences. An unclosed fence (the model is still writing it) runs to the
 * end, so a code block streams in as code.
 */
export function blocksOf(text: string): TextBlock[] {
  const blocks: TextBlock[] = [];
  const fence = /^```[ \t]*([\w+-]*)[ \t]*$/;
  let prose: string[] = [];
  let code: string[] | undefined;
  let lang = '';
  const flushProse = () => {
    const joined = prose.join('\n').replace(/^\n+|\n+$/g, '');
    if (joined) blocks.push({ kind: 'text', text: joined });
    prose = [];
  };
  for (const line of text.split('\n')) {
    const m = fence.exec(line.trim());
    if (code === undefined && m) {
      flushProse();
      code = [];
      lang = m[1] ?? '';
    } else if (code !== undefined && line.trim() === '```') {
      blocks.push({ kind: 'code', text: code.join('\n'), ...(lang ? { lang } : {}) });
      code = undefined;
    } else if (code !== undefined) {
      code.push(line);
    } else {
      prose.push(line);
    }
  }
  if (code !== undefined) blocks.push({ kind: 'code', text: code.join('\n'), ...(lang ? { lang } : {}) });
  flushProse();
  return blocks;
}

/** `inline code` spans as <code>, the rest as text: React escapes every piece. */
function inline(text: string): ReactNode[] {
  return text
    .split(/(`[^`\n]+`)/g)
    .map((part, i) =>
      part.length > 2 && part.startsWith('`') && part.endsWith('`') ? (
        <code key={i}>{part.slice(1, -1)}</code>
      ) : (
        part
      ),
    );
}

/**
 * Model output drawn safely: never as HTML. Paragraphs keep their line breaks, fenced blocks are
 * code, backticks are inline code; nothing else of Markdown is interpreted. `caret` marks the end
 * of a text still being written. Memoised: while one answer streams, earlier messages (same text)
 * are not parsed and drawn again on every token.
 */
export const MessageText = memo(function MessageText({ text, caret }: { text: string; caret?: boolean }) {
  const blocks = blocksOf(text);
  const mark = <span className="caret" aria-hidden="true" />;
  return (
    <div className="chat-text">
      {blocks.map((b, i) => {
        const last = caret && i === blocks.length - 1;
        if (b.kind === 'code') {
          return (
            <pre key={i} className="chat-code" data-lang={b.lang} tabIndex={0}>
              <code>{b.text}</code>
              {last ? mark : null}
            </pre>
          );
        }
        const paras = b.text.split(/\n{2,}/);
        return paras.map((para, j) => (
          <p key={`${i}.${j}`}>
            {inline(para)}
            {last && j === paras.length - 1 ? mark : null}
          </p>
        ));
      })}
    </div>
  );
});
