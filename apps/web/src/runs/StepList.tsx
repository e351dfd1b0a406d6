import { memo, useCallback, useState } from 'react';
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
  const toggle = useCallback(
    (id: string) =>
      setOpen((before) => {
        const next = new Set(before);
        if (next.has(id)) next.delete(id);
        else next.add(id);
        return next;
      }),
    [],
  );
  return (
    <div className="card steps">
      <h2>{t('run.steps')}</h2>
      <ol className="step-list">
        {steps.map((s) => (
          <StepRow
            key={s.id}
            step={s}
            selected={s.id === selected}
            open={open.has(s.id)}
            onSelect={onSelect}
            onToggle={toggle}
          />
        ))}
      </ol>
    </div>
  );
}

/**
 * One step's row. A step's object changes only when that step does (see `nextView`), so while
 * a run streams only the rows of the steps that changed render again.
 */
const StepRow = memo(function StepRow({
  step: s,
  selected,
  open,
  onSelect,
  onToggle,
}: {
  step: StepView;
  selected: boolean;
  open: boolean;
  onSelect: (id: string) => void;
  onToggle: (id: string) => void;
}) {
  const { t } = useI18n();
  return (
    <li
      className={selected ? 'selected' : ''}
      data-step-id={s.id}
      data-status={s.status}
      onClick={() => onSelect(s.id)}
    >
      <div className="step-head">
        <strong>{s.id}</strong> <code>{s.tool}</code>
        <span className={`badge badge-${NODE_TONE[s.status]}`}>{t(`step.${s.status}`)}</span>
        {s.waitingForInput ? (
          <span className="badge badge-wait" data-testid="step-waiting-input">
            {t('input.waiting')}
          </span>
        ) : null}
        {s.retries > 0 ? <span className="badge badge-warn">{t('step.retry', { n: s.retries })}</span> : null}
        {s.durationMs !== undefined ? <span className="sub">{formatDuration(s.durationMs)}</span> : null}
        {s.hasResult ? (
          <button
            type="button"
            className="link"
            aria-expanded={open}
            onClick={(e) => {
              e.stopPropagation();
              onToggle(s.id);
            }}
          >
            {open ? t('run.hideResult') : t('run.showResult')}
          </button>
        ) : null}
      </div>
      {s.description ? <div className="sub">{s.description}</div> : null}
      {s.error ? (
        <div className="error-text" data-code={s.code}>
          {s.code ? <code className="code-tag">{s.code}</code> : null} {s.error}
        </div>
      ) : null}
      {open ? <JsonView value={s.result} label={`${s.id} ${t('run.result')}`} /> : null}
    </li>
  );
});
