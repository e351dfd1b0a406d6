import { useState } from 'react';
import { useI18n } from '../i18n/i18n';
import { formatDuration, JsonView } from '../ui/bits';
import { NODE_TONE } from './badges';
import type { StepView } from './model';

/** Every step with its status, error (and code) and its result behind a toggle. */
export function StepList({
  steps,
  selected,
  onSelect,
}: {
  steps: readonly StepView[];
  selected?: string | undefined;
  onSelect: (id: string) => void;
}) {
  const { t } = useI18n();
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const toggle = (id: string) => {
    const next = new Set(open);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setOpen(next);
  };
  return (
    <div className="card steps">
      <h2>{t('run.steps')}</h2>
      <ol className="step-list">
        {steps.map((s) => (
          <li
            key={s.id}
            className={s.id === selected ? 'selected' : ''}
            data-step-id={s.id}
            data-status={s.status}
            onClick={() => onSelect(s.id)}
          >
            <div className="step-head">
              <strong>{s.id}</strong> <code>{s.tool}</code>
              <span className={`badge badge-${NODE_TONE[s.status]}`}>{t(`step.${s.status}`)}</span>
              {s.retries > 0 ? (
                <span className="badge badge-warn">{t('step.retry', { n: s.retries })}</span>
              ) : null}
              {s.durationMs !== undefined ? (
                <span className="sub">{formatDuration(s.durationMs)}</span>
              ) : null}
              {s.hasResult ? (
                <button
                  type="button"
                  className="link"
                  aria-expanded={open.has(s.id)}
                  onClick={(e) => {
                    e.stopPropagation();
                    toggle(s.id);
                  }}
                >
                  {open.has(s.id) ? t('run.hideResult') : t('run.showResult')}
                </button>
              ) : null}
            </div>
            {s.description ? <div className="sub">{s.description}</div> : null}
            {s.error ? (
              <div className="error-text" data-code={s.code}>
                {s.code ? <code className="code-tag">{s.code}</code> : null} {s.error}
              </div>
            ) : null}
            {open.has(s.id) ? <JsonView value={s.result} label={`${s.id} ${t('run.result')}`} /> : null}
          </li>
        ))}
      </ol>
    </div>
  );
}
