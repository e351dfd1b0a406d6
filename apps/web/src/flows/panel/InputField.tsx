import { useEffect, useId, useState } from 'react';
import { exactPlaceholder } from '@switchyard/plan';
import { useI18n } from '../../i18n/i18n';
import {
  modeOf,
  portAccepts,
  portTypeOf,
  referenceText,
  type InputMode,
  type PortType,
  type RefSource,
} from '../types';
import { ExpressionEditor } from './ExpressionEditor';
import { referenceProblems } from './expression';
import { fieldAt, previewText } from './fields';
import { PortDot, REF_MIME, ReferenceTree, typeName } from './ReferenceTree';

type Schema = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The schema's example (or default), for a placeholder. */
export function exampleText(schema: Schema): string | undefined {
  const examples = schema['examples'];
  const example =
    Array.isArray(examples) && examples.length ? examples[0] : (schema['example'] ?? schema['default']);
  if (example === undefined) return undefined;
  return typeof example === 'string' ? example : JSON.stringify(example);
}

/** The value an argument keeps when its editing mode changes (a reference does not survive as text). */
export function valueForMode(value: unknown, to: InputMode): unknown {
  const from = modeOf(value);
  if (to === 'expression') {
    if (value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  if (to === 'reference') return from === 'reference' ? value : undefined;
  return from === 'manual' ? value : undefined;
}

function JsonInput({
  id,
  value,
  placeholder,
  want,
  onChange,
}: {
  id: string;
  value: unknown;
  placeholder?: string;
  want: 'object' | 'list' | 'any';
  onChange: (value: unknown) => void;
}) {
  const { t } = useI18n();
  const shown = value === undefined ? '' : JSON.stringify(value, null, 2);
  const [draft, setDraft] = useState(shown);
  const [error, setError] = useState<string>();
  // A new value from outside (undo, another mode) replaces the draft unless the draft already says it.
  useEffect(() => {
    setDraft((d) => {
      try {
        return JSON.stringify(JSON.parse(d)) === JSON.stringify(value) ? d : shown;
      } catch {
        return d.trim() === '' && value === undefined ? d : shown;
      }
    });
  }, [shown, value]);
  return (
    <>
      <textarea
        id={id}
        rows={4}
        value={draft}
        placeholder={placeholder}
        aria-invalid={error ? true : undefined}
        onChange={(e) => {
          const text = e.target.value;
          setDraft(text);
          if (!text.trim()) {
            setError(undefined);
            onChange(undefined);
            return;
          }
          try {
            const parsed: unknown = JSON.parse(text);
            const ok = want === 'any' || (want === 'list' ? Array.isArray(parsed) : isRecord(parsed));
            if (!ok) {
              setError(t(want === 'list' ? 'flow.input.notList' : 'flow.input.notObject'));
              return;
            }
            setError(undefined);
            onChange(parsed);
          } catch (err) {
            setError(t('flow.input.badJson', { message: (err as Error).message }));
          }
        }}
      />
      {error ? (
        <div className="field-error" role="alert">
          {error}
        </div>
      ) : null}
    </>
  );
}

/** The widget for one schema type: text, number, checkbox, select for an enum, JSON for the rest. */
function ManualInput({
  id,
  schema,
  type,
  value,
  onChange,
}: {
  id: string;
  schema: Schema;
  type: PortType;
  value: unknown;
  onChange: (value: unknown) => void;
}) {
  const { t } = useI18n();
  const example = exampleText(schema);
  const placeholder = example !== undefined ? t('flow.input.example', { value: example }) : undefined;
  const options = Array.isArray(schema['enum']) ? (schema['enum'] as unknown[]) : undefined;
  if (options) {
    const index = options.findIndex((o) => JSON.stringify(o) === JSON.stringify(value));
    return (
      <select
        id={id}
        value={index < 0 ? '' : String(index)}
        onChange={(e) => onChange(e.target.value === '' ? undefined : options[Number(e.target.value)])}
      >
        <option value="">{t('flow.input.choose')}</option>
        {options.map((o, i) => (
          <option key={i} value={String(i)}>
            {typeof o === 'string' ? o : JSON.stringify(o)}
          </option>
        ))}
      </select>
    );
  }
  switch (type) {
    case 'boolean':
      return (
        <label className="check">
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
          />
          {value === true ? t('common.yes') : t('common.no')}
        </label>
      );
    case 'number':
      return (
        <input
          id={id}
          type="number"
          value={typeof value === 'number' ? value : ''}
          placeholder={placeholder}
          step={schema['type'] === 'integer' ? 1 : 'any'}
          onChange={(e) => onChange(e.target.value === '' ? undefined : Number(e.target.value))}
        />
      );
    case 'object':
    case 'list':
      return <JsonInput id={id} value={value} placeholder={placeholder} want={type} onChange={onChange} />;
    default:
      if (value !== undefined && typeof value !== 'string')
        return <JsonInput id={id} value={value} placeholder={placeholder} want="any" onChange={onChange} />;
      return (
        <input
          id={id}
          type="text"
          value={typeof value === 'string' ? value : ''}
          placeholder={placeholder}
          onChange={(e) => onChange(e.target.value === '' ? undefined : e.target.value)}
        />
      );
  }
}

interface Props {
  readonly name: string;
  /** The argument's JSON Schema (a property of the tool's input schema). */
  readonly schema: unknown;
  readonly required?: boolean;
  readonly value: unknown;
  /** The mode the node stored for this argument, if any. */
  readonly mode?: InputMode;
  readonly sources: readonly RefSource[];
  /** Server or compile messages about this argument. */
  readonly issues?: readonly string[];
  /** `undefined` removes the argument. */
  readonly onChange: (value: unknown, mode: InputMode) => void;
  readonly onReferenceNode?: (nodeId: string) => void;
}

const MODES: readonly InputMode[] = ['manual', 'reference', 'expression'];

/** One tool argument, edited by hand, bound to an upstream field, or written as a template. */
export function InputField({
  name,
  schema: raw,
  required,
  value,
  mode,
  sources,
  issues,
  onChange,
  onReferenceNode,
}: Props) {
  const { t } = useI18n();
  const id = `${useId()}-${name}`;
  const schema = isRecord(raw) ? raw : {};
  const type = portTypeOf(schema);
  const current = modeOf(value, mode);
  const title = typeof schema['title'] === 'string' && schema['title'] ? schema['title'] : name;
  const description = typeof schema['description'] === 'string' ? schema['description'] : undefined;

  const bound = current === 'reference' && typeof value === 'string' ? exactPlaceholder(value) : undefined;
  const boundRef = bound?.ok ? bound.ref : undefined;
  const boundSource = boundRef
    ? sources.find((s) =>
        boundRef.root.kind === 'input'
          ? s.kind === 'input' && s.id === boundRef.root.name
          : boundRef.root.kind === 'node' && s.kind === 'node' && s.id === boundRef.root.id,
      )
    : undefined;
  const boundField = boundSource && boundRef ? fieldAt(boundSource.root, boundRef.path) : undefined;
  const boundProblems =
    current === 'reference' && typeof value === 'string' ? referenceProblems(value, sources) : [];

  return (
    <div
      className="input-field"
      data-arg={name}
      onDragOver={(e) => {
        if (current !== 'expression' && e.dataTransfer.types.includes(REF_MIME)) e.preventDefault();
      }}
      onDrop={(e) => {
        // In an expression the textarea inserts the text where it is dropped; elsewhere it binds.
        if (current === 'expression') return;
        const dropped = exactPlaceholder(e.dataTransfer.getData(REF_MIME));
        if (!dropped?.ok) return;
        e.preventDefault();
        onChange(dropped.ref.raw, 'reference');
        if (dropped.ref.root.kind === 'node') onReferenceNode?.(dropped.ref.root.id);
      }}
    >
      <div className="input-head">
        <label htmlFor={id}>
          <PortDot type={type} />
          <span className="input-name">{title}</span>
          {required ? (
            <span className="required" title={t('flow.input.required')}>
              *<span className="visually-hidden">{t('flow.input.required')}</span>
            </span>
          ) : null}
          <span className="ref-type">{typeName(t, type)}</span>
        </label>
        <div className="mode-switch" role="radiogroup" aria-label={t('flow.input.mode', { name: title })}>
          {MODES.map((m) => (
            <button
              key={m}
              type="button"
              role="radio"
              aria-checked={current === m}
              className={current === m ? 'active' : undefined}
              onClick={() => {
                if (m !== current) onChange(valueForMode(value, m), m);
              }}
            >
              {t(`flow.input.mode.${m}`)}
            </button>
          ))}
        </div>
      </div>
      {description ? <p className="hint">{description}</p> : null}
      {current === 'manual' ? (
        <ManualInput
          id={id}
          schema={schema}
          type={type}
          value={value}
          onChange={(v) => onChange(v, 'manual')}
        />
      ) : null}
      {current === 'reference' ? (
        <>
          {typeof value === 'string' && value ? (
            <div className={`ref-chip${boundProblems.length ? ' bad' : ''}`} id={id} tabIndex={-1}>
              <PortDot type={boundField?.type ?? 'any'} />
              <code>{value.trim()}</code>
              {boundSource ? <span className="hint">{boundSource.label}</span> : null}
              {boundField && 'lastRun' in boundField ? (
                <code className="ref-preview from-run">{previewText(boundField.lastRun)}</code>
              ) : null}
              <button
                type="button"
                className="link"
                aria-label={t('flow.input.unbind', { name: title })}
                onClick={() => onChange(undefined, 'reference')}
              >
                ×
              </button>
            </div>
          ) : (
            <p className="hint" id={id}>
              {t('flow.input.pick')}
            </p>
          )}
          {boundField && !portAccepts(type, boundField.type) ? (
            <div className="notice">
              {t('flow.ref.mismatch', { want: typeName(t, type), have: typeName(t, boundField.type) })}
            </div>
          ) : null}
          {boundProblems.map((p, i) => (
            <div key={i} className="field-error" role="alert">
              {t(`flow.expr.problem.${p.code}`, { raw: p.raw, field: p.field ?? '' })}
            </div>
          ))}
          <ReferenceTree
            sources={sources}
            expected={type}
            selected={typeof value === 'string' ? value.trim() : undefined}
            label={t('flow.input.treeFor', { name: title })}
            onPick={(source, path) => {
              onChange(referenceText(source, path), 'reference');
              if (source.kind === 'node') onReferenceNode?.(source.id);
            }}
          />
        </>
      ) : null}
      {current === 'expression' ? (
        <ExpressionEditor
          id={id}
          label={title}
          value={typeof value === 'string' ? value : ''}
          sources={sources}
          onChange={(v) => onChange(v, 'expression')}
          onReferenceNode={onReferenceNode}
        />
      ) : null}
      {issues?.length ? (
        <div className="field-error" role="alert">
          {issues.map((m, i) => (
            <div key={i}>{m}</div>
          ))}
        </div>
      ) : null}
    </div>
  );
}
