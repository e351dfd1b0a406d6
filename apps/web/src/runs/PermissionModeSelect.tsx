import { useId } from 'react';
import { PermissionMode } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';

/** How much a run may do without asking: the choice both start dialogs offer, with what it means. */
export function PermissionModeSelect({
  value,
  onChange,
}: {
  value: PermissionMode;
  onChange: (mode: PermissionMode) => void;
}) {
  const { t } = useI18n();
  const id = useId();
  return (
    <div className="mode-choice">
      <label htmlFor={id}>{t('runs.start.mode')}</label>
      <select
        id={id}
        value={value}
        aria-describedby={`${id}-hint`}
        onChange={(e) => onChange(e.target.value as PermissionMode)}
      >
        {PermissionMode.options.map((m) => (
          <option key={m} value={m}>
            {m}
          </option>
        ))}
      </select>
      <div className="hint" id={`${id}-hint`}>
        {t(`runs.modeHint.${value}`)}
      </div>
    </div>
  );
}
