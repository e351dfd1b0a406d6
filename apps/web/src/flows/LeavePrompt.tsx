import { useI18n } from '../i18n/i18n';
import { Modal } from '../ui/Modal';

/** Asks before leaving a flow with unsaved edits; staying is the default (focused first). */
export function LeavePrompt({ onStay, onLeave }: { onStay: () => void; onLeave: () => void }) {
  const { t } = useI18n();
  return (
    <Modal title={t('flows.leave.title')} onClose={onStay}>
      <p>{t('flows.leave.body')}</p>
      <div className="actions">
        <button type="button" className="primary" onClick={onStay}>
          {t('flows.leave.stay')}
        </button>
        <button type="button" className="danger" onClick={onLeave}>
          {t('flows.leave.discard')}
        </button>
      </div>
    </Modal>
  );
}
