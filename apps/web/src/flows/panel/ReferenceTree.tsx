import { useEffect, useRef, useState, type DragEvent, type KeyboardEvent } from 'react';
import type { PathPart } from '@switchyard/plan';
import { useI18n, type Translate } from '../../i18n/i18n';
import { portAccepts, referenceText, type FieldNode, type PortType, type RefSource } from '../types';
import { previewOf, previewText } from './fields';

/** The MIME type a dragged reference carries besides text/plain (the canvas's inputs accept it). */
export const REF_MIME = 'application/x-switchyard-ref';

export function typeName(t: Translate, type: PortType): string {
  return t(`flow.type.${type}`);
}

/** A port-type colour dot. */
export function PortDot({ type }: { type: PortType }) {
  return <span className={`port-dot port-${type}`} aria-hidden="true" />;
}

interface Props {
  readonly sources: readonly RefSource[];
  /** The type the input expects; fields that cannot fill it are greyed with the reason. */
  readonly expected?: PortType;
  /** Binds the input to a field; without it rows can only be copied and dragged. */
  readonly onPick?: (source: RefSource, path: readonly PathPart[]) => void;
  /** The reference text currently bound, marked in the tree. */
  readonly selected?: string;
  readonly label?: string;
}

function rowKey(source: RefSource, path: readonly PathPart[]): string {
  return referenceText(source, path);
}

/**
 * Workflow inputs and upstream results as an expandable tree. Click, Enter or drag binds a field;
 * each row has its type's colour, a sample value (the last run's, else the example) and a copy button.
 */
export function ReferenceTree({ sources, expected = 'any', onPick, selected, label }: Props) {
  const { t } = useI18n();
  const tree = useRef<HTMLUListElement>(null);
  // Sources start open, fields closed; this holds the rows toggled away from that (new sources open too).
  const [flipped, setFlipped] = useState<ReadonlySet<string>>(() => new Set());
  const [copied, setCopied] = useState<string>();
  useEffect(() => {
    if (!copied) return undefined;
    const id = setTimeout(() => setCopied(undefined), 1500);
    return () => clearTimeout(id);
  }, [copied]);

  const toggle = (key: string, openByDefault: boolean, to?: boolean) =>
    setFlipped((prev) => {
      const next = new Set(prev);
      const isOpen = openByDefault !== prev.has(key);
      if ((to ?? !isOpen) === openByDefault) next.delete(key);
      else next.add(key);
      return next;
    });

  const move = (from: HTMLElement, step: 1 | -1) => {
    const rows = [...(tree.current?.querySelectorAll<HTMLElement>('[role="treeitem"]') ?? [])];
    rows[rows.indexOf(from) + step]?.focus();
  };

  if (!sources.length) return <p className="hint">{t('flow.ref.noSources')}</p>;

  const row = (source: RefSource, field: FieldNode, level: number) => {
    const ref = rowKey(source, field.path);
    const ok = portAccepts(expected, field.type);
    const reason = ok
      ? undefined
      : t('flow.ref.mismatch', { want: typeName(t, expected), have: typeName(t, field.type) });
    const hasChildren = field.children.length > 0;
    const expanded = hasChildren && (level === 1) !== flipped.has(ref);
    const name =
      level === 1
        ? source.kind === 'node'
          ? `${source.label} · ${source.id}`
          : source.label
        : typeof field.key === 'number'
          ? `[${field.key}]`
          : field.key;
    const preview = previewOf(field);
    const title = [
      reason,
      ref,
      field.description,
      field.example !== undefined
        ? t('flow.ref.example', { value: previewText(field.example, 200) })
        : undefined,
    ]
      .filter(Boolean)
      .join('\n');
    const pick = () => {
      if (ok && onPick) onPick(source, field.path);
    };
    const onKeyDown = (e: KeyboardEvent<HTMLLIElement>) => {
      if (e.target !== e.currentTarget) return;
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        pick();
      } else if (e.key === 'ArrowRight' && hasChildren) {
        e.preventDefault();
        toggle(ref, level === 1, true);
      } else if (e.key === 'ArrowLeft' && hasChildren) {
        e.preventDefault();
        toggle(ref, level === 1, false);
      } else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        move(e.currentTarget, e.key === 'ArrowDown' ? 1 : -1);
      }
    };
    const onDragStart = (e: DragEvent<HTMLLIElement>) => {
      e.stopPropagation();
      e.dataTransfer.setData('text/plain', ref);
      e.dataTransfer.setData(REF_MIME, ref);
      e.dataTransfer.effectAllowed = 'copyLink';
    };
    return (
      <li
        key={ref}
        role="treeitem"
        aria-level={level}
        aria-expanded={hasChildren ? expanded : undefined}
        aria-disabled={ok ? undefined : true}
        aria-selected={selected === ref}
        tabIndex={0}
        draggable={ok}
        onDragStart={ok ? onDragStart : undefined}
        onKeyDown={onKeyDown}
        className={`ref-row${ok ? '' : ' mismatch'}${selected === ref ? ' selected' : ''}`}
        data-ref={ref}
        data-type={field.type}
      >
        <div className="ref-line" title={title} onClick={pick}>
          {hasChildren ? (
            <button
              type="button"
              className="ref-toggle"
              tabIndex={-1}
              aria-label={expanded ? t('flow.ref.collapse') : t('flow.ref.expand')}
              onClick={(e) => {
                e.stopPropagation();
                toggle(ref, level === 1);
              }}
            >
              {expanded ? '▾' : '▸'}
            </button>
          ) : (
            <span className="ref-toggle" aria-hidden="true" />
          )}
          <PortDot type={field.type} />
          <span className="ref-key">{name}</span>
          <span className="ref-type">{typeName(t, field.type)}</span>
          {preview ? (
            <code className={`ref-preview from-${preview.from}`}>{previewText(preview.value)}</code>
          ) : null}
          {reason ? <span className="visually-hidden">{reason}</span> : null}
          {level === 1 && source.unconnected ? (
            <span className="hint">{t('flow.ref.unconnected')}</span>
          ) : null}
          <button
            type="button"
            className="ref-copy link"
            aria-label={t('flow.ref.copy', { ref })}
            onClick={(e) => {
              e.stopPropagation();
              void navigator.clipboard?.writeText(ref).catch(() => undefined);
              setCopied(ref);
            }}
          >
            {copied === ref ? t('common.copied') : t('common.copy')}
          </button>
        </div>
        {expanded ? <ul role="group">{field.children.map((c) => row(source, c, level + 1))}</ul> : null}
      </li>
    );
  };

  return (
    <ul className="ref-tree" role="tree" aria-label={label ?? t('flow.ref.tree')} ref={tree}>
      {sources.map((s) => row(s, s.root, 1))}
    </ul>
  );
}
