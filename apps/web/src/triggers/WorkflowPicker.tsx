import type { WorkflowSummary } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';

/** Chooses one of the caller's published workflows (only those can run unattended). */
export function WorkflowPicker({
  id,
  value,
  onChange,
  workflows,
  invalid,
}: {
  id: string;
  value: string;
  onChange: (id: string) => void;
  workflows: readonly WorkflowSummary[];
  invalid?: boolean;
}) {
  const { t } = useI18n();
  const published = workflows.filter((w) => w.publishedVersion !== null);
  return (
    <>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={invalid}>
        <option value="">{t('triggers.pickWorkflow')}</option>
        {published.map((w) => (
          <option key={w.id} value={w.id}>
            {w.name} (v{w.publishedVersion})
          </option>
        ))}
      </select>
      {!published.length ? <div className="hint">{t('triggers.noPublished')}</div> : null}
    </>
  );
}
