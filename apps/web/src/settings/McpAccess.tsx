import { useEffect, useId, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  PermissionMode,
  type McpAccess as McpAccessView,
  type McpAccessBody,
  type WorkflowSummary,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { CopyButton, EmptyState, ErrorNote, formatTime, Loading, PageHeader } from '../ui/bits';

const accessKey = ['settings', 'mcp'] as const;
/** Pages of the workflow list read to find the published ones (200 each). */
const MAX_WORKFLOW_PAGES = 10;

interface Draft {
  enabled: boolean;
  permissionMode: PermissionMode;
  exposure: 'all' | 'some';
  chosen: ReadonlySet<string>;
}

function draftOf(a: McpAccessView): Draft {
  return {
    enabled: a.enabled,
    permissionMode: a.permissionMode,
    exposure: a.exposedWorkflows === 'all' ? 'all' : 'some',
    chosen: new Set(a.exposedWorkflows === 'all' ? [] : a.exposedWorkflows),
  };
}

function sameDraft(a: Draft, b: Draft): boolean {
  return (
    a.enabled === b.enabled &&
    a.permissionMode === b.permissionMode &&
    a.exposure === b.exposure &&
    (a.exposure === 'all' ||
      (a.chosen.size === b.chosen.size && [...a.chosen].every((id) => b.chosen.has(id))))
  );
}

/** The caller's published workflows, every page of them. */
async function publishedWorkflows(signal: AbortSignal): Promise<WorkflowSummary[]> {
  const all: WorkflowSummary[] = [];
  for (let pageNum = 1; pageNum <= MAX_WORKFLOW_PAGES; pageNum++) {
    const page = await call(Routes.workflowList, { query: { pageNum, pageSize: 200 }, signal });
    all.push(...page.items);
    if (all.length >= page.total || page.items.length === 0) break;
  }
  return all.filter((w) => w.publishedVersion !== null);
}

/** What an MCP client is told to run: the README's two shapes, with this deployment's endpoint. */
export function clientSnippets(endpoint: string): { desktop: string; http: string } {
  return {
    desktop: JSON.stringify(
      {
        mcpServers: {
          switchyard: {
            command: 'npx',
            args: ['-y', 'mcp-remote', endpoint, '--header', 'Authorization:${AUTH_HEADER}'],
            env: { AUTH_HEADER: 'Bearer sy_…' },
          },
        },
      },
      null,
      2,
    ),
    http: JSON.stringify(
      {
        mcpServers: {
          switchyard: { type: 'http', url: endpoint, headers: { Authorization: 'Bearer sy_…' } },
        },
      },
      null,
      2,
    ),
  };
}

function Snippet({ title, text }: { title: string; text: string }) {
  const id = useId();
  return (
    <div className="snippet">
      <div className="snippet-head">
        <span id={id}>{title}</span>
        <CopyButton text={text} />
      </div>
      <pre tabIndex={0} aria-labelledby={id}>
        {text}
      </pre>
    </div>
  );
}

/**
 * MCP access (/settings/mcp): whether /mcp takes this owner's tokens (admins switch it), the
 * permission mode of the runs MCP clients start, which published workflows they see, and how to
 * connect a client. Admins open another owner's with ?owner=<name>.
 */
export function McpAccess() {
  const { t, lang } = useI18n();
  const { can, me } = useAuth();
  const queries = useQueryClient();
  const [params, setParams] = useSearchParams();
  const admin = me?.owner.role === 'admin';
  const ownerParam = admin ? (params.get('owner') ?? '') : '';
  const other = ownerParam !== '' && ownerParam !== me?.owner.name;
  const editable = can('settings:mcp:edit');
  const [ownerText, setOwnerText] = useState(ownerParam);
  const [draft, setDraft] = useState<Draft | null>(null);
  const [saved, setSaved] = useState(false);
  const modeId = useId();
  const endpoint = `${window.location.origin}/mcp`;
  const snippets = clientSnippets(endpoint);

  const access = useQuery({
    queryKey: [...accessKey, ownerParam],
    queryFn: ({ signal }) => call(Routes.mcpAccessGet, { query: other ? { owner: ownerParam } : {}, signal }),
  });
  const workflows = useQuery({
    queryKey: ['workflows', 'published'],
    queryFn: ({ signal }) => publishedWorkflows(signal),
    enabled: !other && can('workflow:list'),
  });
  useEffect(() => {
    if (access.data) setDraft(draftOf(access.data));
  }, [access.data]);
  useEffect(() => setOwnerText(ownerParam), [ownerParam]);

  const save = useMutation({
    mutationFn: (d: Draft) => {
      const body: McpAccessBody = { permissionMode: d.permissionMode };
      if (admin) body.enabled = d.enabled;
      if (!other) body.exposedWorkflows = d.exposure === 'all' ? 'all' : [...d.chosen];
      return call(Routes.mcpAccessPut, { query: other ? { owner: ownerParam } : {}, body });
    },
    onSuccess: (next) => {
      queries.setQueryData([...accessKey, ownerParam], next);
      setSaved(true);
    },
  });

  const change = (patch: Partial<Draft>) => {
    setSaved(false);
    setDraft((d) => (d ? { ...d, ...patch } : d));
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (draft) save.mutate(draft);
  };
  const showOwner = (e: FormEvent) => {
    e.preventDefault();
    const next = new URLSearchParams(params);
    const name = ownerText.trim();
    if (name && name !== me?.owner.name) next.set('owner', name);
    else next.delete('owner');
    setParams(next, { replace: true });
    setSaved(false);
  };

  const published = workflows.data ?? [];
  const publishedIds = new Set(published.map((w) => w.id));
  const stale = draft && workflows.isSuccess ? [...draft.chosen].filter((id) => !publishedIds.has(id)) : [];
  const dirty = Boolean(access.data && draft && !sameDraft(draftOf(access.data), draft));
  const data = access.data;

  return (
    <section aria-label={t('settings.mcp')} className="mcp-access">
      <PageHeader level={2} title={t('settings.mcp')} />
      <p className="hint">{t('settings.mcp.help')}</p>
      {admin ? (
        <form className="filters mcp-owner" onSubmit={showOwner}>
          <label htmlFor="mcp-owner" className="inline">
            {t('settings.mcp.owner')}
          </label>
          <input
            id="mcp-owner"
            value={ownerText}
            placeholder={me?.owner.name}
            aria-describedby="mcp-owner-hint"
            onChange={(e) => setOwnerText(e.target.value)}
          />
          <button type="submit">{t('settings.mcp.show')}</button>
          {other ? (
            <button
              type="button"
              onClick={() => {
                setParams(new URLSearchParams(), { replace: true });
                setSaved(false);
              }}
            >
              {t('settings.mcp.mine')}
            </button>
          ) : null}
          <span id="mcp-owner-hint" className="hint">
            {t('settings.mcp.ownerHint')}
          </span>
        </form>
      ) : null}

      {access.isPending ? <Loading /> : null}
      <ErrorNote error={access.error} />

      {data && draft ? (
        <form onSubmit={submit} noValidate>
          <div className="card">
            <label htmlFor="mcp-endpoint">{t('settings.mcp.endpoint')}</label>
            <div className="copy-row">
              <input id="mcp-endpoint" readOnly value={endpoint} />
              <CopyButton text={endpoint} />
            </div>
            <label className="check mcp-switch">
              <input
                type="checkbox"
                role="switch"
                checked={draft.enabled}
                disabled={!admin || !editable}
                aria-describedby="mcp-enabled-hint"
                onChange={(e) => change({ enabled: e.target.checked })}
              />{' '}
              <strong>
                {t('settings.mcp.enabled')}
                {other ? ` · ${data.owner}` : ''}
              </strong>
            </label>
            <p id="mcp-enabled-hint" className="hint">
              {t('settings.mcp.enabledHint')} {admin ? null : t('settings.mcp.adminOnly')}
            </p>
          </div>

          <div className="card">
            <label htmlFor={modeId}>{t('settings.mcp.mode')}</label>
            <select
              id={modeId}
              value={draft.permissionMode}
              disabled={!editable}
              aria-describedby={`${modeId}-hint`}
              onChange={(e) => change({ permissionMode: e.target.value as PermissionMode })}
            >
              {PermissionMode.options.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            <p className="hint" id={`${modeId}-hint`}>
              {t(`settings.mcp.modeHint.${draft.permissionMode}`)}
            </p>
          </div>

          <fieldset className="card mcp-workflows">
            <legend>{t('settings.mcp.workflows')}</legend>
            {other ? (
              <p>
                {t('settings.mcp.otherWorkflows', {
                  owner: data.owner,
                  what:
                    data.exposedWorkflows === 'all'
                      ? t('settings.mcp.otherAll')
                      : t('settings.mcp.otherSome', { n: data.exposedWorkflows.length }),
                })}
              </p>
            ) : (
              <>
                <label className="check">
                  <input
                    type="radio"
                    name="mcp-exposure"
                    checked={draft.exposure === 'all'}
                    disabled={!editable}
                    onChange={() => change({ exposure: 'all' })}
                  />
                  {t('settings.mcp.all')}
                </label>
                <label className="check">
                  <input
                    type="radio"
                    name="mcp-exposure"
                    checked={draft.exposure === 'some'}
                    disabled={!editable}
                    onChange={() => change({ exposure: 'some' })}
                  />
                  {t('settings.mcp.some')}
                </label>
                {workflows.isPending ? <Loading /> : null}
                <ErrorNote error={workflows.error} />
                {workflows.isSuccess && published.length === 0 ? (
                  <EmptyState
                    action={
                      <Link className="button" to="/flows">
                        {t('settings.mcp.toFlows')}
                      </Link>
                    }
                  >
                    {t('settings.mcp.noPublished')}
                  </EmptyState>
                ) : null}
                {draft.exposure === 'some' &&
                workflows.isSuccess &&
                (published.length > 0 || stale.length > 0) ? (
                  <>
                    <p className="hint" aria-live="polite">
                      {draft.chosen.size === 0
                        ? t('settings.mcp.noneChosen')
                        : t('settings.mcp.chosen', {
                            n: [...draft.chosen].filter((id) => publishedIds.has(id)).length,
                            of: published.length,
                          })}
                    </p>
                    <ul className="mcp-workflow-list">
                      {published.map((w) => (
                        <li key={w.id}>
                          <label className="check">
                            <input
                              type="checkbox"
                              checked={draft.chosen.has(w.id)}
                              disabled={!editable}
                              onChange={(e) => {
                                const chosen = new Set(draft.chosen);
                                if (e.target.checked) chosen.add(w.id);
                                else chosen.delete(w.id);
                                change({ chosen });
                              }}
                            />
                            <span>
                              <strong>{w.name}</strong> <code className="sub">{w.tool}</code>
                              {w.description ? <span className="sub block">{w.description}</span> : null}
                            </span>
                          </label>
                        </li>
                      ))}
                      {stale.map((id) => (
                        <li key={id}>
                          <label className="check">
                            <input
                              type="checkbox"
                              checked
                              disabled={!editable}
                              onChange={() => {
                                const chosen = new Set(draft.chosen);
                                chosen.delete(id);
                                change({ chosen });
                              }}
                            />
                            <span>
                              <code>{id}</code> <span className="sub">{t('settings.mcp.notPublished')}</span>
                            </span>
                          </label>
                        </li>
                      ))}
                    </ul>
                  </>
                ) : null}
              </>
            )}
          </fieldset>

          <ErrorNote error={save.error} />
          <div className="actions mcp-save">
            <button type="submit" className="primary" disabled={!editable || !dirty || save.isPending}>
              {t('common.save')}
            </button>
            {saved && !dirty ? (
              <span className="ok-text" role="status">
                {t('settings.mcp.saved')}
              </span>
            ) : null}
            <span className="hint">
              {data.updatedAt
                ? t('settings.mcp.updated', { at: formatTime(data.updatedAt, lang) })
                : t('settings.mcp.defaults')}
            </span>
          </div>
        </form>
      ) : null}

      <div className="card mcp-connect">
        <h3>{t('settings.mcp.connect')}</h3>
        <p className="hint">{t('settings.mcp.tools')}</p>
        <div className="snippets">
          <Snippet title={t('settings.mcp.snippet.desktop')} text={snippets.desktop} />
          <Snippet title={t('settings.mcp.snippet.http')} text={snippets.http} />
        </div>
        <p className="hint">
          {can('identity:token:list') ? (
            <Link to="/settings/tokens">{t('settings.mcp.tokenHint')}</Link>
          ) : (
            t('settings.mcp.tokenHint')
          )}
        </p>
      </div>
    </section>
  );
}
