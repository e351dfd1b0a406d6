import { useState } from 'react';
import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { EmptyState, ErrorNote, formatTime, PageHeader } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';

const memoryKey = ['settings', 'memory'] as const;

/** What a fact is cut to in the confirmation dialog. */
const QUOTE_CHARS = 120;

/**
 * Memory (experimental, off by default): the switch, and the facts kept, newest first, with a
 * search, paging and delete (asked first). Off keeps the facts; they stay listed and deletable.
 */
export function Memory() {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const editable = can('settings:memory:edit');
  const [qText, setQText] = useState('');
  const [q, setQ] = useState('');
  const setting = useQuery({
    queryKey: [...memoryKey, 'setting'],
    queryFn: ({ signal }) => call(Routes.memorySettingsGet, { signal }),
  });
  // What the person asked for, shown from the click on: the mutation's own pending state arrives a
  // tick later, and the switch would flick back meanwhile (a browser test under load saw it unchanged).
  const [asked, setAsked] = useState<boolean | undefined>(undefined);
  const toggle = useMutation({
    mutationFn: (enabled: boolean) => call(Routes.memorySettingsPut, { body: { enabled } }),
    onSuccess: (saved) => queries.setQueryData([...memoryKey, 'setting'], saved),
    onSettled: () => setAsked(undefined),
  });
  const list = useInfiniteQuery({
    queryKey: [...memoryKey, 'list', q],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.memoryList, {
        query: { limit: 50, ...(q ? { q } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = list.data?.pages.flatMap((p) => p.items) ?? [];
  const total = list.data?.pages[0]?.total ?? 0;
  const enabled = asked ?? setting.data?.enabled;
  return (
    <section aria-label={t('settings.memory')}>
      <PageHeader level={2} title={t('settings.memory')} />
      <div className="card">
        <label className="check">
          <input
            type="checkbox"
            role="switch"
            checked={enabled ?? false}
            disabled={!editable || setting.isPending || toggle.isPending}
            aria-describedby="memory-help"
            onChange={(e) => {
              setAsked(e.target.checked);
              toggle.mutate(e.target.checked);
            }}
          />{' '}
          <strong>{t('settings.memory.toggle')}</strong>
        </label>
        <p id="memory-help" className="hint">
          {t('settings.memory.help')}
        </p>
        <ErrorNote error={setting.error ?? toggle.error} />
      </div>
      <form
        className="filters"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(qText.trim());
        }}
      >
        <input
          type="search"
          aria-label={t('settings.memory.search')}
          placeholder={t('settings.memory.search')}
          value={qText}
          onChange={(e) => setQText(e.target.value)}
        />
        <button type="submit">{t('common.search')}</button>
      </form>
      {list.isSuccess && total ? <p className="hint">{t('settings.memory.count', { n: total })}</p> : null}
      <ListTable
        label={t('settings.memory.list')}
        query={list}
        count={items.length}
        empty={
          <EmptyState>
            {q
              ? t('settings.memory.noMatch')
              : enabled
                ? t('settings.memory.emptyOn')
                : t('settings.memory.emptyOff')}
          </EmptyState>
        }
        columns={[t('settings.memory.text'), t('runs.created'), t('settings.memory.lastUsed')]}
        actions
      >
        {items.map((m) => (
          <tr key={m.id} data-memory-id={m.id}>
            <td className="memory-text">{m.text}</td>
            <td>{formatTime(m.createdAt, lang)}</td>
            <td>{m.lastUsedAt ? formatTime(m.lastUsedAt, lang) : '—'}</td>
            <td>
              {editable ? (
                <ConfirmButton
                  label={t('common.delete')}
                  ariaLabel={t('settings.memory.deleteOne', {
                    text: m.text.length > 40 ? `${m.text.slice(0, 40)}…` : m.text,
                  })}
                  title={t('settings.memory.deleteTitle')}
                  body={
                    <p>
                      {t('settings.memory.deleteBody', {
                        text: m.text.length > QUOTE_CHARS ? `${m.text.slice(0, QUOTE_CHARS)}…` : m.text,
                      })}
                    </p>
                  }
                  confirmLabel={t('common.delete')}
                  onConfirm={async () => {
                    await call(Routes.memoryDelete, { params: { id: m.id } });
                    await queries.invalidateQueries({ queryKey: [...memoryKey, 'list'] });
                  }}
                />
              ) : null}
            </td>
          </tr>
        ))}
      </ListTable>
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {t('common.more')}
        </button>
      ) : null}
    </section>
  );
}
