import { useState, type FormEvent } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { HookEvent, type Hook, type HookType } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, EmptyState, ErrorNote, FieldErrors, PageHeader } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { invalidAt } from '../ui/forms';
import { Modal } from '../ui/Modal';

const hooksKey = ['settings', 'hooks'] as const;

interface HookForm {
  name: string;
  event: HookEvent;
  matcher: string;
  type: HookType;
  command: string;
  url: string;
  timeoutSeconds: string;
  enabled: boolean;
  failClosed: boolean;
  global: boolean;
}

function formOf(h?: Hook): HookForm {
  return {
    name: h?.name ?? '',
    event: h?.event ?? 'pre_tool_use',
    matcher: h?.matcher ?? '',
    type: h?.type ?? 'http',
    command: h?.command ?? '',
    url: h?.url ?? '',
    timeoutSeconds: String(h?.timeoutSeconds ?? 30),
    enabled: h?.enabled ?? true,
    failClosed: h?.failClosed ?? false,
    global: h?.global ?? false,
  };
}

function HookDialog({ hook, onClose, onSaved }: { hook?: Hook; onClose: () => void; onSaved: () => void }) {
  const { t } = useI18n();
  const { me } = useAuth();
  const admin = me?.owner.role === 'admin';
  const [f, setF] = useState<HookForm>(() => formOf(hook));
  const set = <K extends keyof HookForm>(k: K, v: HookForm[K]) => setF((old) => ({ ...old, [k]: v }));
  const save = useMutation({
    mutationFn: () => {
      const body = {
        name: f.name,
        event: f.event,
        matcher: f.matcher,
        type: f.type,
        ...(f.type === 'command' ? { command: f.command } : { url: f.url }),
        timeoutSeconds: Number(f.timeoutSeconds),
        enabled: f.enabled,
        failClosed: f.failClosed,
        global: f.global,
      };
      return hook
        ? call(Routes.hookUpdate, { params: { id: hook.id }, body })
        : call(Routes.hookCreate, { body });
    },
    onSuccess: onSaved,
  });
  const err = save.error;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  return (
    <Modal
      title={hook ? t('settings.hooks.edit', { name: hook.name }) : t('settings.hooks.new')}
      onClose={onClose}
      wide
    >
      <form onSubmit={submit} noValidate className="stack">
        <div className="row">
          <div className="grow">
            <label htmlFor="hook-name">{t('tools.form.name')}</label>
            <input
              id="hook-name"
              value={f.name}
              onChange={(e) => set('name', e.target.value)}
              aria-invalid={invalidAt(err, 'name')}
            />
            <FieldErrors error={err} path="name" />
          </div>
          <div>
            <label htmlFor="hook-event">{t('settings.hooks.event')}</label>
            <select
              id="hook-event"
              value={f.event}
              onChange={(e) => set('event', e.target.value as HookEvent)}
            >
              {HookEvent.options.map((x) => (
                <option key={x} value={x}>
                  {x}
                </option>
              ))}
            </select>
            <FieldErrors error={err} path="event" />
          </div>
        </div>
        <label htmlFor="hook-matcher">{t('settings.hooks.matcher')}</label>
        <input
          id="hook-matcher"
          value={f.matcher}
          placeholder="Tool(write_*)"
          onChange={(e) => set('matcher', e.target.value)}
          aria-invalid={invalidAt(err, 'matcher')}
        />
        <div className="hint">{t('settings.hooks.matcherHint')}</div>
        <FieldErrors error={err} path="matcher" />
        <span className="label" id="hook-type-label">
          {t('tools.form.type')}
        </span>
        <div role="radiogroup" aria-labelledby="hook-type-label" className="tabs">
          {(['http', 'command'] as const).map((type) => (
            <label key={type} className="check">
              <input
                type="radio"
                name="hook-type"
                checked={f.type === type}
                onChange={() => set('type', type)}
              />
              {t(`settings.hooks.type.${type}`)}
            </label>
          ))}
        </div>
        {f.type === 'command' ? (
          <>
            <label htmlFor="hook-command">{t('settings.hooks.command')}</label>
            <textarea
              id="hook-command"
              rows={2}
              value={f.command}
              spellCheck={false}
              onChange={(e) => set('command', e.target.value)}
              aria-invalid={invalidAt(err, 'command')}
            />
            <div className="hint">
              {admin ? t('settings.hooks.commandHint') : t('settings.hooks.commandAdminOnly')}
            </div>
            <FieldErrors error={err} path="command" />
          </>
        ) : (
          <>
            <label htmlFor="hook-url">{t('settings.hooks.url')}</label>
            <input
              id="hook-url"
              type="url"
              value={f.url}
              placeholder="https://hooks.example.com/switchyard"
              onChange={(e) => set('url', e.target.value)}
              aria-invalid={invalidAt(err, 'url')}
            />
            <FieldErrors error={err} path="url" />
          </>
        )}
        <div className="row">
          <div>
            <label htmlFor="hook-timeout">{t('settings.hooks.timeout')}</label>
            <input
              id="hook-timeout"
              type="number"
              min={1}
              max={600}
              value={f.timeoutSeconds}
              onChange={(e) => set('timeoutSeconds', e.target.value)}
              aria-invalid={invalidAt(err, 'timeoutSeconds')}
            />
            <FieldErrors error={err} path="timeoutSeconds" />
          </div>
          <label className="check">
            <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} />
            {t('tools.enabled')}
          </label>
          <label className="check">
            <input
              type="checkbox"
              checked={f.failClosed}
              onChange={(e) => set('failClosed', e.target.checked)}
            />
            {t('settings.hooks.failClosed')}
          </label>
          {admin ? (
            <label className="check">
              <input type="checkbox" checked={f.global} onChange={(e) => set('global', e.target.checked)} />
              {t('settings.hooks.global')}
            </label>
          ) : null}
        </div>
        <FieldErrors error={err} path="global" />
        <ErrorNote error={err} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={save.isPending}>
            {t('common.save')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** Hooks: the caller's and the global ones; pre-tool-use hooks can decide a call, the others observe. */
export function Hooks() {
  const { t } = useI18n();
  const { can, me } = useAuth();
  const queries = useQueryClient();
  const admin = me?.owner.role === 'admin';
  const [editing, setEditing] = useState<Hook | 'new' | null>(null);
  const list = useQuery({ queryKey: hooksKey, queryFn: ({ signal }) => call(Routes.hookList, { signal }) });
  const items = list.data?.items ?? [];
  const canEdit = can('settings:hooks:edit');
  const refresh = () => queries.invalidateQueries({ queryKey: hooksKey });
  const newButton = canEdit ? (
    <button type="button" className="primary" onClick={() => setEditing('new')}>
      {t('settings.hooks.new')}
    </button>
  ) : null;
  return (
    <section aria-label={t('settings.hooks')}>
      <PageHeader level={2} title={t('settings.hooks')} actions={newButton} />
      <ListTable
        label={t('settings.hooks')}
        query={list}
        count={items.length}
        empty={<EmptyState action={newButton}>{t('settings.hooks.empty')}</EmptyState>}
        columns={[t('tools.form.name'), t('settings.hooks.event'), t('settings.hooks.target')]}
        actions
      >
        {items.map((h) => {
          const mine = h.ownerId === me?.owner.id || (h.ownerId === null && admin);
          return (
            <tr key={h.id} data-hook-id={h.id}>
              <td>
                <strong>{h.name}</strong>{' '}
                {h.global || h.ownerId === null ? (
                  <Badge tone="info">{t('settings.hooks.globalBadge')}</Badge>
                ) : null}{' '}
                {!h.enabled ? <Badge tone="muted">{t('tools.disabled')}</Badge> : null}{' '}
                {h.failClosed ? <Badge tone="warn">{t('settings.hooks.failClosedBadge')}</Badge> : null}
                <div className="sub">
                  <code>{h.matcher || t('settings.hooks.everyCall')}</code>
                </div>
              </td>
              <td>
                <code>{h.event}</code>
              </td>
              <td className="goal">
                <Badge tone="muted">{h.type}</Badge> <code>{h.type === 'http' ? h.url : h.command}</code>
                <div className="sub">{t('settings.hooks.timeoutShort', { s: h.timeoutSeconds })}</div>
              </td>
              <td>
                {canEdit && mine ? (
                  <div className="row-actions">
                    <button type="button" onClick={() => setEditing(h)}>
                      {t('common.edit')}
                    </button>
                    <ConfirmButton
                      label={t('common.delete')}
                      title={t('settings.hooks.deleteTitle')}
                      body={<p>{t('settings.hooks.deleteBody', { name: h.name })}</p>}
                      confirmLabel={t('common.delete')}
                      onConfirm={async () => {
                        await call(Routes.hookDelete, { params: { id: h.id } });
                        await refresh();
                      }}
                    />
                  </div>
                ) : null}
              </td>
            </tr>
          );
        })}
      </ListTable>
      {editing ? (
        <HookDialog
          {...(editing === 'new' ? {} : { hook: editing })}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            void refresh();
          }}
        />
      ) : null}
    </section>
  );
}
