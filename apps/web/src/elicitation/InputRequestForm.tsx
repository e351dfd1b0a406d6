import { useId, useMemo, useState, type ReactNode } from 'react';
import { useMutation } from '@tanstack/react-query';
import {
  fieldProblem,
  formFields,
  type ElicitationAction,
  type ElicitationContent,
  type FieldProblem,
  type FormField,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, call } from '../api/client';
import { useI18n, type Translate } from '../i18n/i18n';
import { ErrorNote, formatTime } from '../ui/bits';
import type { PendingInput } from './model';

/** What a field holds while the person edits it. */
type Draft = string | boolean | string[];

/** "2026-01-31T09:30:00.000Z" as a datetime-local input shows it (local time, minutes). */
function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The form's starting values: each field's default (pre-filled), else empty. */
function initialDrafts(fields: readonly FormField[]): Record<string, Draft> {
  const drafts: Record<string, Draft> = {};
  for (const f of fields) {
    switch (f.kind) {
      case 'text':
        drafts[f.name] =
          f.default === undefined ? '' : f.format === 'date-time' ? toLocalInput(f.default) : f.default;
        break;
      case 'number':
        drafts[f.name] = f.default === undefined ? '' : String(f.default);
        break;
      case 'boolean':
        drafts[f.name] = f.default ?? false;
        break;
      case 'select':
        drafts[f.name] = f.default ?? '';
        break;
      case 'multiselect':
        drafts[f.name] = [...(f.default ?? [])];
        break;
    }
  }
  return drafts;
}

/**
 * What the form sends: a field left empty is left out (the server then fills in its default, if
 * any), except where the person emptied a field that had a default (they chose "nothing").
 */
function contentOf(fields: readonly FormField[], drafts: Record<string, Draft>): ElicitationContent {
  const content: ElicitationContent = {};
  for (const f of fields) {
    const v = drafts[f.name];
    const hasDefault = f.default !== undefined;
    if (f.kind === 'boolean') content[f.name] = v === true;
    else if (f.kind === 'multiselect') {
      const list = Array.isArray(v) ? v : [];
      if (list.length || hasDefault) content[f.name] = list;
    } else if (typeof v === 'string' && v !== '') {
      if (f.kind === 'number') content[f.name] = Number(v);
      else if (f.kind === 'text' && f.format === 'date-time')
        content[f.name] = Number.isNaN(new Date(v).getTime()) ? v : new Date(v).toISOString();
      else content[f.name] = v;
    } else if (typeof v === 'string' && f.kind === 'text' && hasDefault) content[f.name] = '';
  }
  return content;
}

/** The problems of each field, as the server would find them (checked before sending). */
function problemsOf(fields: readonly FormField[], content: ElicitationContent): Map<string, FieldProblem> {
  const problems = new Map<string, FieldProblem>();
  for (const f of fields) {
    const v = content[f.name];
    if (v === undefined) {
      if (f.required && f.default === undefined) problems.set(f.name, { kind: 'required' });
      continue;
    }
    const p = fieldProblem(f, v);
    if (p) problems.set(f.name, p);
  }
  return problems;
}

/** A problem in the person's language. */
export function problemLabel(p: FieldProblem, t: Translate): string {
  switch (p.kind) {
    case 'minLength':
    case 'maxLength':
    case 'minimum':
    case 'maximum':
    case 'minItems':
    case 'maxItems':
      return t(`input.problem.${p.kind}`, { n: p.limit });
    case 'format':
      return t(`input.problem.format.${p.format}`);
    case 'choice':
    case 'notChoice':
      return t('input.problem.choice');
    default:
      return t(`input.problem.${p.kind}`);
  }
}

const TEXT_TYPE = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' } as const;

/**
 * An MCP server's input request as the person answers it: a form generated from its
 * `requestedSchema` (defaults pre-filled, choices as selects and checkboxes, required fields marked,
 * each field checked as the server will check it) or, in URL mode, the link to open in a new tab
 * (the platform never opens or fetches it). Submit (accept), decline or cancel go back to the server.
 */
