import { useState, type FormEvent } from 'react';
import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { Role, type ApiTokenInfo, type CreatedToken } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, CopyButton, EmptyState, ErrorNote, FieldErrors, formatTime, PageHeader } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { invalidAt } from '../ui/forms';
import { Modal } from '../ui/Modal';

const tokensKey = ['settings', 'tokens'] as const;

function CreateTokenDialog({
  onClose,
  onCreated,
}: {
  onClose: () => void;
  onCreated: (c: CreatedToken) => void;
}) {
  const { t } = useI18n();
  const { can } = useAuth();
  const admin = can('identity:token:admin');
  const [label, setLabel] = useState('');
  const [days, setDays] = useState('');
  const [owner, setOwner] = useState('');
  const [role, setRole] = useState<Role | ''>('');
  const create = useMutation({
    mutationFn: () =>
      call(Routes.createToken, {
        body: {
          ...(label.trim() ? { label: label.trim() } : {}),
          ...(days.trim() ? { expiresInDays: Number(days) } : {}),
          ...(admin && owner.trim() ? { owner: owner.trim() } : {}),
          ...(admin && role ? { role } : {}),
        },
      }),
    onSuccess: onCreated,
  });
  const err = create.error;
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Modal title={t('settings.tokens.create')} onClose={onClose}>
      <form onSubmit={submit} noValidate className="stack">
        <label htmlFor="tok-label">{t('settings.tokens.label')}</label>
        <input
          id="tok-label"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          aria-invalid={invalidAt(err, 'label')}
        />
        <FieldErrors error={err} path="label" />
        <label htmlFor="tok-days">{t('settings.tokens.expires')}</label>
        <input
          id="tok-days"
          type="number"
          min={1}
          max={3650}
          value={days}
          placeholder={t('settings.tokens.never')}
          onChange={(e) => setDays(e.target.value)}
          aria-invalid={invalidAt(err, 'expiresInDays')}
        />
        <FieldErrors error={err} path="expiresInDays" />
        {admin ? (
          <div className="row">
            <div className="grow">
              <label htmlFor="tok-owner">{t('settings.tokens.owner')}</label>
              <input
                id="tok-owner"
                value={owner}
                placeholder={t('settings.tokens.ownerSelf')}
                onChange={(e) => setOwner(e.target.value)}
                aria-invalid={invalidAt(err, 'owner')}
              />
              <FieldErrors error={err} path="owner" />
            </div>
            <div>
              <label htmlFor="tok-role">{t('settings.tokens.role')}</label>
              <select id="tok-role" value={role} onChange={(e) => setRole(e.target.value as Role | '')}>
                <option value="">{t('settings.tokens.roleDefault')}</option>
                {Role.options.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
              <FieldErrors error={err} path="role" />
            </div>
          </div>
        ) : null}
        {admin ? <p className="hint">{t('settings.tokens.roleHint')}</p> : null}
        <ErrorNote error={err} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button type="submit" className="primary" disabled={create.isPending}>
            {t('common.create')}
          </button>
        </div>
      </form>
    </Modal>
  );
}

function TokenOnce({ created, onClose }: { created: CreatedToken; onClose: () => void }) {
  const { t } = useI18n();
  return (
    <Modal title={t('settings.tokens.created', { owner: created.info.ownerName })} onClose={onClose}>
      <p className="notice">{t('settings.tokens.once')}</p>
      <label htmlFor="token-once">{t('signIn.token')}</label>
      <div className="copy-row">
        <input
          id="token-once"
          readOnly
          value={created.token}
          data-testid="token-once"
          onFocus={(e) => e.target.select()}
        />
        <CopyButton text={created.token} />
      </div>
      <div className="actions">
        <button type="button" className="primary" onClick={onClose}>
          {t('triggers.secretStored')}
        </button>
      </div>
    </Modal>
  );
}

