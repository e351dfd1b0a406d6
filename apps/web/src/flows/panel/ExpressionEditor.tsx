import {
  Fragment,
  useId,
  useLayoutEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type ReactNode,
} from 'react';
import { exactPlaceholder } from '@switchyard/plan';
import { useI18n } from '../../i18n/i18n';
import type { RefSource } from '../types';
import {
  applyCompletion,
  completionsAt,
  referenceProblems,
  type CompletionOption,
  type ReferenceProblem,
} from './expression';
import { PortDot, REF_MIME, typeName } from './ReferenceTree';

interface Props {
  readonly value: string;
  readonly onChange: (value: string) => void;
  readonly sources: readonly RefSource[];
  /** Called when a completion inserts an upstream node's result (the canvas makes sure of the edge). */
  readonly onReferenceNode?: (nodeId: string) => void;
  readonly id?: string;
  /** The accessible name (the argument's label). */
  readonly label?: string;
  readonly rows?: number;
}

const PLACEHOLDER = /\{\{(.*?)\}\}/gs;

/** The text with good references tinted and problems marked, for the backdrop behind the textarea. */
function highlighted(text: string, problems: readonly ReferenceProblem[]): ReactNode[] {
  const marks: { from: number; to: number; bad: boolean }[] = problems.map((p) => ({ ...p, bad: true }));
  for (const m of text.matchAll(PLACEHOLDER)) {
    const from = m.index;
    const to = from + m[0].length;
    if (!marks.some((k) => k.from < to && from < k.to)) marks.push({ from, to, bad: false });
  }
  marks.sort((a, b) => a.from - b.from);
  const out: ReactNode[] = [];
  let at = 0;
  marks.forEach((m, i) => {
    if (m.from < at) return;
    out.push(<Fragment key={`t${i}`}>{text.slice(at, m.from)}</Fragment>);
    out.push(
      <mark key={`m${i}`} className={m.bad ? 'expr-bad' : 'expr-ref'}>
        {text.slice(m.from, m.to)}
      </mark>,
    );
    at = m.to;
  });
  // A trailing newline needs a character after it to take up a line in the backdrop.
  out.push(<Fragment key="end">{`${text.slice(at)} `}</Fragment>);
  return out;
}

/**
 * A template editor for strings with `{{…}}` references: inside an open `{{` it offers the inputs and
 * upstream results (↑/↓ choose, Enter or Tab insert, Escape closes), and marks references that are
 * malformed or point at nothing this node can see, with the reason listed under the text.
 */
export function ExpressionEditor({ value, onChange, sources, onReferenceNode, id, label, rows = 3 }: Props) {
  const { t } = useI18n();
  const own = useId();
  const inputId = id ?? `${own}-expr`;
  const listId = `${own}-options`;
  const area = useRef<HTMLTextAreaElement>(null);
  const backdrop = useRef<HTMLDivElement>(null);
  const pendingCursor = useRef<number | undefined>(undefined);
  const [cursor, setCursor] = useState<number>();
  const [active, setActive] = useState(0);
  const [dismissedAt, setDismissedAt] = useState<number>();

  const completion = useMemo(
    () => (cursor === undefined ? undefined : completionsAt(value, cursor, sources)),
    [value, cursor, sources],
  );
  const options = completion?.options ?? [];
  const showing = options.length > 0 && dismissedAt !== cursor;
  const current = Math.min(active, options.length - 1);
  const problems = useMemo(() => referenceProblems(value, sources), [value, sources]);

  // After a completion is applied and the new text rendered, put the cursor after it.
  useLayoutEffect(() => {
    const at = pendingCursor.current;
    if (at === undefined || !area.current) return;
    pendingCursor.current = undefined;
    area.current.setSelectionRange(at, at);
    setCursor(at);
  }, [value]);

  const choose = (option: CompletionOption) => {
    if (!completion) return;
    const next = applyCompletion(value, completion, option);
    pendingCursor.current = next.cursor;
    onChange(next.text);
    if (option.source.kind === 'node') onReferenceNode?.(option.source.id);
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!showing) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const step = e.key === 'ArrowDown' ? 1 : -1;
      setActive((current + step + options.length) % options.length);
    } else if (e.key === 'Enter' || e.key === 'Tab') {
      const option = options[current];
      if (!option) return;
      e.preventDefault();
      choose(option);
    } else if (e.key === 'Escape') {
      // Closes the list, not the dialog or drawer around the editor.
      e.preventDefault();
      e.stopPropagation();
      setDismissedAt(cursor);
    }
  };

  const track = () => {
    const el = area.current;
    if (el && document.activeElement === el) setCursor(el.selectionStart);
  };

  return (
    <div className="expr">
      <div className="expr-editor">
        <div className="expr-backdrop" aria-hidden="true" ref={backdrop}>
          {highlighted(value, problems)}
        </div>
        <textarea
          ref={area}
          id={inputId}
          className="expr-input"
          rows={rows}
          value={value}
          spellCheck={false}
          aria-label={label}
          aria-invalid={problems.length ? true : undefined}
          aria-autocomplete="list"
          aria-expanded={showing}
          aria-controls={showing ? listId : undefined}
          aria-activedescendant={showing ? `${listId}-${current}` : undefined}
          onChange={(e) => {
            onChange(e.target.value);
            setCursor(e.target.selectionStart);
            setActive(0);
            setDismissedAt(undefined);
          }}
          onSelect={track}
          onFocus={track}
          onBlur={() => setCursor(undefined)}
          onKeyDown={onKeyDown}
          onDrop={(e) => {
            // The browser inserts the dropped text itself; a node's result also needs its edge.
            const dropped = exactPlaceholder(e.dataTransfer.getData(REF_MIME));
            if (dropped?.ok && dropped.ref.root.kind === 'node') onReferenceNode?.(dropped.ref.root.id);
          }}
          onScroll={(e) => {
            if (backdrop.current) backdrop.current.scrollTop = e.currentTarget.scrollTop;
          }}
        />
      </div>
      {showing ? (
        <ul className="expr-options" role="listbox" id={listId} aria-label={t('flow.expr.options')}>
          {options.map((o, i) => (
            <li
              key={o.label}
              id={`${listId}-${i}`}
              role="option"
              aria-selected={i === current}
              className={i === current ? 'active' : undefined}
              // Keeps the focus (and the cursor) in the textarea.
              onMouseDown={(e) => e.preventDefault()}
              onClick={() => choose(o)}
            >
              <PortDot type={o.type} />
              <code>{o.label}</code>
              <span className="ref-type">{typeName(t, o.type)}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {problems.length ? (
        <ul className="expr-problems field-error" role="alert">
          {problems.map((p, i) => (
            <li key={i}>{t(`flow.expr.problem.${p.code}`, { raw: p.raw, field: p.field ?? '' })}</li>
          ))}
        </ul>
      ) : (
        <p className="hint">{t('flow.expr.hint')}</p>
      )}
    </div>
  );
}