export function InputRequestForm({
  request,
  heading,
  onAnswered,
}: {
  request: PendingInput;
  /** Where the request comes from (a step, a call), shown under the title. */
  heading?: ReactNode;
  onAnswered?: (action: ElicitationAction) => void;
}) {
  const { t, lang } = useI18n();
  const id = useId();
  const fields = useMemo(
    () => (request.requestedSchema ? formFields(request.requestedSchema, request.fieldOrder) : []),
    [request.requestedSchema, request.fieldOrder],
  );
  const [drafts, setDrafts] = useState(() => initialDrafts(fields));
  const [tried, setTried] = useState(false);
  const content = contentOf(fields, drafts);
  const problems = problemsOf(fields, content);
  const answer = useMutation({
    mutationFn: (action: ElicitationAction) =>
      call(Routes.inputAnswer, {
        params: { id: request.id },
        body: action === 'accept' && request.mode === 'form' ? { action, content } : { action },
      }),
    onSuccess: (_reply, action) => onAnswered?.(action),
  });
  const busy = answer.isPending || answer.isSuccess;
  const set = (name: string, value: Draft) => setDrafts((d) => ({ ...d, [name]: value }));
  const submit = () => {
    setTried(true);
    if (request.mode === 'form' && problems.size) {
      // Take the person to the first field to fix.
      const first = fields.find((f) => problems.has(f.name));
      if (first) document.getElementById(`${id}-${first.name}`)?.focus();
      return;
    }
    answer.mutate('accept');
  };
  const serverIssues = (name: string) =>
    answer.error instanceof ApiError ? answer.error.at(`content.${name}`).map((i) => i.message) : [];
  const host = request.url ? safeHost(request.url) : undefined;

  return (
    <section
      className="card gate input-request"
      data-testid="input-request"
      data-elicitation-id={request.id}
      data-mode={request.mode}
      aria-labelledby={`${id}-title`}
    >
      <h2 id={`${id}-title`}>{t('input.title', { server: request.server })}</h2>
      <p className="sub">
        {heading}
        <code className="code-tag">{request.tool}</code>{' '}
        <span>{t('input.expires', { time: formatTime(request.expiresAt, lang) })}</span>
      </p>
      <p className="input-message" data-testid="input-message">
        {request.message}
      </p>
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {request.mode === 'url' && request.url ? (
          <div className="input-link">
            <p>
              {t('input.url.lead')} <strong data-testid="input-url-host">{host}</strong>
            </p>
            <p className="input-url">
              <a href={request.url} target="_blank" rel="noopener noreferrer" data-testid="input-url">
                {t('input.url.open')}
              </a>{' '}
              <code>{request.url}</code>
            </p>
            <p className="hint">{t('input.url.note')}</p>
          </div>
        ) : (
          fields.map((f) => (
            <Field
              key={f.name}
              id={`${id}-${f.name}`}
              field={f}
              value={drafts[f.name] ?? ''}
              onChange={(v) => set(f.name, v)}
              errors={[
                ...(tried && problems.has(f.name)
                  ? [problemLabel(problems.get(f.name) as FieldProblem, t)]
                  : []),
                ...serverIssues(f.name),
              ]}
            />
          ))
        )}
        <ErrorNote error={answer.error} />
        {answer.isSuccess ? (
          <p className="ok-text" role="status">
            {t('input.sent')}
          </p>
        ) : null}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy} data-action="accept">
            {request.mode === 'url' ? t('input.url.done') : t('input.accept')}
          </button>
          <button
            type="button"
            disabled={busy}
            onClick={() => answer.mutate('decline')}
            data-action="decline"
          >
            {t('input.decline')}
          </button>
          <button
            type="button"
            className="link"
            disabled={busy}
            onClick={() => answer.mutate('cancel')}
            data-action="cancel"
          >
            {t('input.cancel')}
          </button>
        </div>
      </form>
    </section>
  );
}

function safeHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** One field: its label (required marked), its control, its description and its problems. */
function Field({
  id,
  field: f,
  value,
  onChange,
  errors,
}: {
  id: string;
  field: FormField;
  value: Draft;
  onChange: (v: Draft) => void;
  errors: readonly string[];
}) {
  const { t } = useI18n();
  const described = [f.description ? `${id}-desc` : '', errors.length ? `${id}-err` : '']
    .filter(Boolean)
    .join(' ');
  const common = {
    id,
    'aria-invalid': errors.length > 0,
    'aria-required': f.required,
    ...(described ? { 'aria-describedby': described } : {}),
    'data-field': f.name,
  } as const;
  const label = (
    <>
      {f.label}
      {f.required ? (
        <span className="required" title={t('input.required')}>
          {' '}
          *<span className="visually-hidden">{t('input.required')}</span>
        </span>
      ) : null}
    </>
  );
  const after = (
    <>
      {f.description ? (
        <div className="hint" id={`${id}-desc`}>
          {f.description}
        </div>
      ) : null}
      {errors.length ? (
        <div className="field-error" role="alert" id={`${id}-err`}>
          {errors.map((e, i) => (
            <div key={i}>{e}</div>
          ))}
        </div>
      ) : null}
    </>
  );
  switch (f.kind) {
    case 'boolean':
      return (
        <div className="input-field">
          <label className="check" htmlFor={id}>
            <input
              {...common}
              type="checkbox"
              checked={value === true}
              onChange={(e) => onChange(e.target.checked)}
            />
            {label}
          </label>
          {after}
        </div>
      );
    case 'multiselect': {
      const chosen = Array.isArray(value) ? value : [];
      return (
        <fieldset className="input-field input-choices" data-field={f.name} aria-invalid={errors.length > 0}>
          <legend>{label}</legend>
          {f.options.map((o) => (
            <label className="check" key={o.value}>
              <input
                type="checkbox"
                checked={chosen.includes(o.value)}
                {...(described ? { 'aria-describedby': described } : {})}
                {...(o.value === f.options[0]?.value ? { id } : {})}
                onChange={(e) =>
                  onChange(e.target.checked ? [...chosen, o.value] : chosen.filter((c) => c !== o.value))
                }
              />
              {o.label}
            </label>
          ))}
          {after}
        </fieldset>
      );
    }
    case 'select':
      return (
        <div className="input-field">
          <label htmlFor={id}>{label}</label>
          <select
            {...common}
            value={typeof value === 'string' ? value : ''}
            onChange={(e) => onChange(e.target.value)}
          >
            {f.default === undefined ? <option value="">{t('input.noChoice')}</option> : null}
            {f.options.map((o) => (
              <option key={o.value} value={o.value}>
                {o.label}
              </option>
            ))}
          </select>
          {after}
        </div>
      );
    case 'number':
      return (
        <div className="input-field">
          <label htmlFor={id}>{label}</label>
          <input
            {...common}
            type="number"
            inputMode={f.integer ? 'numeric' : 'decimal'}
            step={f.integer ? 1 : 'any'}
            {...(f.minimum !== undefined ? { min: f.minimum } : {})}
            {...(f.maximum !== undefined ? { max: f.maximum } : {})}
            value={typeof value === 'string' ? value : ''}
            onChange={(e) => onChange(e.target.value)}
          />
          {after}
        </div>
      );
    case 'text':
      return (
        <div className="input-field">
          <label htmlFor={id}>{label}</label>
          <input
            {...common}
            type={f.format ? TEXT_TYPE[f.format] : 'text'}
            {...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {})}
            value={typeof value === 'string' ? value : ''}
            onChange={(e) => onChange(e.target.value)}
          />
          {after}
        </div>
      );
  }
}
