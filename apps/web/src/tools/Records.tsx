import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { McpToolType, Routes, type McpToolRecord, type McpToolTestResult } from '@switchyard/contracts';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, EmptyState, ErrorNote, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { RecordDialog } from './RecordDialog';

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
  return (
    <div className={`test-result ${result.success ? 'ok' : 'bad'}`} role="status" data-testid="test-result">
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

function RecordRow({ record: r, onEdit }: { record: McpToolRecord; onEdit: () => void }) {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const builtin = r.type === 'BUILTIN';
  const refresh = () => queries.invalidateQueries({ queryKey: recordsKey });
  const test = useMutation({
    mutationFn: () => call(Routes.mcpToolTest, { params: { id: r.id } }),
    onSettled: () => void refresh(),
  });
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
          <RecordRow key={r.id} record={r} onEdit={() => setEditing(r)} />
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
