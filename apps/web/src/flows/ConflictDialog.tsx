import { useState } from 'react';
import { useI18n } from '../i18n/i18n';
import { ErrorNote } from '../ui/bits';
import { Modal } from '../ui/Modal';

/**
 * A save came back 409: someone (another tab, another person) saved a newer revision. Nothing is
 * overwritten: the person either takes theirs (dropping these edits) or keeps these edits as a new
 * flow. Closing keeps editing, unsaved.
 */
export function ConflictDialog({
  error,
  onReload,
  onSaveCopy,
  onClose,
}: {
  /** The 409 itself: its sentence names the current revision. */
  error?: unknown;
  onReload: () => void;
  /** May return a promise: the dialog waits, and shows its failure. */
  onSaveCopy: () => unknown;
  onClose: () => void;
}) {
  const { t } = useI18n();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const saveCopy = () => {
    setBusy(true);
    setFailure(null);
    new Promise((resolve) => resolve(onSaveCopy())).then(
      () => setBusy(false),
      (err: unknown) => {
        setBusy(false);
        setFailure(err);
      },
    );
  };
  return (
    <Modal title={t('flows.conflict.title')} onClose={onClose}>
      <p>{t('flows.conflict.body')}</p>
      {error instanceof Error ? <p className="hint">{error.message}</p> : null}
      <ErrorNote error={failure} />
      <div className="actions">
        <button type="button" className="primary" onClick={saveCopy} disabled={busy}>
          {t('flows.conflict.saveCopy')}
        </button>
        <button type="button" className="danger" onClick={onReload} disabled={busy}>
          {t('flows.conflict.reload')}
        </button>
        <button type="button" onClick={onClose} disabled={busy}>
          {t('flows.conflict.keepEditing')}
        </button>
      </div>
    </Modal>
  );
}
