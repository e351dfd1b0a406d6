import { Link } from 'react-router';
import { useMutation } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useAuth } from '../api/auth';
import { useI18n } from '../i18n/i18n';
import { NODE_TONE, RunStatusBadge } from '../runs/badges';
import type { RunView } from '../runs/model';
import { FileGrants } from '../runs/FileGrants';
import { StepGates } from '../runs/Gates';
import { ErrorNote, JsonView } from '../ui/bits';
import type { FlowDoc } from './doc';
import { Icon } from './icons';

/**
 * The run panel docked under the canvas: the run's status and each step's result, with a button to
 * pin a finished step's real result onto its node (later runs serve it instead of calling the tool).
 */
export function RunDock({
  run,
  doc,
  onPin,
  onClose,
}: {
  run: RunView;
  doc: FlowDoc;
  onPin(stepId: string, result: unknown): void;
  onClose(): void;
}) {
  const { t } = useI18n();
  const { can } = useAuth();
  const control = useMutation({
    mutationFn: (action: 'approve' | 'cancel') =>
      action === 'approve'
        ? call(Routes.runApprove, { params: { runId: run.runId } })
        : call(Routes.runCancel, { params: { runId: run.runId } }),
  });
  const pinned = new Set(doc.nodes.filter((n) => n.data.pinned !== undefined).map((n) => n.id));
  return (
    <section className="flow-dock" aria-label={t('flow.dock')}>
      <header>
        <strong>{t('flow.dock')}</strong>
        <RunStatusBadge status={run.status} />
        <Link to={`/runs/${run.runId}`}>{t('flow.dock.open')}</Link>
        {run.error ? <span className="error-text">{run.error.message}</span> : null}
        <button type="button" className="modal-close" aria-label={t('common.close')} onClick={onClose}>
          ×
        </button>
      </header>
      {run.planGate && can('agent:run:approve') ? (
        <div className="actions" data-testid="plan-gate">
          <span>{t('flow.dock.planGate')}</span>
          <button
            type="button"
            className="primary"
            disabled={control.isPending}
            onClick={() => control.mutate('approve')}
          >
            {t('flow.dock.approve')}
          </button>
          <button
            type="button"
            className="danger"
            disabled={control.isPending}
            onClick={() => control.mutate('cancel')}
          >
            {t('flow.dock.cancel')}
          </button>
        </div>
      ) : null}
      <ErrorNote error={control.error} />
      <StepGates view={run} />
      <ol>
        {[...run.steps.values()].map((s) => (
          <li key={s.id} data-step-id={s.id}>
            <div className="row">
              <code>{s.id}</code>
              <span className={`badge badge-${NODE_TONE[s.status]}`}>{t(`step.${s.status}`)}</span>
              {s.error ? <span className="error-text">{s.error}</span> : null}
              {s.status === 'completed' &&
              s.hasResult &&
              !s.truncated &&
              !pinned.has(s.id) &&
              doc.nodes.some((n) => n.id === s.id) ? (
                <button type="button" className="small" onClick={() => onPin(s.id, s.result)}>
                  <Icon name="pin" size={13} /> {t('flow.pin')}
                </button>
              ) : null}
            </div>
            {s.hasResult ? <JsonView value={s.result} label={t('flow.dock.result', { id: s.id })} /> : null}
          </li>
        ))}
      </ol>
      <FileGrants files={run.files} />
    </section>
  );
}