function tokenState(tk: ApiTokenInfo): 'revoked' | 'expired' | 'active' {
  if (tk.revokedAt) return 'revoked';
  if (tk.expiresAt && Date.parse(tk.expiresAt) < Date.now()) return 'expired';
  return 'active';
}
const STATE_TONE = { revoked: 'bad', expired: 'warn', active: 'ok' } as const;

/** API tokens: list, create (the secret shown once, with copy), revoke. */
export function Tokens() {
  const { t, lang } = useI18n();
  const { can, me } = useAuth();
  const queries = useQueryClient();
  const admin = can('identity:token:admin');
  const [ownerText, setOwnerText] = useState('');
  const [owner, setOwner] = useState('');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedToken | null>(null);
  const list = useInfiniteQuery({
    queryKey: [...tokensKey, owner],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.listTokens, {
        query: { limit: 50, ...(owner ? { owner } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const refresh = () => queries.invalidateQueries({ queryKey: tokensKey });
  const newButton = can('identity:token:create') ? (
    <button type="button" className="primary" onClick={() => setCreating(true)}>
      {t('settings.tokens.create')}
    </button>
  ) : null;
  return (
    <section aria-label={t('settings.tokens')}>
      <PageHeader level={2} title={t('settings.tokens')} actions={newButton} />
      {admin ? (
        <form
          className="filters"
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            setOwner(ownerText.trim());
          }}
        >
          <input
            type="search"
            aria-label={t('settings.tokens.ownerFilter')}
            placeholder={t('settings.tokens.ownerFilter')}
            value={ownerText}
            onChange={(e) => setOwnerText(e.target.value)}
          />
          <button type="submit">{t('common.search')}</button>
        </form>
      ) : null}
      <ListTable
        label={t('settings.tokens')}
        query={list}
        count={items.length}
        empty={<EmptyState action={newButton}>{t('settings.tokens.empty')}</EmptyState>}
        columns={[
          t('settings.tokens.label'),
          t('tasks.state'),
          t('settings.tokens.lastUsed'),
          t('runs.created'),
        ]}
        actions
      >
        {items.map((tk) => {
          const state = tokenState(tk);
          const current = tk.id === me?.tokenId;
          return (
            <tr key={tk.id} data-token-id={tk.id}>
              <td>
                <strong>{tk.label ?? t('settings.tokens.unlabelled')}</strong>{' '}
                {current ? <Badge tone="info">{t('settings.tokens.current')}</Badge> : null}
                <div className="sub">
                  <code>{tk.prefix}…</code> · {tk.ownerName}
                </div>
              </td>
              <td>
                <Badge tone={STATE_TONE[state]}>{t(`settings.tokens.state.${state}`)}</Badge>
                {tk.expiresAt && state === 'active' ? (
                  <div className="sub">
                    {t('settings.tokens.until', { at: formatTime(tk.expiresAt, lang) })}
                  </div>
                ) : null}
              </td>
              <td>{tk.lastUsedAt ? formatTime(tk.lastUsedAt, lang) : '—'}</td>
              <td>{formatTime(tk.createdAt, lang)}</td>
              <td>
                {state !== 'revoked' && can('identity:token:revoke') ? (
                  <ConfirmButton
                    label={t('settings.tokens.revoke')}
                    title={t('settings.tokens.revokeTitle')}
                    body={
                      <p>
                        {current
                          ? t('settings.tokens.revokeCurrent')
                          : t('settings.tokens.revokeBody', { prefix: tk.prefix })}
                      </p>
                    }
                    confirmLabel={t('settings.tokens.revoke')}
                    onConfirm={async () => {
                      await call(Routes.revokeToken, { params: { id: tk.id } });
                      await refresh();
                    }}
                  />
                ) : null}
              </td>
            </tr>
          );
        })}
      </ListTable>
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {t('common.more')}
        </button>
      ) : null}
      {creating ? (
        <CreateTokenDialog
          onClose={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setCreated(c);
            void refresh();
          }}
        />
      ) : null}
      {created ? <TokenOnce created={created} onClose={() => setCreated(null)} /> : null}
    </section>
  );
}
