import { useId, useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  PLUGIN_UPLOAD_LIMIT_BYTES,
  type Plugin,
  type PluginGrants,
  type PluginHooksEntry,
  type PluginList,
  type PluginSandboxStatus,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call, uploadWithProgress } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, EmptyState, ErrorNote, Loading, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';

export const pluginsKey = ['plugins'] as const;
const hooksKey = ['plugin-hooks'] as const;

/** Sizes as people read them (the upload limit, a picked bundle). */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * Installed plugins (admins): install from a path on the server or an uploaded .tgz, enable and
 * disable, uninstall after asking, grants, settings (secrets write-only) and hook trust. Each plugin
 * is a card: what it is, what its server is doing, its tools and palette nodes.
 */
export function Plugins() {
  const { t } = useI18n();
  const { can } = useAuth();
  const list = useQuery({
    queryKey: pluginsKey,
    queryFn: ({ signal }) => call(Routes.pluginList, { signal }),
  });
  const hooks = useQuery({
    queryKey: hooksKey,
    queryFn: ({ signal }) => call(Routes.pluginHookList, { signal }),
    enabled: can('plugin:hook:list'),
  });
  const items = list.data?.items ?? [];
  return (
    <div className="plugins">
      {list.data ? <SandboxNote sandbox={list.data.sandbox} /> : null}
      <InstallPanel />
      {list.isPending ? <Loading /> : null}
      <ErrorNote error={list.error} />
      {list.isSuccess && !items.length ? <EmptyState>{t('plugins.empty')}</EmptyState> : null}
      {items.length ? (
        <ul className="plugin-list" aria-label={t('plugins.list')}>
          {items.map((p) => (
            <PluginCard
              key={p.id}
              plugin={p}
              hooks={hooks.data?.items.find((h) => h.id === p.id)}
              hooksLoading={hooks.isPending && can('plugin:hook:list')}
              hooksError={hooks.error}
            />
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function SandboxNote({ sandbox }: { sandbox: PluginSandboxStatus }) {
  const { t } = useI18n();
  return sandbox.posture === 'sandboxed' ? (
    <p className="hint sandbox-note" data-posture="sandboxed">
      <Badge tone="ok">{t('plugins.sandboxed')}</Badge> {t('plugins.sandboxedHint')}
    </p>
  ) : (
    <div className="error-note warn sandbox-note" role="note" data-posture="unsandboxed">
      <strong>{t('plugins.unsandboxed')}</strong>
      <div>{sandbox.reason}</div>
      <div>{t('plugins.unsandboxedHint')}</div>
    </div>
  );
}

/** Install from a folder or .tgz on the tool registry's host, or upload a .tgz from here. */
function InstallPanel() {
  const { t } = useI18n();
  const queries = useQueryClient();
  const pathId = useId();
  const fileId = useId();
  const [path, setPath] = useState('');
  const [picked, setPicked] = useState<{ name: string; size: number } | null>(null);
  const [tooBig, setTooBig] = useState(false);
  const done = (p: Plugin) => {
    void queries.invalidateQueries({ queryKey: pluginsKey });
    void queries.invalidateQueries({ queryKey: hooksKey });
    return p;
  };
  const install = useMutation({
    mutationFn: (p: string) => call(Routes.pluginInstall, { body: { path: p } }),
    onSuccess: (p) => {
      done(p);
      setPath('');
    },
  });
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const upload = useMutation({
    // Whatever type the browser guessed for the file (often none for .tgz), the route takes gzip.
    mutationFn: (f: File) => {
      setSent({ sent: 0, total: f.size });
      return uploadWithProgress(
        Routes.pluginUpload,
        new Blob([f], { type: 'application/gzip' }),
        (n, total) => setSent({ sent: n, total }),
      );
    },
    onSuccess: done,
  });
  const installed = install.data ?? upload.data;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    upload.reset();
    if (path.trim()) install.mutate(path.trim());
  };
  return (
    <section className="card install-panel" aria-labelledby={`${pathId}-h`}>
      <h3 id={`${pathId}-h`}>{t('plugins.install')}</h3>
      <form className="install-row" onSubmit={submit}>
        <label htmlFor={pathId}>{t('plugins.install.path')}</label>
        <div className="install-controls">
          <input
            id={pathId}
            type="text"
            value={path}
            placeholder="/srv/plugins/office"
            spellCheck={false}
            aria-describedby={`${pathId}-hint`}
            onChange={(e) => setPath(e.target.value)}
          />
          <button type="submit" className="primary" disabled={!path.trim() || install.isPending}>
            {install.isPending ? t('plugins.installing') : t('plugins.install.go')}
          </button>
        </div>
        <div className="hint" id={`${pathId}-hint`}>
          {t('plugins.install.pathHint')}
        </div>
      </form>
      <div className="install-row">
        <label htmlFor={fileId}>{t('plugins.install.upload')}</label>
        <input
          id={fileId}
          type="file"
          accept=".tgz,.tar.gz,application/gzip"
          disabled={upload.isPending}
          aria-describedby={`${fileId}-hint`}
          onChange={(e) => {
            const f = e.target.files?.[0];
            install.reset();
            upload.reset();
            setTooBig(false);
            setPicked(f ? { name: f.name, size: f.size } : null);
            if (!f) return;
            if (f.size > PLUGIN_UPLOAD_LIMIT_BYTES) setTooBig(true);
            else upload.mutate(f);
            e.target.value = '';
          }}
        />
        <div className="hint" id={`${fileId}-hint`}>
          {t('plugins.install.uploadHint', { limit: formatBytes(PLUGIN_UPLOAD_LIMIT_BYTES) })}
        </div>
      </div>
      {upload.isPending && picked ? (
        <div className="upload-progress" role="status">
          <span className="spinner" aria-hidden="true" />
          {sent && sent.sent < sent.total
            ? t('plugins.uploading', {
                name: picked.name,
                sent: formatBytes(sent.sent),
                size: formatBytes(sent.total),
              })
            : t('plugins.unpacking', { name: picked.name })}
          {sent ? (
            <progress
              max={sent.total || 1}
              value={sent.sent < sent.total ? sent.sent : undefined}
              aria-label={t('plugins.progress', { name: picked.name })}
            />
          ) : null}
        </div>
      ) : null}
      {tooBig && picked ? (
        <div className="error-note" role="alert">
          {t('plugins.tooBig', {
            name: picked.name,
            size: formatBytes(picked.size),
            limit: formatBytes(PLUGIN_UPLOAD_LIMIT_BYTES),
          })}
        </div>
      ) : null}
      <ErrorNote error={install.error ?? upload.error} title={t('plugins.installFailed')} />
      {installed ? (
        <p className="ok-text" role="status" data-testid="installed">
          {t('plugins.installed', { name: installed.name, version: installed.version })}
        </p>
      ) : null}
    </section>
  );
}

const SERVER_TONE = { running: 'ok', stopped: 'muted', disabled: 'muted', failed: 'bad' } as const;

function PluginCard({
  plugin: p,
  hooks,
  hooksLoading,
  hooksError,
}: {
  plugin: Plugin;
  hooks: PluginHooksEntry | undefined;
  hooksLoading: boolean;
  hooksError: unknown;
}) {
  const { t, lang } = useI18n();
  const queries = useQueryClient();
  const headingId = useId();
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: pluginsKey }),
      queries.invalidateQueries({ queryKey: hooksKey }),
    ]);
  const toggle = useMutation({
    mutationFn: () => call(p.enabled ? Routes.pluginDisable : Routes.pluginEnable, { params: { id: p.id } }),
    onSuccess: () => void refresh(),
  });
  const nodes = new Map(p.flowNodes.map((n) => [n.tool, n]));
  // In the palette's order (the manifest's flow nodes, a pipeline's order), then by name.
  const rank = (name: string) => {
    const i = p.flowNodes.findIndex((n) => n.tool === name);
    return i < 0 ? p.flowNodes.length : i;
  };
  const tools = [...p.tools].sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  return (
    <li className="card plugin-card" data-plugin-id={p.id} aria-labelledby={headingId}>
      <div className="plugin-head">
        <div>
          <h3 id={headingId}>{p.name}</h3>
          <code className="sub">
            {p.id}@{p.version}
          </code>
        </div>
        <div className="plugin-badges">
          <Badge tone={p.enabled ? 'ok' : 'muted'}>
            {p.enabled ? t('plugins.enabled') : t('plugins.disabled')}
          </Badge>
          <Badge tone={SERVER_TONE[p.server.state]} title={t('plugins.serverState')}>
            {t(`plugins.server.${p.server.state}`)}
          </Badge>
          <Badge tone={p.sandbox.posture === 'sandboxed' ? 'info' : 'warn'}>
            {p.sandbox.posture === 'sandboxed' ? t('plugins.sandboxed') : t('plugins.unsandboxed')}
          </Badge>
        </div>
      </div>
      {p.description ? <p className="plugin-desc">{p.description}</p> : null}
      <p className="sub">{t('plugins.updated', { at: formatTime(p.updatedAt, lang) })}</p>
      {p.server.error ? <p className="warn-text">{p.server.error}</p> : null}
      {p.server.missingTools.length ? (
        <p className="warn-text">{t('plugins.missingTools', { tools: p.server.missingTools.join(', ') })}</p>
      ) : null}
      <div className="actions">
        <button
          type="button"
          className={p.enabled ? '' : 'primary'}
          disabled={toggle.isPending}
          onClick={() => toggle.mutate()}
          aria-label={t(p.enabled ? 'plugins.disableOf' : 'plugins.enableOf', { name: p.name })}
        >
          {p.enabled ? t('plugins.disable') : t('plugins.enable')}
        </button>
        <ConfirmButton
          label={t('plugins.uninstall')}
          ariaLabel={t('plugins.uninstallOf', { name: p.name })}
          title={t('plugins.uninstallTitle', { name: p.name })}
          body={<p>{t('plugins.uninstallBody', { name: p.name })}</p>}
          confirmLabel={t('plugins.uninstall')}
          onConfirm={async () => {
            await call(Routes.pluginDelete, { params: { id: p.id } });
            await refresh();
          }}
        />
      </div>
      <ErrorNote error={toggle.error} />

      <div className="table-scroll">
        <table className="list compact" aria-label={t('plugins.toolsOf', { name: p.name })}>
          <caption className="plugin-caption">{t('plugins.tools', { n: p.tools.length })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('plugins.tool')}</th>
              <th scope="col">{t('run.effect')}</th>
              <th scope="col">{t('plugins.flags')}</th>
              <th scope="col">{t('plugins.flowNode')}</th>
            </tr>
          </thead>
          <tbody>
            {tools.map((tool) => (
              <tr key={tool.name} data-tool={tool.name}>
                <td>
                  <code>{tool.name}</code>
                </td>
                <td>
                  <span className={`badge effect-${tool.effect}`}>{tool.effect}</span>
                </td>
                <td className="sub">
                  {[
                    tool.idempotent ? t('plugins.idempotent') : null,
                    tool.requiresApproval ? t('plugins.requiresApproval') : null,
                  ]
                    .filter(Boolean)
                    .join(' · ') || '—'}
                </td>
                <td>{nodes.get(tool.name)?.label ?? <span className="sub">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      <Grants plugin={p} onChanged={refresh} />
      {p.settings.length ? <Settings plugin={p} onChanged={refresh} /> : null}
      {p.hooks ? (
        <Hooks plugin={p} entry={hooks} loading={hooksLoading} error={hooksError} onChanged={refresh} />
      ) : null}
    </li>
  );
}

/** What the sandbox lets the server do beyond its defaults: only what the manifest asks for. */
function Grants({ plugin: p, onChanged }: { plugin: Plugin; onChanged: () => Promise<unknown> }) {
  const { t } = useI18n();
  const id = useId();
  const queries = useQueryClient();
  // Set in the click itself (React renders it before the browser paints), so the box never shows
  // its old state while the mutation is being scheduled.
  const [sending, setSending] = useState<Partial<PluginGrants>>({});
  const grant = useMutation({
    mutationFn: (body: Partial<PluginGrants>) => call(Routes.pluginGrants, { params: { id: p.id }, body }),
    onSettled: () => setSending({}),
    // The answer is the plugin as stored: shown at once, so a box never flips back while the list reloads.
    onSuccess: (stored) => {
      queries.setQueryData(pluginsKey, (old: PluginList | undefined) =>
        old ? { ...old, items: old.items.map((x) => (x.id === stored.id ? stored : x)) } : old,
      );
      void onChanged();
    },
  });
  /** What the box shows: the change being sent, else what is stored. */
  const shown = (k: keyof PluginGrants) => sending[k] ?? p.grants[k];
  const kinds = ['network', 'files'] as const;
  return (
    <details className="plugin-section">
      <summary>{t('plugins.grants')}</summary>
      <p className="hint">{t('plugins.grantsHint')}</p>
      <ul className="grant-list">
        {kinds.map((k) => (
          <li key={k}>
            {p.permissions[k] ? (
              <label className="check" htmlFor={`${id}-${k}`}>
                <input
                  id={`${id}-${k}`}
                  type="checkbox"
                  checked={shown(k)}
                  disabled={grant.isPending || Object.keys(sending).length > 0}
                  onChange={(e) => {
                    setSending({ [k]: e.target.checked });
                    grant.mutate({ [k]: e.target.checked });
                  }}
                />
                {t(`plugins.grant.${k}`)}
              </label>
            ) : (
              <span className="sub">
                {t(`plugins.grant.${k}`)} — {t('plugins.notAsked')}
              </span>
            )}
          </li>
        ))}
      </ul>
      <ErrorNote error={grant.error} />
    </details>
  );
}

/** The manifest's settings: values an admin sets. Secrets are write-only: never shown, only replaced or cleared. */
function Settings({ plugin: p, onChanged }: { plugin: Plugin; onChanged: () => Promise<unknown> }) {
  const { t } = useI18n();
  const id = useId();
  const [draft, setDraft] = useState<Record<string, string | null>>({});
  const save = useMutation({
    mutationFn: (values: Record<string, string | null>) =>
      call(Routes.pluginSettings, { params: { id: p.id }, body: { values } }),
    onSuccess: () => {
      setDraft({});
      void onChanged();
    },
  });
  const changed = Object.keys(draft).length > 0;
  return (
    <details className="plugin-section">
      <summary>{t('plugins.settings', { n: p.settings.length })}</summary>
      <form
        className="form plugin-settings"
        onSubmit={(e) => {
          e.preventDefault();
          if (changed) save.mutate(draft);
        }}
      >
        {p.settings.map((s) => {
          const field = `${id}-${s.key}`;
          const edited = draft[s.key];
          const state = s.set ? t('plugins.setting.set') : t('plugins.setting.unset');
          return (
            <div key={s.key} className="plugin-setting" data-setting={s.key}>
              <label htmlFor={field} className={s.required ? 'required' : undefined}>
                {s.label}
              </label>
              <div className="sub">
                <code>{s.key}</code> · {state}
                {s.secret ? ` · ${t('plugins.setting.secret')}` : ''}
                {s.required && !s.set ? (
                  <span className="warn-text"> · {t('plugins.setting.needed')}</span>
                ) : null}
              </div>
              {s.secret ? (
                <input
                  id={field}
                  type="password"
                  autoComplete="new-password"
                  value={edited ?? ''}
                  placeholder={s.set ? t('plugins.setting.secretSet') : t('plugins.setting.secretUnset')}
                  onChange={(e) => setDraft((d) => ({ ...d, [s.key]: e.target.value }))}
                />
              ) : (
                <textarea
                  id={field}
                  rows={4}
                  spellCheck={false}
                  value={edited === undefined ? (s.value ?? '') : (edited ?? '')}
                  onChange={(e) => setDraft((d) => ({ ...d, [s.key]: e.target.value }))}
                />
              )}
              {s.set && edited !== null ? (
                <button
                  type="button"
                  className="link"
                  onClick={() => setDraft((d) => ({ ...d, [s.key]: null }))}
                  aria-label={t('plugins.setting.clearOf', { key: s.key })}
                >
                  {t('plugins.setting.clear')}
                </button>
              ) : null}
              {edited === null ? <span className="warn-text">{t('plugins.setting.cleared')}</span> : null}
            </div>
          );
        })}
        <ErrorNote error={save.error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={!changed || save.isPending}>
            {t('plugins.settings.save')}
          </button>
          {changed ? (
            <button type="button" onClick={() => setDraft({})}>
              {t('plugins.settings.discard')}
            </button>
          ) : null}
          {save.isSuccess && !changed ? (
            <span className="ok-text" role="status">
              {t('plugins.settings.saved')}
            </span>
          ) : null}
        </div>
      </form>
    </details>
  );
}

/** The bundle's hooks: what they are, the file's digest, and trust (they never run untrusted). */
function Hooks({
  plugin: p,
  entry,
  loading,
  error,
  onChanged,
}: {
  plugin: Plugin;
  entry: PluginHooksEntry | undefined;
  loading: boolean;
  error: unknown;
  onChanged: () => Promise<unknown>;
}) {
  const { t, lang } = useI18n();
  const untrust = useMutation({
    mutationFn: () => call(Routes.pluginHookUntrust, { params: { id: p.id } }),
    onSuccess: () => void onChanged(),
  });
  const state = !entry
    ? undefined
    : entry.active
      ? (['ok', 'plugins.hooks.active'] as const)
      : entry.trusted && entry.changed
        ? (['bad', 'plugins.hooks.changed'] as const)
        : entry.trusted
          ? (['warn', 'plugins.hooks.trustedIdle'] as const)
          : (['muted', 'plugins.hooks.untrusted'] as const);
  return (
    <details className="plugin-section" open={entry ? !entry.active : undefined}>
      <summary>
        {t('plugins.hooks')}{' '}
        {state ? (
          <Badge tone={state[0]} title={t(state[1])}>
            {t(`${state[1]}.short`)}
          </Badge>
        ) : null}
      </summary>
      <p className="hint">{t('plugins.hooks.never')}</p>
      {loading ? <Loading /> : null}
      <ErrorNote error={error} />
      {entry ? (
        <>
          {state ? <p>{t(state[1])}</p> : null}
          <dl className="digest">
            <dt>{t('plugins.hooks.digest')}</dt>
            <dd>
              <code data-testid="hooks-digest">{entry.digest ?? '—'}</code>
            </dd>
            {entry.trustedDigest && entry.trustedDigest !== entry.digest ? (
              <>
                <dt>{t('plugins.hooks.trustedDigest')}</dt>
                <dd>
                  <code>{entry.trustedDigest}</code>
                </dd>
              </>
            ) : null}
            {entry.trustedAt ? (
              <>
                <dt>{t('plugins.hooks.trustedAt')}</dt>
                <dd>{formatTime(entry.trustedAt, lang)}</dd>
              </>
            ) : null}
          </dl>
          {entry.hooks.length ? (
            <div className="table-scroll">
              <table className="list compact" aria-label={t('plugins.hooksOf', { name: p.name })}>
                <thead>
                  <tr>
                    <th scope="col">{t('plugins.hooks.name')}</th>
                    <th scope="col">{t('plugins.hooks.event')}</th>
                    <th scope="col">{t('plugins.hooks.matcher')}</th>
                    <th scope="col">{t('plugins.hooks.runs')}</th>
                  </tr>
                </thead>
                <tbody>
                  {entry.hooks.map((h) => (
                    <tr key={h.name}>
                      <td>
                        <code>{h.name}</code>
                      </td>
                      <td>{h.event}</td>
                      <td>
                        <code>{h.matchers.join(' | ') || '*'}</code>
                      </td>
                      <td>
                        <code className="wrap">{h.command ?? h.url}</code>
                        <div className="sub">
                          {t('plugins.hooks.timeout', { n: h.timeoutSeconds })}
                          {h.failClosed ? ` · ${t('plugins.hooks.failClosed')}` : ''}
                        </div>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : null}
          {entry.issues.length ? (
            <div className="error-note" role="alert">
              <strong>{t('plugins.hooks.issues')}</strong>
              <ul>
                {entry.issues.map((i, n) => (
                  <li key={n}>
                    <code>{i.path || '(file)'}</code> {i.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          {entry.ignored.length ? (
            <div className="hint">
              {t('plugins.hooks.ignored')}
              <ul>
                {entry.ignored.map((i, n) => (
                  <li key={n}>
                    <code>{i.path}</code> {i.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
          <div className="actions">
            {!entry.trusted || entry.changed ? (
              <ConfirmButton
                label={t('plugins.hooks.trust')}
                ariaLabel={t('plugins.hooks.trustOf', { name: p.name })}
                danger={false}
                disabled={entry.issues.length > 0}
                title={t('plugins.hooks.trustTitle', { name: p.name })}
                body={
                  <>
                    <p>{t('plugins.hooks.trustBody', { n: entry.hooks.length })}</p>
                    <p>
                      {t('plugins.hooks.digest')}: <code>{entry.digest}</code>
                    </p>
                  </>
                }
                confirmLabel={t('plugins.hooks.trust')}
                onConfirm={async () => {
                  await call(Routes.pluginHookTrust, { params: { id: p.id } });
                  await onChanged();
                }}
              />
            ) : null}
            {entry.trusted ? (
              <button
                type="button"
                disabled={untrust.isPending}
                onClick={() => untrust.mutate()}
                aria-label={t('plugins.hooks.untrustOf', { name: p.name })}
              >
                {t('plugins.hooks.untrust')}
              </button>
            ) : null}
          </div>
          <ErrorNote error={untrust.error} />
        </>
      ) : null}
    </details>
  );
}
