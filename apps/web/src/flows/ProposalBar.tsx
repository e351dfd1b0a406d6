import type { FlowProposal } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';

/**
 * A proposal under review, above the canvas that previews it: what it changes, whether it makes a
 * valid flow, and the two ways out. Applying saves through the normal path; dismissing changes nothing.
 */
export function ProposalBar({
  proposal,
  problem,
  busy,
  onApply,
  onDismiss,
}: {
  proposal: FlowProposal;
  /** Why the last "apply" did not go through (stale, invalid). */
  problem?: string;
  busy: boolean;
  onApply: () => void;
  onDismiss: () => void;
}) {
  const { t } = useI18n();
  const d = proposal.diff;
  return (
    <section className="proposal-bar" aria-label={t('proposal.title')} data-testid="proposal-bar">
      <div className="proposal-text">
        <strong>{t('proposal.title')}</strong> <span>{proposal.request.summary}</span>
        <div className="muted">
          {t('proposal.counts', {
            added: d.addedNodes.length,
            changed: d.changedNodes.length,
            removed: d.removedNodes.length,
          })}
          {d.inputsChanged ? ` · ${t('proposal.inputs')}` : ''} · {t('proposal.preview')}
        </div>
        {!proposal.valid ? (
          <ul className="proposal-problems" data-testid="proposal-invalid">
            <li>{t('proposal.invalid')}</li>
            {proposal.diagnostics.slice(0, 5).map((p) => (
              <li key={`${p.path}:${p.code}`}>
                {p.nodeId ? <code>{p.nodeId}</code> : null} {p.message}
              </li>
            ))}
          </ul>
        ) : null}
        {problem ? (
          <p className="proposal-problem" role="alert">
            {problem}
          </p>
        ) : null}
      </div>
      <div className="proposal-actions">
        <button type="button" onClick={onDismiss} disabled={busy}>
          {t('proposal.dismiss')}
        </button>
        <button type="button" className="primary" onClick={onApply} disabled={busy || !proposal.valid}>
          {t('proposal.apply')}
        </button>
      </div>
    </section>
  );
}
