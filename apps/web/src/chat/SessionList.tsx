import { useState } from 'react';
import { NavLink, useNavigate } from 'react-router';
import { useInfiniteQuery, useQueryClient } from '@tanstack/react-query';
import type { ChatSession, ChatTurnStatus } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, EmptyState, ErrorNote, Loading } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { useDebounced } from '../ui/forms';
import { relativeTime } from '../ui/relative-time';
import { useNow } from '../ui/useNow';

export const CHAT_PAGE_SIZE = 30;
/** Every list of sessions (any search) is under this key: a change refreshes them all. */
export const chatSessionsKey = ['chat-sessions'] as const;

export const TURN_TONE: Record<ChatTurnStatus, string> = {
  idle: 'muted',
  running: 'run',
  awaiting_approval: 'wait',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'muted',
};

/** The sessions, newest first: search by title, "load more", new chat, delete after asking. */
export function SessionList({ current }: { current?: string }) {
  const { t, lang } = useI18n();
  const navigate = useNavigate();
  const queries = useQueryClient();
  const now = useNow(true, 60_000);
  const [text, setText] = useState('');
  const q = useDebounced(text.trim(), 300);

  const sessions = useInfiniteQuery({
    queryKey: [...chatSessionsKey, { q }],
    queryFn: ({ pageParam, signal }) =>
      call(Routes.chatSessionList, {
        query: { limit: CHAT_PAGE_SIZE, ...(q ? { q } : {}), ...(pageParam ? { cursor: pageParam } : {}) },
        signal,
      }),
    initialPageParam: '' as string,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
  });
  const items = sessions.data?.pages.flatMap((p) => p.items) ?? [];

  const remove = async (s: ChatSession) => {
    await call(Routes.chatSessionDelete, { params: { id: s.id } });
    queries.removeQueries({ queryKey: ['chat', s.id] });
    await queries.invalidateQueries({ queryKey: chatSessionsKey });
    if (s.id === current) void navigate('/chat');
  };

  return (
    <aside className="chat-sessions" aria-label={t('chat.sessions')}>
      <div className="chat-sessions-head">
        <h2>{t('chat.sessions')}</h2>
        <NavLink to="/chat" end className="button primary">
          {t('chat.new')}
        </NavLink>
      </div>
      <div role="search">
        <input
          type="search"
          aria-label={t('chat.search')}
          placeholder={t('chat.search')}
          value={text}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      {sessions.isPending ? <Loading /> : null}
      <ErrorNote error={sessions.error} />
      {sessions.isSuccess && !items.length ? (
        <EmptyState>{q ? t('chat.emptyFiltered', { q }) : t('chat.empty')}</EmptyState>
      ) : null}
      {items.length ? (
        <ul className="chat-session-list" aria-label={t('chat.sessions')}>
          {items.map((s) => (
            <li
              key={s.id}
              data-session-id={s.id}
              aria-label={s.title || t('chat.new')}
              className={s.id === current ? 'current' : ''}
            >
              <NavLink to={`/chat/${s.id}`} aria-current={s.id === current ? 'page' : undefined}>
                <span className="chat-session-title">{s.title || t('chat.new')}</span>
                <span className="sub">
                  <time dateTime={s.updatedAt} title={s.updatedAt}>
                    {relativeTime(s.updatedAt, now, lang)}
                  </time>{' '}
                  {s.status !== 'completed' && s.status !== 'idle' ? (
                    <Badge tone={TURN_TONE[s.status]}>{t(`chat.status.${s.status}`)}</Badge>
                  ) : null}
                </span>
              </NavLink>
              <ConfirmButton
                label="×"
                ariaLabel={t('chat.deleteOf', { title: s.title })}
                title={t('chat.deleteTitle', { title: s.title })}
                body={<p>{t('chat.deleteBody')}</p>}
                confirmLabel={t('chat.delete')}
                onConfirm={() => remove(s)}
              />
            </li>
          ))}
        </ul>
      ) : null}
      {sessions.hasNextPage ? (
        <button
          type="button"
          onClick={() => void sessions.fetchNextPage()}
          disabled={sessions.isFetchingNextPage}
        >
          {t('common.more')}
        </button>
      ) : null}
    </aside>
  );
}
