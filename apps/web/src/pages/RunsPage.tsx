import { lazy, Suspense, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { useInfiniteQuery } from '@tanstack/react-query';
import { RunStatus } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { EmptyState, ErrorNote, Loading, PageHeader, formatTime } from '../ui/bits';
import { RunStatusBadge } from '../runs/badges';
import { useSearchText } from '../ui/useSearchText';

// The dialog brings the plan validator (Ajv): loaded when a person opens it.
const StartRunDialog = lazy(() => import('../runs/StartRunDialog'));

const PAGE = 50;

/** Run history: search, status filter and cursor paging; the filters live in the URL. */
export function RunsPage() {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const { q, text, setText } = useSearchText();
  const statusParam = params.get('status');
  const status = RunStatus.safeParse(statusParam).success ? (statusParam as RunStatus) : undefined;
  const [starting, setStarting] = useState(params.get('new') === '1');

  const runs = useInfiniteQuery({
    queryKey: ['runs', { q, status }],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.runList, {
        query: {
          limit: PAGE,
          ...(q ? { q } : {}),
          ...(status ? { status } : {}),
          ...(pageParam ? { cursor: pageParam } : {}),
        },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = runs.data?.pages.flatMap((p) => p.items) ?? [];
  const filtered = Boolean(q || status);

  return (
    <section>
      <PageHeader
        title={t('runs.title')}
        actions={
          can('agent:run:start') ? (
            <button type="button" className="primary" onClick={() => setStarting(true)}>
              {t('runs.new')}
            </button>
          ) : null
        }
      />
      <div className="filters" role="search">
        <input
          type="search"
          aria-label={t('runs.search')}
          placeholder={t('runs.search')}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <select
          aria-label={t('runs.status')}
          value={status ?? ''}
          onChange={(e) => {
            const next = new URLSearchParams(params);
            if (e.target.value) next.set('status', e.target.value);
            else next.delete('status');
            setParams(next, { replace: true });
          }}
        >
          <option value="">{t('common.all')}</option>
          {RunStatus.options.map((s) => (
            <option key={s} value={s}>
              {s.replace(/_/g, ' ')}
            </option>
          ))}
        </select>
      </div>
      {runs.isPending ? <Loading /> : null}
      <ErrorNote error={runs.error} />
      {runs.isSuccess && !items.length ? (
        <EmptyState
          action={
            !filtered && can('agent:run:start') ? (
              <button type="button" className="primary" onClick={() => setStarting(true)}>
                {t('runs.new')}
              </button>
            ) : null
          }
        >
          {filtered ? t('runs.emptyFiltered') : t('runs.empty')}
        </EmptyState>
      ) : null}
      {items.length ? (
        <table className="list" aria-label={t('runs.title')}>
          <thead>
            <tr>
              <th scope="col">{t('runs.goal')}</th>
              <th scope="col">{t('runs.status')}</th>
              <th scope="col">{t('runs.created')}</th>
              <th scope="col">{t('runs.updated')}</th>
            </tr>
          </thead>
          <tbody>
            {items.map((r) => (
              <tr key={r.id} data-run-id={r.id}>
                <td className="goal">
                  <Link to={`/runs/${r.id}`}>{r.goal || r.summary || r.id.slice(0, 8)}</Link>
                  {r.error ? <div className="sub error-text">{r.error}</div> : null}
                </td>
                <td>
                  <RunStatusBadge status={r.status} />
                </td>
                <td>{formatTime(r.createdAt, lang)}</td>
                <td>{formatTime(r.updatedAt, lang)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {runs.hasNextPage ? (
        <button type="button" onClick={() => void runs.fetchNextPage()} disabled={runs.isFetchingNextPage}>
          {t('common.more')}
        </button>
      ) : null}
      {starting ? (
        <Suspense fallback={<Loading />}>
          <StartRunDialog
            onClose={() => setStarting(false)}
            onStarted={(runId) => {
              setStarting(false);
              void navigate(`/runs/${runId}`);
            }}
          />
        </Suspense>
      ) : null}
    </section>
  );
}
