import { useCallback, useEffect, useState, type ReactNode } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { RunStatus, type Workflow, type WorkflowSummary, type WorkflowTemplate } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { RunStatusBadge } from '../runs/badges';
import { Badge, EmptyState, ErrorNote, Loading, PageHeader, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { relativeTime } from '../ui/relative-time';
import { useNow } from '../ui/useNow';

/** Cards per page: fills rows of 2, 3 and 4 columns. */
export const FLOWS_PAGE_SIZE = 24;

type View = 'mine' | 'templates';

/** The run the list reports per flow, once the server sends it; older servers send nothing. */
interface LastRun {
  readonly id: string;
  readonly status: string;
  readonly createdAt: string;
}

function lastRunOf(flow: WorkflowSummary): LastRun | null {
  const r = (flow as WorkflowSummary & { lastRun?: unknown }).lastRun;
  if (!r || typeof r !== 'object') return null;
  const { id, status, createdAt } = r as Record<string, unknown>;
  return typeof id === 'string' && typeof status === 'string' && typeof createdAt === 'string'
    ? { id, status, createdAt }
    : null;
}

/** The steps a template's graph compiles to: its tool nodes. */
function stepCount(template: WorkflowTemplate): number {
  return template.graph.nodes.filter((n) => n.type === 'tool').length;
}

/**
 * The flow library: your flows as cards (search and pages in the URL, so a reload keeps them), a
 * copy or a delete in one click each, and the gallery of templates to start a new flow from.
 */
export default function FlowsPage() {
  const { t } = useI18n();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const view: View = params.get('view') === 'templates' ? 'templates' : 'mine';
  const setView = (next: View) => {
    const p = new URLSearchParams(params);
    if (next === 'templates') p.set('view', 'templates');
    else p.delete('view');
    setParams(p, { replace: true });
  };
  const newFlow = can('workflow:edit') ? (
    <Link to="/flows/new" className="button primary">
      {t('flows.new')}
    </Link>
  ) : null;

  return (
    <section className="flows-page">
      <PageHeader title={t('flows.title')} actions={newFlow} />
      <div role="tablist" className="tabs" aria-label={t('flows.title')}>
        {(['mine', 'templates'] as const).map((tab) => (
          <button
            key={tab}
            type="button"
            role="tab"
            id={`flows-tab-${tab}`}
            aria-controls="flows-panel"
            aria-selected={view === tab}
            onClick={() => setView(tab)}
          >
            {t(`flows.tab.${tab}`)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="flows-panel" aria-labelledby={`flows-tab-${view}`}>
        {view === 'mine' ? (
          <FlowLibrary newFlow={newFlow} onTemplates={() => setView('templates')} />
        ) : (
          <TemplateGallery />
        )}
      </div>
    </section>
  );
}

function FlowLibrary({ newFlow, onTemplates }: { newFlow: ReactNode; onTemplates: () => void }) {
  const { t } = useI18n();
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const pageNum = Math.max(1, Math.floor(Number(params.get('page') ?? '1')) || 1);
  const [text, setText] = useState(q);
  const [copied, setCopied] = useState<Workflow | null>(null);
  const now = useNow(true, 30_000);

  // The box follows the URL (back/forward); typing reaches the URL once it pauses.
  useEffect(() => setText((old) => (old.trim() === q ? old : q)), [q]);
  useEffect(() => {
    const id = setTimeout(() => {
      if (text.trim() === q) return;
      const next = new URLSearchParams(params);
      if (text.trim()) next.set('q', text.trim());
      else next.delete('q');
      next.delete('page');
      setParams(next, { replace: true });
    }, 300);
    return () => clearTimeout(id);
  }, [text, q, params, setParams]);

  const list = useQuery({
    queryKey: ['workflows', 'library', { q, pageNum }],
    queryFn: ({ signal }) =>
      call(Routes.workflowList, {
        query: { pageNum, pageSize: FLOWS_PAGE_SIZE, ...(q ? { q } : {}) },
        signal,
      }),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / list.data.pageSize)) : 1;
  const goTo = useCallback(
    (n: number, replace = false) => {
      const next = new URLSearchParams(params);
      if (n > 1) next.set('page', String(n));
      else next.delete('page');
      setParams(next, { replace });
    },
    [params, setParams],
  );
  // Past the last page (its last flow deleted, or an old link): show the last page there is.
  const pastEnd = list.isSuccess && !list.isPlaceholderData && !items.length && pageNum > 1;
  useEffect(() => {
    if (pastEnd) goTo(pages, true);
  }, [pastEnd, pages, goTo]);

  return (
    <>
      <div className="filters" role="search">
        <input
          type="search"
          aria-label={t('flows.search')}
          placeholder={t('flows.search')}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      {copied ? (
        <p className="ok-text" role="status">
          {t('flows.copied')} <Link to={`/flows/${copied.id}`}>{copied.name}</Link>
        </p>
      ) : null}
      {list.isPending ? <Loading /> : null}
      <ErrorNote error={list.error} />
      {list.isSuccess && !items.length && !pastEnd ? (
        q ? (
          <EmptyState>{t('flows.emptyFiltered', { q })}</EmptyState>
        ) : (
          <EmptyState
            action={
              <div className="actions empty-actions">
                {newFlow}
                <button type="button" onClick={onTemplates}>
                  {t('flows.browseTemplates')}
                </button>
              </div>
            }
          >
            {t('flows.empty')}
          </EmptyState>
        )
      ) : null}
      {items.length ? (
        <ul className="flow-cards" aria-label={t('flows.list')}>
          {items.map((flow) => (
            <FlowCard key={flow.id} flow={flow} now={now} onCopied={setCopied} />
          ))}
        </ul>
      ) : null}
      {list.data && (list.data.total > list.data.pageSize || pageNum > 1) ? (
        <nav className="pager" aria-label={t('flows.pages')}>
          <button type="button" disabled={pageNum <= 1} onClick={() => goTo(pageNum - 1)}>
            ‹ {t('flows.prev')}
          </button>
          <span>{t('flows.pageOf', { n: pageNum, of: pages })}</span>
          <button type="button" disabled={pageNum >= pages} onClick={() => goTo(pageNum + 1)}>
            {t('flows.next')} ›
          </button>
        </nav>
      ) : null}
    </>
  );
}

function FlowCard({
  flow,
  now,
  onCopied,
}: {
  flow: WorkflowSummary;
  now: number;
  onCopied: (copy: Workflow) => void;
}) {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const lastRun = lastRunOf(flow);
  const status = RunStatus.safeParse(lastRun?.status);
  const copy = useMutation({
    mutationFn: () => call(Routes.workflowCopy, { params: { id: flow.id } }),
    onSuccess: (w) => {
      onCopied(w);
      void queries.invalidateQueries({ queryKey: ['workflows'] });
    },
  });
  const remove = () =>
    call(Routes.workflowDelete, { params: { id: flow.id }, query: { revision: flow.revision } }).then(() =>
      queries.invalidateQueries({ queryKey: ['workflows'] }),
    );
  const headingId = `flow-${flow.id}`;

  return (
    <li className="flow-card" data-flow-id={flow.id} aria-labelledby={headingId}>
      <div className="flow-card-head">
        <h3 id={headingId}>
          <Link to={`/flows/${flow.id}`}>{flow.name}</Link>
        </h3>
        {flow.publishedVersion !== null ? (
          <Badge tone="ok" title={flow.tool ?? undefined}>
            {t('flows.published', { n: flow.publishedVersion })}
          </Badge>
        ) : (
          <Badge tone="muted">{t('flows.draft')}</Badge>
        )}
      </div>
      <p className={`flow-desc${flow.description ? '' : ' sub'}`}>
        {flow.description || t('flows.noDescription')}
      </p>
      <dl className="flow-meta">
        <div>
          <dt>{t('flows.updated')}</dt>
          <dd title={formatTime(flow.updatedAt, lang)}>{relativeTime(flow.updatedAt, now, lang)}</dd>
        </div>
        <div>
          <dt>{t('flows.lastRun')}</dt>
          <dd>
            {lastRun ? (
              <Link to={`/runs/${lastRun.id}`} title={formatTime(lastRun.createdAt, lang)}>
                {status.success ? <RunStatusBadge status={status.data} /> : lastRun.status}{' '}
                {relativeTime(lastRun.createdAt, now, lang)}
              </Link>
            ) : (
              <span className="sub">{t('flows.neverRun')}</span>
            )}
          </dd>
        </div>
      </dl>
      <ErrorNote error={copy.error} />
      {can('workflow:edit') ? (
        <div className="actions flow-card-actions">
          <button
            type="button"
            disabled={copy.isPending}
            aria-label={t('flows.copyOf', { name: flow.name })}
            onClick={() => copy.mutate()}
          >
            {t('flows.copy')}
          </button>
          <ConfirmButton
            label={t('common.delete')}
            ariaLabel={t('flows.deleteOf', { name: flow.name })}
            title={t('flows.deleteTitle', { name: flow.name })}
            body={
              flow.publishedVersion !== null
                ? `${t('flows.deleteBody')} ${t('flows.deletePublished', { tool: flow.tool ?? '' })}`
                : t('flows.deleteBody')
            }
            confirmLabel={t('common.delete')}
            onConfirm={remove}
          />
        </div>
      ) : null}
    </li>
  );
}

function TemplateGallery() {
  const { t } = useI18n();
  const { can } = useAuth();
  const templates = useQuery({
    queryKey: ['workflow-templates'],
    queryFn: ({ signal }) => call(Routes.workflowTemplates, { signal }),
    staleTime: 5 * 60_000,
  });
  const items = templates.data?.items ?? [];
  return (
    <>
      <p className="hint">{t('flows.templates.intro')}</p>
      {templates.isPending ? <Loading /> : null}
      <ErrorNote error={templates.error} />
      {templates.isSuccess && !items.length ? <EmptyState>{t('flows.templates.empty')}</EmptyState> : null}
      {items.length ? (
        <ul className="flow-cards" aria-label={t('flows.templates.list')}>
          {items.map((template) => (
            <TemplateCard key={template.id} template={template} canUse={can('workflow:edit')} />
          ))}
        </ul>
      ) : null}
    </>
  );
}

function TemplateCard({ template, canUse }: { template: WorkflowTemplate; canUse: boolean }) {
  const { t } = useI18n();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const inputs = Object.keys(
    (template.inputSchema['properties'] as Record<string, unknown> | undefined) ?? {},
  ).length;
  const use = useMutation({
    mutationFn: () => call(Routes.workflowInstantiate, { params: { id: template.id }, body: {} }),
    onSuccess: (w) => {
      void queries.invalidateQueries({ queryKey: ['workflows'] });
      void navigate(`/flows/${w.id}`);
    },
  });
  const headingId = `template-${template.id}`;
  return (
    <li className="flow-card template-card" data-template-id={template.id} aria-labelledby={headingId}>
      <div className="flow-card-head">
        <h3 id={headingId}>{template.name}</h3>
        {template.category ? <Badge tone="info">{template.category}</Badge> : null}
      </div>
      <p className="flow-desc">{template.description}</p>
      <p className="sub">
        {t('flows.templates.steps', { n: stepCount(template) })}
        {' · '}
        {t('flows.templates.inputs', { n: inputs })}
      </p>
      <ErrorNote error={use.error} />
      {canUse ? (
        <div className="actions flow-card-actions">
          <button
            type="button"
            className="primary"
            disabled={use.isPending}
            aria-label={t('flows.templates.useOf', { name: template.name })}
            onClick={() => use.mutate()}
          >
            {t('flows.templates.use')}
          </button>
        </div>
      ) : null}
    </li>
  );
}
