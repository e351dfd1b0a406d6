import { Link } from 'react-router';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { inboxKey, useInbox } from '../api/inbox';
import { useI18n } from '../i18n/i18n';
import { EmptyState, ErrorNote, JsonView, Loading, PageHeader, formatTime } from '../ui/bits';
import { InputRequestForm } from '../elicitation/InputRequestForm';
import { pendingOfRequest } from '../elicitation/model';

/**
 * Everything waiting for this person: plan gates and step gates across runs, and the questions
 * their tools' MCP servers ask in runs and chats (answered right here), oldest first.
 */
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
  const inputs = inbox.data?.inputRequests ?? [];
  return (
    <section>
      <PageHeader title={t('inbox.title')} />
      {inbox.isPending ? <Loading /> : null}
      <ErrorNote error={inbox.error ?? release.error} />
      {inbox.isSuccess && !items.length && !inputs.length ? (
        <EmptyState>{t('inbox.empty')}</EmptyState>
      ) : null}
      {inputs.length ? (
        <ul className="inbox" aria-label={t('inbox.inputsTitle')}>
          {inputs.map((r) => (
            <li key={r.id} data-testid="inbox-input" data-elicitation-id={r.id}>
              <InputRequestForm
                request={pendingOfRequest(r)}
                heading={
                  <>
                    <strong>{t('inbox.input')}</strong>{' '}
                    {r.runId ? (
                      <Link to={`/runs/${r.runId}`}>
                        {r.label || r.runId}
                        {r.stepId ? ` · ${t('input.step', { step: r.stepId })}` : ''}
                      </Link>
                    ) : r.sessionId ? (
                      <Link to={`/chat/${r.sessionId}`}>{r.label || t('inbox.openChat')}</Link>
                    ) : null}{' '}
                  </>
                }
                onAnswered={() => void queries.invalidateQueries({ queryKey: inboxKey })}
              />
            </li>
          ))}
        </ul>
      ) : null}
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
