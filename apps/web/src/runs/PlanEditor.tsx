import { useMemo } from 'react';
import type { PlanIssue } from '@switchyard/contracts';
import { validatePlan, type ValidationResult } from '@switchyard/plan';
import { useCatalog } from './catalog';
import { useI18n } from '../i18n/i18n';

export type PlanCheck =
  | { readonly state: 'empty' }
  | { readonly state: 'not-json'; readonly message: string }
  | { readonly state: 'checked'; readonly result: ValidationResult };

/** Parses and validates plan text against the catalog with the server's own validator (libs/plan). */
export function usePlanCheck(text: string): PlanCheck {
  const catalog = useCatalog();
  return useMemo<PlanCheck>(() => {
    if (!text.trim()) return { state: 'empty' };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      return { state: 'not-json', message: (err as Error).message };
    }
    return { state: 'checked', result: validatePlan(value, { tools: catalog.data ?? [] }) };
  }, [text, catalog.data]);
}

export function PlanIssues({
  check,
  serverIssues,
}: {
  check: PlanCheck;
  serverIssues?: readonly PlanIssue[];
}) {
  const { t } = useI18n();
  const issues = check.state === 'checked' && !check.result.ok ? check.result.issues : [];
  const unchecked = check.state === 'checked' ? (check.result.uncheckedTools ?? []) : [];
  return (
    <div className="plan-issues" aria-live="polite">
      {check.state === 'not-json' ? (
        <p className="field-error" role="alert">
          {t('plan.notJson')}: {check.message}
        </p>
      ) : null}
      {[...issues, ...(serverIssues ?? [])].length ? (
        <ul className="field-error" role="alert" data-testid="plan-issues">
          {[...issues, ...(serverIssues ?? [])].map((i, n) => (
            <li key={n}>
              <code>{i.path}</code> <span className="code-tag">{i.code}</span> {i.message}
            </li>
          ))}
        </ul>
      ) : null}
      {check.state === 'checked' && check.result.ok ? (
        <p className="ok-text" data-testid="plan-valid">
          {t('plan.valid', { n: check.result.plan.steps.length })}
        </p>
      ) : null}
      {unchecked.length ? (
        <p className="notice" data-testid="plan-unchecked">
          {t('plan.unchecked', { tools: unchecked.join(', ') })}
        </p>
      ) : null}
    </div>
  );
}

/** A JSON text area for a plan, checked as you type, with every issue at its path. */
export function PlanEditor({
  value,
  onChange,
  label,
  serverIssues,
}: {
  value: string;
  onChange: (text: string) => void;
  label: string;
  serverIssues?: readonly PlanIssue[];
}) {
  const check = usePlanCheck(value);
  return (
    <div className="plan-editor">
      <label htmlFor="plan-json">{label}</label>
      <textarea
        id="plan-json"
        spellCheck={false}
        rows={14}
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={check.state === 'not-json' || (check.state === 'checked' && !check.result.ok)}
      />
      <PlanIssues check={check} {...(serverIssues ? { serverIssues } : {})} />
    </div>
  );
}

/**
 * The plan gate's editor: the plan as JSON, checked as you type, and the button that approves the
 * edited plan (enabled only when the plan is valid). Loaded when a person starts editing.
 */
export default function PlanGateEditor({
  text,
  onChange,
  label,
  approveLabel,
  busy,
  onApprove,
}: {
  text: string;
  onChange: (text: string) => void;
  label: string;
  approveLabel: string;
  busy: boolean;
  onApprove: () => void;
}) {
  const check = usePlanCheck(text);
  return (
    <>
      <PlanEditor value={text} onChange={onChange} label={label} />
      <button
        type="button"
        className="primary"
        disabled={busy || check.state !== 'checked' || !check.result.ok}
        onClick={onApprove}
      >
        {approveLabel}
      </button>
    </>
  );
}
