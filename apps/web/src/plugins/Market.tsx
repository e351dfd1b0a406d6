import { useId, useMemo, useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  ServerJson,
  type MarketEntry,
  type MarketImported,
  type ServerKeyValue,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, EmptyState, ErrorNote, FieldErrors, JsonView, Loading } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { Modal } from '../ui/Modal';
import { useSearchText } from '../ui/useSearchText';

const sourcesKey = ['market-sources'] as const;
const entriesKey = ['market-entries'] as const;

type Kind = 'LOCAL' | 'REMOTE';

/**
 * The MCP market (admins): sources in the MCP Registry's server.json format, their entries searched,
 * one inspected and imported as a LOCAL or REMOTE tool record (untested, like every new record).
 */
export function Market() {
  const { t } = useI18n();
  const { can } = useAuth();
  const [params, setParams] = useSearchParams();
  const { q, text, setText } = useSearchText();
  const source = params.get('source') ?? '';
  const [open, setOpen] = useState<MarketEntry | null>(null);

  const sources = useQuery({
    queryKey: sourcesKey,
    queryFn: ({ signal }) => call(Routes.marketSources, { signal }),
  });
  const hasSources = (sources.data?.items.length ?? 0) > 0;
  const entries = useQuery({
    queryKey: [...entriesKey, { q, source }],
    queryFn: ({ signal }) =>
      call(Routes.marketEntries, { query: { ...(q ? { q } : {}), ...(source ? { source } : {}) }, signal }),
    enabled: hasSources,
    placeholderData: keepPreviousData,
  });
  const items = entries.data?.items ?? [];
  const problems = entries.data?.problems ?? [];
  const searchId = useId();
  const sourceFilterId = useId();

  return (
    <div className="market">
      <p className="hint">{t('market.intro')}</p>
      <Sources />
      {sources.isPending ? <Loading /> : null}
      <ErrorNote error={sources.error} />
      {sources.isSuccess && !hasSources ? (
        <EmptyState>{can('mcp:market:edit') ? t('market.noSources') : t('market.noSourcesAsk')}</EmptyState>
      ) : null}
      {hasSources ? (
        <section aria-labelledby={`${searchId}-h`}>
          <h3 id={`${searchId}-h`}>{t('market.entries')}</h3>
          <div className="filters">
            <label htmlFor={searchId} className="visually-hidden">
              {t('market.search')}
            </label>
            <input
              id={searchId}
              type="search"
              placeholder={t('market.search')}
              value={text}
              onChange={(e) => setText(e.target.value)}
            />
            <label htmlFor={sourceFilterId} className="visually-hidden">
              {t('market.source')}
            </label>
            <select
              id={sourceFilterId}
              value={source}
              onChange={(e) => {
                const next = new URLSearchParams(params);
                if (e.target.value) next.set('source', e.target.value);
                else next.delete('source');
                setParams(next, { replace: true });
              }}
            >
              <option value="">{t('market.allSources')}</option>
              {sources.data?.items.map((s) => (
                <option key={s.id} value={s.name}>
                  {s.name}
                </option>
              ))}
            </select>
          </div>
          {entries.isPending ? <Loading /> : null}
          <ErrorNote error={entries.error} />
          {problems.length ? (
            <details className="market-problems" data-testid="market-problems">
              <summary>{t('market.problems', { n: problems.length })}</summary>
              <ul>
                {problems.map((p, i) => (
                  <li key={i}>
                    <strong>{p.source}</strong> <code>{p.path || '(document)'}</code> {p.message}
                  </li>
                ))}
              </ul>
            </details>
          ) : null}
          {entries.isSuccess && !items.length ? (
            <EmptyState>{q ? t('market.noMatch', { q }) : t('market.noEntries')}</EmptyState>
          ) : null}
          {items.length ? (
            <div className="table-scroll">
              <table className="list" aria-label={t('market.entries')}>
                <thead>
                  <tr>
                    <th scope="col">{t('market.name')}</th>
                    <th scope="col">{t('market.version')}</th>
                    <th scope="col">{t('market.kinds')}</th>
                    <th scope="col">
                      <span className="visually-hidden">{t('common.actions')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((e) => (
                    <tr key={`${e.source}/${e.name}`} data-entry={e.name}>
                      <td>
                        <strong>{e.title ?? e.name}</strong>
                        <div className="sub">
                          <code>{e.name}</code> · {e.source}
                        </div>
                        {e.description ? <div className="sub">{e.description}</div> : null}
                      </td>
                      <td>{e.version}</td>
                      <td>
                        {e.kinds.length ? (
                          e.kinds.map((k) => (
                            <Badge key={k} tone="info">
                              {k}
                            </Badge>
                          ))
                        ) : (
                          <span className="sub">{t('market.notImportable')}</span>
                        )}
                      </td>
                      <td>
                        <button
                          type="button"
                          onClick={() => setOpen(e)}
                          aria-label={t('market.inspectOf', { name: e.name })}
                        >
                          {t('market.inspect')}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
        </section>
      ) : null}
      {open ? <EntryDialog entry={open} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}

/** The configured sources: add one (a URL or a file under MARKET_DIR), remove one. */
function Sources() {
  const { t } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const id = useId();
  const [name, setName] = useState('');
  const [where, setWhere] = useState<'url' | 'path'>('url');
  const [value, setValue] = useState('');
  const sources = useQuery({
    queryKey: sourcesKey,
    queryFn: ({ signal }) => call(Routes.marketSources, { signal }),
  });
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: sourcesKey }),
      queries.invalidateQueries({ queryKey: entriesKey }),
    ]);
  const add = useMutation({
    mutationFn: () => call(Routes.marketSourceAdd, { body: { name: name.trim(), [where]: value.trim() } }),
    onSuccess: () => {
      setName('');
      setValue('');
      void refresh();
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (name.trim() && value.trim()) add.mutate();
  };
  const items = sources.data?.items ?? [];
  return (
    <section className="card market-sources" aria-labelledby={`${id}-h`}>
      <h3 id={`${id}-h`}>{t('market.sources')}</h3>
      {items.length ? (
        <ul className="source-list">
          {items.map((s) => (
            <li key={s.id} data-source={s.name}>
              <strong>{s.name}</strong> <code className="wrap">{s.url ?? s.path}</code>
              {can('mcp:market:edit') ? (
                <ConfirmButton
                  label={t('market.removeSource')}
                  ariaLabel={t('market.removeSourceOf', { name: s.name })}
                  title={t('market.removeSourceOf', { name: s.name })}
                  body={<p>{t('market.removeSourceBody')}</p>}
                  confirmLabel={t('market.removeSource')}
                  onConfirm={async () => {
                    await call(Routes.marketSourceDelete, { params: { source: s.name } });
                    await refresh();
                  }}
                />
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
      {can('mcp:market:edit') ? (
        <form className="source-form" onSubmit={submit}>
          <div>
            <label htmlFor={`${id}-name`}>{t('market.sourceName')}</label>
            <input
              id={`${id}-name`}
              type="text"
              value={name}
              placeholder="official"
              onChange={(e) => setName(e.target.value)}
            />
            <FieldErrors error={add.error} path="name" />
          </div>
          <div>
            <label htmlFor={`${id}-where`}>{t('market.sourceWhere')}</label>
            <select
              id={`${id}-where`}
              value={where}
              onChange={(e) => setWhere(e.target.value === 'path' ? 'path' : 'url')}
            >
              <option value="url">{t('market.sourceUrl')}</option>
              <option value="path">{t('market.sourcePath')}</option>
            </select>
          </div>
          <div className="grow">
            <label htmlFor={`${id}-value`}>
              {where === 'url' ? t('market.sourceUrl') : t('market.sourcePath')}
            </label>
            <input
              id={`${id}-value`}
              type="text"
              value={value}
              spellCheck={false}
              placeholder={
                where === 'url' ? 'https://registry.modelcontextprotocol.io/v0/servers' : 'servers.json'
              }
              aria-describedby={`${id}-hint`}
              onChange={(e) => setValue(e.target.value)}
            />
            <FieldErrors error={add.error} path={where} />
          </div>
          <button type="submit" className="primary" disabled={!name.trim() || !value.trim() || add.isPending}>
            {t('market.addSource')}
          </button>
          <div className="hint full" id={`${id}-hint`}>
            {where === 'url' ? t('market.urlHint') : t('market.pathHint')}
          </div>
        </form>
      ) : null}
      <ErrorNote error={add.error} />
    </section>
  );
}

/** What an import of `kind` asks values for: the package's environment or the remote's headers. */
function declaredInputs(server: ServerJson | undefined, kind: Kind): ServerKeyValue[] {
  if (!server) return [];
  if (kind === 'LOCAL') {
    const pkg = server.packages.find(
      (p) => ['npm', 'pypi', 'oci'].includes(p.registryType) && p.transport.type === 'stdio',
    );
    return pkg?.environmentVariables ?? [];
  }
  return server.remotes.find((r) => r.type === 'streamable-http')?.headers ?? [];
}

/** One entry: its server.json, and an import form (record name, kind, declared values). */
function EntryDialog({ entry, onClose }: { entry: MarketEntry; onClose: () => void }) {
  const { t } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const id = useId();
  const detail = useQuery({
    queryKey: ['market-entry', entry.source, entry.name],
    queryFn: ({ signal }) =>
      call(Routes.marketEntry, { params: { source: entry.source, name: entry.name }, signal }),
  });
  const server = useMemo(() => {
    const parsed = ServerJson.safeParse(detail.data?.server);
    return parsed.success ? parsed.data : undefined;
  }, [detail.data]);
  const [kind, setKind] = useState<Kind>(entry.kinds[0] ?? 'LOCAL');
  const [name, setName] = useState(entry.name.split('/').pop() ?? entry.name);
  const [values, setValues] = useState<Record<string, string>>({});
  const inputs = declaredInputs(server, kind);
  const doImport = useMutation({
    mutationFn: () => {
      const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
      return call(Routes.marketImport, {
        body: {
          source: entry.source,
          name: entry.name,
          as: {
            name: name.trim(),
            kind,
            ...(Object.keys(given).length ? { [kind === 'LOCAL' ? 'env' : 'headers']: given } : {}),
          },
        },
      });
    },
    onSuccess: () => void queries.invalidateQueries({ queryKey: ['mcp-records'] }),
  });
  return (
    <Modal title={entry.title ?? entry.name} onClose={onClose} wide>
      <p>
        <code>{entry.name}</code> · {entry.version} · {entry.source}
      </p>
      {entry.description ? <p>{entry.description}</p> : null}
      {detail.isPending ? <Loading /> : null}
      <ErrorNote error={detail.error} />
      {server ? (
        <>
          {server.websiteUrl || server.repository?.url ? (
            <p className="sub">
              {server.websiteUrl ? <span>{server.websiteUrl}</span> : null}
              {server.repository?.url ? <span> · {server.repository.url}</span> : null}
            </p>
          ) : null}
          <ul className="market-parts">
            {server.packages.map((p, i) => (
              <li key={`p${i}`}>
                <Badge tone="muted">{p.registryType}</Badge> <code>{p.identifier}</code>
                {p.version ? `@${p.version}` : ''} · {p.transport.type}
              </li>
            ))}
            {server.remotes.map((r, i) => (
              <li key={`r${i}`}>
                <Badge tone="muted">{r.type}</Badge> <code className="wrap">{r.url}</code>
              </li>
            ))}
          </ul>
          <details>
            <summary>{t('market.serverJson')}</summary>
            <JsonView value={detail.data?.server} label={t('market.serverJson')} />
          </details>
        </>
      ) : null}
      {can('mcp:market:edit') && !doImport.data ? (
        entry.kinds.length ? (
          <form
            className="form market-import"
            onSubmit={(e) => {
              e.preventDefault();
              if (name.trim()) doImport.mutate();
            }}
          >
            <h3>{t('market.import')}</h3>
            <label htmlFor={`${id}-name`}>{t('market.recordName')}</label>
            <input id={`${id}-name`} type="text" value={name} onChange={(e) => setName(e.target.value)} />
            <label htmlFor={`${id}-kind`}>{t('market.importAs')}</label>
            <select id={`${id}-kind`} value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
              {entry.kinds.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
            <div className="hint">{kind === 'LOCAL' ? t('market.localHint') : t('market.remoteHint')}</div>
            {inputs.map((v) => (
              <div key={v.name} className="run-field">
                <label htmlFor={`${id}-v-${v.name}`} className={v.isRequired ? 'required' : undefined}>
                  <code>{v.name}</code>
                </label>
                <input
                  id={`${id}-v-${v.name}`}
                  type={v.isSecret ? 'password' : 'text'}
                  autoComplete="off"
                  value={values[v.name] ?? ''}
                  placeholder={v.default ?? v.value ?? ''}
                  onChange={(e) => setValues((old) => ({ ...old, [v.name]: e.target.value }))}
                />
                {v.description ? <div className="hint">{v.description}</div> : null}
              </div>
            ))}
            <ErrorNote error={doImport.error} title={t('market.importFailed')} />
            <div className="actions">
              <button type="submit" className="primary" disabled={!name.trim() || doImport.isPending}>
                {t('market.importGo', { kind })}
              </button>
            </div>
          </form>
        ) : (
          <p className="warn-text">{t('market.notImportableLong')}</p>
        )
      ) : null}
      {doImport.data ? <Imported result={doImport.data} /> : null}
    </Modal>
  );
}

function Imported({ result }: { result: MarketImported }) {
  const { t } = useI18n();
  return (
    <div className="test-result ok" role="status" data-testid="market-imported">
      <strong>{t('market.imported', { name: result.record.name, kind: result.kind })}</strong>
      <div className="sub">{t('market.importedHint')}</div>
      <Link to={`/tools?q=${encodeURIComponent(result.record.name)}`}>{t('market.toRecords')}</Link>
    </div>
  );
}
