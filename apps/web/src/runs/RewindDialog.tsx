import { useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { Modal } from '../ui/Modal';
import type { StepView } from './model';

/** Rewind asks how many leading steps to keep, listing them, then starts the new run. */
export function RewindDialog({
  runId,
  steps,
  onClose,
  onDone,
}: {
  runId: string;
  steps: readonly StepView[];
  onClose: () => void;
  onDone: (runId: string) => void;
}) {
  const { t } = useI18n();
  const [keep, setKeep] = useState(0);
  const rewind = useMutation({
    mutationFn: () => call(Routes.runRewind, { params: { runId }, body: { keepSteps: keep } }),
    onSuccess: (r) => onDone(r.runId),
  });
  return (
    <Modal title={t('run.rewind.title')} onClose={onClose}>
      <label htmlFor="keep">{t('run.rewind.keep')}</label>
      <input
        id="keep"
        type="number"
        min={0}
        max={steps.length}
        value={keep}
        onChange={(e) => setKeep(Math.max(0, Math.min(steps.length, Number(e.target.value) || 0)))}
      />
      <FieldErrors error={rewind.error} path="keepSteps" />
      <ol className="rewind-steps">
        {steps.map((s, i) => (
          <li key={s.id} className={i < keep ? 'kept' : 'again'}>
            <strong>{s.id}</strong> <code>{s.tool}</code> — {i < keep ? '✓' : '↻'}
          </li>
        ))}
      </ol>
      <ErrorNote error={rewind.error} />
      <div className="actions">
        <button type="button" onClick={onClose}>
          {t('common.cancel')}
        </button>
        <button type="button" className="primary" disabled={rewind.isPending} onClick={() => rewind.mutate()}>
          {t('run.rewind')}
        </button>
      </div>
    </Modal>
  );
}
