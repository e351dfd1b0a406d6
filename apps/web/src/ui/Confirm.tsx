import { useState, type ReactNode } from 'react';
import { useI18n } from '../i18n/i18n';
import { ErrorNote } from './bits';
import { Modal } from './Modal';

/**
 * A button that asks first: a dialog says what will happen, and only its confirm button acts. The
 * action's error stays in the dialog so the person sees why nothing happened.
 */
export function ConfirmButton({
  label,
  ariaLabel,
  title,
  body,
  confirmLabel,
  onConfirm,
  danger = true,
  disabled,
}: {
  label: ReactNode;
  /** The button's accessible name when its label alone is ambiguous (one "Delete" per card). */
  ariaLabel?: string;
  title: string;
  body?: ReactNode;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown>;
  danger?: boolean;
  disabled?: boolean;
}) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const close = () => {
    setOpen(false);
    setError(null);
  };
  return (
    <>
      <button
        type="button"
        className={danger ? 'danger' : ''}
        disabled={disabled}
        aria-label={ariaLabel}
        onClick={() => setOpen(true)}
      >
        {label}
      </button>
      {open ? (
        <Modal title={title} onClose={close}>
          {body ? <div className="confirm-body">{body}</div> : <p>{t('common.confirm')}</p>}
          <ErrorNote error={error} />
          <div className="actions">
            <button type="button" onClick={close}>
              {t('common.cancel')}
            </button>
            <button
              type="button"
              className={danger ? 'danger' : 'primary'}
              disabled={busy}
              onClick={() => {
                setBusy(true);
                setError(null);
                onConfirm().then(
                  () => {
                    setBusy(false);
                    setOpen(false);
                  },
                  (err: unknown) => {
                    setBusy(false);
                    setError(err);
                  },
                );
              }}
            >
              {confirmLabel ?? t('common.confirmAction')}
            </button>
          </div>
        </Modal>
      ) : null}
    </>
  );
}
