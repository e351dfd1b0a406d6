import { useState, type ReactNode } from 'react';
import type { ErrorCode } from '@switchyard/contracts';
import { ApiError } from '../api/client';
import { useI18n } from '../i18n/i18n';
import type { MessageKey } from '../i18n/en';

export function Loading({ label }: { label?: string }) {
  const { t } = useI18n();
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label ?? t('common.loading')}
    </div>
  );
}

/** What to do next when a list is empty. */
export function EmptyState({ children, action }: { children: ReactNode; action?: ReactNode }) {
  return (
    <div className="empty" role="note">
      <p>{children}</p>
      {action}
    </div>
  );
}

/** The localised name of an error code. */
export function codeKey(code: string): MessageKey | undefined {
  const key = `error.code.${code}` as MessageKey;
  return key;
}

/**
 * The server's refusal as it said it: the code (localised), its sentence and the fields it names.
 * Anything else (a bug, a network failure) shows its message.
 */
export function ErrorNote({ error, title }: { error: unknown; title?: string }) {
  const { t } = useI18n();
  if (!error) return null;
  const api = error instanceof ApiError ? error : undefined;
  const code = api?.code as ErrorCode | undefined;
  const key = code ? codeKey(code) : undefined;
  return (
    <div className="error-note" role="alert" data-code={code}>
      <strong>
        {title ?? (key ? t(key) : t('error.code.internal'))}
        {code ? <code className="code-tag">{code}</code> : null}
      </strong>
      <div>{(error as Error).message}</div>
      {api?.errors.length ? (
        <ul>
          {api.errors.map((e, i) => (
            <li key={i}>
              <code>{e.path || '(whole value)'}</code> {e.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** The issues an ApiError reports at one field, shown under that field. */
export function FieldErrors({ error, path }: { error: unknown; path: string }) {
  if (!(error instanceof ApiError)) return null;
  const issues = error.at(path);
  if (!issues.length) return null;
  return (
    <div className="field-error" role="alert">
      {issues.map((e, i) => (
        <div key={i}>{e.message}</div>
      ))}
    </div>
  );
}

export function Badge({ tone, children, title }: { tone: string; children: ReactNode; title?: string }) {
  return (
    <span className={`badge badge-${tone}`} title={title}>
      {children}
    </span>
  );
}

const FOLD_AT = 600;

/** A JSON value, pretty-printed; long text folds behind a button. */
export function JsonView({ value, label }: { value: unknown; label?: string }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? 'undefined');
  const long = text.length > FOLD_AT;
  return (
    <div className="json-view">
      <pre aria-label={label} tabIndex={0}>
        {long && !open ? `${text.slice(0, FOLD_AT)}…` : text}
      </pre>
      {long ? (
        <button type="button" className="link" onClick={() => setOpen(!open)}>
          {open ? t('run.fold') : t('run.folded', { n: text.length })}
        </button>
      ) : null}
    </div>
  );
}

export function CopyButton({ text }: { text: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      onClick={() => {
        void navigator.clipboard?.writeText(text).catch(() => undefined);
        setCopied(true);
        setTimeout(() => setCopied(false), 1500);
      }}
    >
      {copied ? t('common.copied') : t('common.copy')}
    </button>
  );
}

export function formatTime(iso: string | null | undefined, lang: string): string {
  if (!iso) return '';
  return new Date(iso).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', {
    dateStyle: 'short',
    timeStyle: 'medium',
  });
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${Math.round(s % 60)} s`;
}

export function PageHeader({
  title,
  actions,
  level = 1,
}: {
  title: ReactNode;
  actions?: ReactNode;
  /** 2 for a section inside a page (a tab's own header). */
  level?: 1 | 2;
}) {
  const Heading = level === 1 ? 'h1' : 'h2';
  return (
    <header className="page-header">
      <Heading>{title}</Heading>
      <div className="actions">{actions}</div>
    </header>
  );
}
