import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { McpToolType, type McpToolRecord, type McpToolTestResult } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, EmptyState, ErrorNote, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { RecordDialog } from './RecordDialog';
import { useOAuthConnect, type ConnectState } from './oauth-connect';

const PAGE_SIZE = 20;
export const recordsKey = ['mcp-records'] as const;

/** Saves text as a file through a Blob URL (no inline script: the page's CSP allows this). */
export function download(text: string, filename: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

function LockIcon() {
  return (
    <svg className="lock" width="10" height="11" viewBox="0 0 10 11" aria-hidden="true">
      <rect x="1" y="5" width="8" height="6" rx="1" fill="currentColor" />
      <path d="M3 5V3.5a2 2 0 0 1 4 0V5" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}

function TestOutcome({ result, onClose }: { result: McpToolTestResult; onClose: () => void }) {
  const { t } = useI18n();
  // The Test button is disabled while it runs, which drops the focus: the outcome takes it.
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <div
      ref={box}
      tabIndex={-1}
      className={`test-result ${result.success ? 'ok' : 'bad'}`}
      role="status"
      data-testid="test-result"
    >
      <strong>{result.success ? t('tools.test.ok', { n: result.toolCount }) : t('tools.test.failed')}</strong>
      <div className="sub">{result.message}</div>
      {result.tools.length ? (
        <ul className="tool-names">
          {result.tools.map((name) => (
            <li key={name}>
              <code>{name}</code>
            </li>
          ))}
        </ul>
      ) : null}
      <button type="button" className="link" onClick={onClose}>
        {t('common.close')}
      </button>
    </div>
  );
}

/** Where a record's OAuth grant stands: who connected it and when, or why it needs (re)connecting. */
function OAuthLine({ oauth }: { oauth: NonNullable<McpToolRecord['oauth']> }) {
  const { t, lang } = useI18n();
  const tone = oauth.state === 'connected' ? 'ok' : oauth.state === 'reconnect' ? 'warn' : 'muted';
  return (
    <div className="oauth-line" data-oauth-state={oauth.state}>
      <Badge tone={tone}>{t(`tools.oauth.state.${oauth.state}`)}</Badge>{' '}
      {oauth.state === 'connected' && oauth.connectedAt ? (
        <span className="sub">
          {t('tools.oauth.by', {
            who: oauth.connectedByName ?? t('tools.oauth.byGone'),
            at: formatTime(oauth.connectedAt, lang),
          })}
        </span>
      ) : null}
      {oauth.grant === 'client_credentials' ? (
        <span className="sub"> · {t('tools.oauth.machine')}</span>
      ) : null}
      {oauth.state === 'reconnect' ? (
        <>
          {oauth.reason ? <div className="warn-text oauth-reason">{oauth.reason}</div> : null}
          <div className="sub">{t('tools.oauth.heldOut')}</div>
        </>
      ) : null}
      {oauth.state === 'not_connected' ? (
        <div className="sub">{t('tools.oauth.notConnectedHint')}</div>
      ) : null}
    </div>
  );
}

/** The sign-in under way for this record, its outcome, and what to do next; focus follows it. */
function ConnectPanel({
  state,
  onCancel,
  onDismiss,
  onTest,
}: {
  state: ConnectState;
  onCancel: () => void;
  onDismiss: () => void;
  onTest: () => void;
}) {
  const { t } = useI18n();
  const first = useRef<HTMLButtonElement | HTMLAnchorElement | null>(null);
  useEffect(() => {
    first.current?.focus();
  }, [state.phase]);
  const ref = (el: HTMLButtonElement | HTMLAnchorElement | null) => {
    first.current = el;
  };
  if (state.phase === 'starting' || state.phase === 'waiting')
    return (
      <div className="connect-panel" role="status" data-testid="connect-status" aria-live="polite">
        <span className="spinner" aria-hidden="true" />
        <div className="grow">
          {state.phase === 'starting' ? (
            t('tools.oauth.starting')
          ) : state.blocked ? (
            <>
              <strong>{t('tools.oauth.blocked')}</strong>{' '}
              <a ref={ref} href={state.url} target="_blank" rel="noopener noreferrer">
                {t('tools.oauth.openTab')}
              </a>
              <div className="sub">{t('tools.oauth.waiting')}</div>
            </>
          ) : (
            t('tools.oauth.waiting')
          )}
        </div>
        <button
          type="button"
          ref={state.phase === 'waiting' && state.blocked ? undefined : ref}
          onClick={onCancel}
        >
          {t('tools.oauth.cancel')}
        </button>
      </div>
    );
  if (state.phase === 'connected')
    return (
      <div className="connect-panel ok" role="status" data-testid="connect-status">
        <div className="grow">
          {state.tested
            ? t('tools.oauth.doneTested', { name: state.name })
            : t('tools.oauth.done', { name: state.name })}
        </div>
        {state.tested ? null : (
          <button type="button" className="primary" ref={ref} onClick={onTest}>
            {t('tools.oauth.testNow')}
          </button>
        )}
        <button type="button" ref={state.tested ? ref : undefined} onClick={onDismiss}>
          {t('tools.oauth.dismiss')}
        </button>
      </div>
    );
  return (
    <div
      className={`connect-panel ${state.phase === 'failed' ? 'bad' : 'muted'}`}
      data-testid="connect-status"
    >
      <div className="grow">
        {state.phase === 'cancelled' ? (
          <div role="status">{t('tools.oauth.cancelled')}</div>
        ) : (
          <ErrorNote error={state.error} title={t('tools.oauth.failed')} />
        )}
      </div>
      <button type="button" ref={ref} onClick={onDismiss}>
        {t('tools.oauth.dismiss')}
      </button>
    </div>
  );
}

function RecordRow({
  record: r,
  onEdit,
  connecting,
  onConnect,
  onCancelConnect,
  onDismissConnect,
}: {
  record: McpToolRecord;
  onEdit: () => void;
  /** The sign-in of this record, while it runs and until dismissed. */
  connecting: ConnectState | null;
  onConnect: () => void;
  onCancelConnect: () => void;
  onDismissConnect: () => void;
}) {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const builtin = r.type === 'BUILTIN';
  const refresh = () => queries.invalidateQueries({ queryKey: recordsKey });
  const test = useMutation({
    mutationFn: () => call(Routes.mcpToolTest, { params: { id: r.id } }),
    onSettled: () => {
      void refresh();
      void queries.invalidateQueries({ queryKey: ['tool-catalog'] });
    },
  });
  const busy = connecting?.phase === 'starting' || connecting?.phase === 'waiting';
  const connectLabel =
    r.oauth?.state === 'reconnect'
      ? { text: t('tools.oauth.reconnect'), aria: t('tools.oauth.reconnectAria', { name: r.name }) }
      : { text: t('tools.oauth.connect'), aria: t('tools.oauth.connectAria', { name: r.name }) };
  const status = useMutation({
    mutationFn: (next: 'ENABLED' | 'DISABLED') =>
      call(Routes.mcpToolStatus, { params: { id: r.id }, query: { status: next } }),
    onSuccess: () => void refresh(),
  });
  const enabled = r.status === 'ENABLED';
  return (
    <>
      <tr data-record-id={r.id} data-record-name={r.name}>
        <td>
          <strong>{r.name}</strong>{' '}
          {builtin ? (
            <Badge tone="muted" title={t('tools.builtinLocked')}>
              <LockIcon /> {t('tools.builtin')}
            </Badge>
          ) : null}
          {r.description ? <div className="sub">{r.description}</div> : null}
          {r.oauth ? <OAuthLine oauth={r.oauth} /> : null}
        </td>
        <td>{r.type}</td>
        <td>
          <Badge tone={enabled ? 'ok' : 'muted'}>{enabled ? t('tools.enabled') : t('tools.disabled')}</Badge>
          {!builtin ? (
            <div className="sub">
              {r.tested ? t('tools.tested') : t('tools.untested')}
              {r.changed ? ` · ${t('tools.changed')}` : ''}
            </div>
          ) : null}
          {r.disabledUntil ? (
            <div className="warn-text">{t('tools.backoff', { at: formatTime(r.disabledUntil, lang) })}</div>
          ) : null}
        </td>
        <td>
          {r.effect ? (
            <span className={`badge effect-${r.effect}`}>{r.effect}</span>
          ) : (
            <span className="sub">—</span>
          )}
        </td>
        <td>
          {builtin ? (
            <span className="sub" title={t('tools.builtinLocked')}>
              <LockIcon /> {t('tools.locked')}
            </span>
          ) : (
            <div className="row-actions">
              {r.oauth && r.oauth.state !== 'connected' && can('mcp:tool:test') ? (
                <button
                  type="button"
                  className="primary"
                  aria-label={connectLabel.aria}
                  onClick={onConnect}
                  disabled={busy}
                  aria-busy={busy}
                >
                  {connectLabel.text}
                </button>
              ) : null}
              {can('mcp:tool:test') ? (
                <button type="button" onClick={() => test.mutate()} disabled={test.isPending}>
                  {test.isPending ? t('tools.testing') : t('tools.test')}
                </button>
              ) : null}
              {can('mcp:tool:edit') ? (
                <>
                  <button type="button" onClick={onEdit}>
                    {t('common.edit')}
                  </button>
                  <button
                    type="button"
                    onClick={() => status.mutate(enabled ? 'DISABLED' : 'ENABLED')}
                    disabled={status.isPending}
                  >
                    {enabled ? t('tools.disable') : t('tools.enable')}
                  </button>
                </>
              ) : null}
              {can('mcp:tool:remove') ? (
                <ConfirmButton
                  label={t('common.delete')}
                  title={t('tools.deleteTitle')}
                  body={<p>{t('tools.deleteBody', { name: r.name })}</p>}
                  confirmLabel={t('common.delete')}
                  onConfirm={async () => {
                    await call(Routes.mcpToolDelete, { params: { ids: String(r.id) } });
                    await refresh();
                  }}
                />
              ) : null}
            </div>
          )}
        </td>
      </tr>
      {connecting ? (
        <tr className="detail-row">
          <td colSpan={5}>
            <ConnectPanel
              state={connecting}
              onCancel={onCancelConnect}
              onDismiss={onDismissConnect}
              onTest={() => {
                onDismissConnect();
                test.mutate();
              }}
            />
          </td>
        </tr>
      ) : null}
      {test.data || test.error || status.error ? (
        <tr className="detail-row">
          <td colSpan={5}>
            {test.data ? <TestOutcome result={test.data} onClose={() => test.reset()} /> : null}
            <ErrorNote error={test.error ?? status.error} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

/** MCP server records (admins): search, type filter, numbered pages, add/edit, Test, export. */
export function Records() {
  const { t } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const [params, setParams] = useSearchParams();
  const name = params.get('q') ?? '';
  const typeParam = params.get('type');
  const type = McpToolType.safeParse(typeParam).success ? (typeParam as McpToolType) : undefined;
  const pageNum = Math.max(1, Number(params.get('page')) || 1);
  const [text, setText] = useState(name);
  const [editing, setEditing] = useState<McpToolRecord | 'new' | null>(null);
  const [exportError, setExportError] = useState<unknown>(null);
  const oauth = useOAuthConnect({ preparing: t('tools.oauth.preparing') });

  const setParam = (key: string, value: string | undefined) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    if (key !== 'page') next.delete('page');
    setParams(next, { replace: true });
  };
  useEffect(() => {
    const id = setTimeout(() => {
      if (text === name) return;
      const next = new URLSearchParams(params);
      if (text) next.set('q', text);
      else next.delete('q');
      next.delete('page');
      setParams(next, { replace: true });
    }, 300);
    return () => clearTimeout(id);
  }, [text, name, params, setParams]);

  const list = useQuery({
    queryKey: [...recordsKey, { name, type, pageNum }],
    queryFn: ({ signal }) =>
      call(Routes.mcpToolList, {
        query: { pageNum, pageSize: PAGE_SIZE, ...(name ? { name } : {}), ...(type ? { type } : {}) },
        signal,
      }),
    placeholderData: keepPreviousData,
  });
  const items = list.data?.items ?? [];
  const pages = list.data ? Math.max(1, Math.ceil(list.data.total / list.data.pageSize)) : 1;
  const filtered = Boolean(name || type);
  const addButton = can('mcp:tool:add') ? (
    <button type="button" className="primary" onClick={() => setEditing('new')}>
      {t('tools.add')}
    </button>
  ) : null;

  const exportCsv = async () => {
    setExportError(null);
    try {
      const csv = await call(Routes.mcpToolExport, {
        query: { ...(name ? { keyword: name } : {}), ...(type ? { type } : {}) },
      });
      download(csv, `mcp-tools-${new Date().toISOString().slice(0, 10)}.csv`, 'text/csv;charset=utf-8');
    } catch (err) {
      setExportError(err);
    }
  };

  return (
    <section aria-label={t('tools.records')}>
      <div className="page-header">
        <h2>{t('tools.records')}</h2>
        <div className="actions">
          {can('mcp:tool:export') ? (
            <button type="button" onClick={() => void exportCsv()}>
              {t('tools.export')}
            </button>
          ) : null}
          {addButton}
        </div>
      </div>
      <ErrorNote error={exportError} />
      <div className="filters" role="search">
        <input
          type="search"
          aria-label={t('tools.search')}
          placeholder={t('tools.search')}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
        <select
          aria-label={t('tools.form.type')}
          value={type ?? ''}
          onChange={(e) => setParam('type', e.target.value)}
        >
          <option value="">{t('common.all')}</option>
          {McpToolType.options.map((x) => (
            <option key={x} value={x}>
              {x}
            </option>
          ))}
        </select>
      </div>
      <ListTable
        label={t('tools.records')}
        query={list}
        count={items.length}
        empty={
          <EmptyState action={filtered ? null : addButton}>
            {filtered ? t('tools.emptyFiltered') : t('tools.empty')}
          </EmptyState>
        }
        columns={[t('tools.form.name'), t('tools.form.type'), t('tasks.state'), t('tools.form.effect')]}
        actions
      >
        {items.map((r) => (
          <RecordRow
            key={r.id}
            record={r}
            onEdit={() => setEditing(r)}
            connecting={oauth.state?.id === r.id ? oauth.state : null}
            onConnect={() => oauth.connect(r)}
            onCancelConnect={oauth.cancel}
            onDismissConnect={oauth.dismiss}
          />
        ))}
      </ListTable>
      {list.data && list.data.total > list.data.pageSize ? (
        <nav className="pager" aria-label={t('tools.pages')}>
          <button type="button" disabled={pageNum <= 1} onClick={() => setParam('page', String(pageNum - 1))}>
            ‹ {t('tools.prev')}
          </button>
          <span>{t('tools.pageOf', { n: pageNum, of: pages, total: list.data.total })}</span>
          <button
            type="button"
            disabled={pageNum >= pages}
            onClick={() => setParam('page', String(pageNum + 1))}
          >
            {t('tools.next')} ›
          </button>
        </nav>
      ) : null}
      {editing ? (
        <RecordDialog
          {...(editing === 'new' ? {} : { record: editing })}
          onClose={() => setEditing(null)}
          onSaved={(saved) => {
            // A new server may land on a later page: the list narrows to it, so it is in sight.
            if (editing === 'new') setText(saved.name);
            setEditing(null);
            void queries.invalidateQueries({ queryKey: recordsKey });
            void queries.invalidateQueries({ queryKey: ['tool-catalog'] });
          }}
        />
      ) : null}
    </section>
  );
}
