import { Link } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Routes } from '@switchyard/contracts';
import { call } from '../api/client';
import { inboxKey, useInbox } from '../api/inbox';
import { useI18n } from '../i18n/i18n';
import { EmptyState, ErrorNote, JsonView, Loading, PageHeader, formatTime } from '../ui/bits';

/** Everything waiting for this person, across runs: plan gates and step gates, oldest first. */
export default function InboxPage() {
  const { t, lang } = useI18n();
  const inbox = useInbox();
  const queries = useQueryClient();
  const release = useMutation({
    mutationFn: (g: { runId: string; stepId?: string }) =>
      call(Routes.runApprove, {
        params: { runId: g.runId },
        ...(g.stepId ? { query: { stepId: g.stepId } } : {}),
      }),
    onSettled: () => queries.invalidateQueries({ queryKey: inboxKey }),
  });
  const items = inbox.data?.items ?? [];
  return (
    <section>
      <PageHeader title={t('inbox.title')} />
      {inbox.isPending ? <Loading /> : null}
      <ErrorNote error={inbox.error ?? release.error} />
      {inbox.isSuccess && !items.length ? <EmptyState>{t('inbox.empty')}</EmptyState> : null}
      <ul className="inbox">
        {items.map((item) => (
          <li
            key={`${item.run.id}:${item.stepId ?? 'plan'}`}
            className="card"
            data-testid="inbox-item"
            data-run-id={item.run.id}
            data-gate={item.gate}
          >
            <header>
              <strong>{item.gate === 'plan' ? t('inbox.plan') : t('inbox.step')}</strong>
              <span className="sub">{formatTime(item.since, lang)}</span>
            </header>
            <p>
              <Link to={`/runs/${item.run.id}`}>{item.run.goal || item.run.id}</Link>
            </p>
            {item.gate === 'step' ? (
              <>
                <p>
                  <strong>{item.stepId}</strong> <code>{item.tool}</code>{' '}
                  {item.effect ? <span className={`badge effect-${item.effect}`}>{item.effect}</span> : null}
                </p>
                {item.reason ? (
                  <p className="sub">
                    {t('run.gate.reason')}: {item.reason}
                  </p>
                ) : null}
                <JsonView value={item.arguments} label={t('run.gate.arguments')} />
              </>
            ) : null}
            <div className="actions">
              {item.gate === 'step' && item.stepId ? (
                <button
                  type="button"
                  className="primary"
                  disabled={release.isPending}
                  onClick={() => release.mutate({ runId: item.run.id, stepId: item.stepId as string })}
                >
                  {t('run.gate.release')}
                </button>
              ) : null}
              <Link to={`/runs/${item.run.id}`} className="button">
                {t('inbox.open')}
              </Link>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
