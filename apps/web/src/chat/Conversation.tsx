import { useCallback, useEffect, useId, useLayoutEffect, useRef, useState, type KeyboardEvent } from 'react';
import { Link } from 'react-router';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  BudgetLimit,
  chatTitleOf,
  type BudgetUsage,
  type ChatEvent,
  type ChatSession,
  type ChatSessionDetail,
  type FlowSnapshot,
  type PermissionMode,
} from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { PermissionModeSelect } from '../runs/PermissionModeSelect';
import { Badge, ErrorNote, formatDuration, Loading } from '../ui/bits';
import { MessageText } from './MessageText';
import { applyChat, IN_PROGRESS, viewOf, type ChatView, type LocalAction } from './model';
import { chatSessionsKey, TURN_TONE } from './SessionList';
import { ApprovalCard, ToolCallRow } from './ToolCalls';
import { InputRequestForm } from '../elicitation/InputRequestForm';
import type { PendingInput } from '../elicitation/model';
import { followTurn, type TurnStreamState } from './turn-stream';
import { useAgentNames } from './agents';

/**
 * One chat: the stored conversation, then each turn live. Tokens fold into the answer being
 * written, once per animation frame; tool calls fold into rows under the message that asked for
 * them; a call the gate paused shows its confirmation card there. A turn in progress when the page
 * opens (a reload, a deep link) is followed from the newest stored event.
 *
 * Docked (the flow builder's assistant), the host draws the title and the way back; each message
 * carries the host's `flow` snapshot taken as it is sent, and every event is passed on to `onEvent`.
 */
export function Conversation({
  sessionId,
  takeFirst,
  docked = false,
  flow,
  onEvent,
}: {
  sessionId: string;
  takeFirst: () => string | undefined;
  docked?: boolean;
  flow?: () => FlowSnapshot;
  onEvent?: (e: ChatEvent) => void;
}) {
  const { t } = useI18n();
  const queries = useQueryClient();
  const detail = useQuery({
    queryKey: ['chat', sessionId],
    queryFn: ({ signal }) => call(Routes.chatSessionGet, { params: { id: sessionId }, signal }),
    // The stream keeps the view current; the detail is the starting point, fetched anew each visit.
    gcTime: 0,
    staleTime: Infinity,
    refetchOnWindowFocus: false,
  });
  const agents = useAgentNames();
  const [session, setSession] = useState<ChatSession | undefined>();
  const [view, setView] = useState<ChatView | undefined>();
  const [stream, setStream] = useState<TurnStreamState>('closed');
  const [following, setFollowing] = useState(false);
  const [sendError, setSendError] = useState<unknown>(null);
  const [streamError, setStreamError] = useState<unknown>(null);
  const [text, setText] = useState('');
  const [answered, setAnswered] = useState(false);
  const live = useRef<ChatView | undefined>(undefined);
  const turn = useRef<AbortController | undefined>(undefined);
  const frame = useRef<number | undefined>(undefined);
  const mounted = useRef(true);
  const host = useRef({ flow, onEvent });
  host.current = { flow, onEvent };

  const draw = useCallback(() => {
    if (frame.current !== undefined) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = undefined;
      setView(live.current);
    });
  }, []);
  const dispatch = useCallback(
    (action: ChatEvent | LocalAction) => {
      if (!live.current) return;
      live.current = applyChat(live.current, action);
      // The page's own actions (a message sent, a card answered) show at once; frames per frame.
      if (action.type.startsWith('local_')) setView(live.current);
      else draw();
    },
    [draw],
  );
  const start = useCallback((d: ChatSessionDetail) => {
    live.current = viewOf(d);
    setView(live.current);
    setSession(metaOf(d));
  }, []);

  /** Sends `content` (or joins the turn in progress) and follows the turn to its end. */
  const follow = useCallback(
    (content?: string) => {
      const from = live.current;
      if (!from || turn.current) return;
      const ctrl = new AbortController();
      turn.current = ctrl;
      let heard = false;
      setFollowing(true);
      setSendError(null);
      setStreamError(null);
      if (content !== undefined) dispatch({ type: 'local_send', content });
      const snapshot = content !== undefined ? host.current.flow?.() : undefined;
      followTurn({
        sessionId,
        ...(content !== undefined ? { content } : {}),
        ...(snapshot ? { flow: snapshot } : {}),
        afterSeq: from.lastSeq,
        onEvent: (e) => {
          heard = true;
          dispatch(e);
          host.current.onEvent?.(e);
          if (e.type === 'message_complete') setAnswered(true);
          if (e.type === 'turn_started') {
            setAnswered(false);
            // A new chat is named after its first message (the server does the same).
            setSession((s) => (s && !s.title ? { ...s, title: chatTitleOf(e.data.content) } : s));
            // The list shows the turn running (and a new chat's title, its first message).
            void queries.invalidateQueries({ queryKey: chatSessionsKey });
          }
        },
        onState: setStream,
        signal: ctrl.signal,
      })
        .then(
          () => false,
          (err: unknown) => {
            if ((err as Error).name === 'AbortError') return false;
            if (content !== undefined && !heard) {
              dispatch({ type: 'local_send_failed' });
              setSendError(err);
              setText((old) => old || content);
            } else {
              setStreamError(err);
            }
            // 409: a turn started elsewhere (another tab) runs in this chat: follow it here.
            return err instanceof ApiError && err.code === 'conflict';
          },
        )
        .then(async (elsewhere) => {
          if (turn.current === ctrl) turn.current = undefined;
          if (ctrl.signal.aborted) return;
          setFollowing(false);
          setStream('closed');
          void queries.invalidateQueries({ queryKey: chatSessionsKey });
          // The stored session after the turn: its title and status (the first message names a
          // new chat), and how the turn ended when the stream closed without saying so.
          const fresh = await call(Routes.chatSessionGet, { params: { id: sessionId } }).catch(
            () => undefined,
          );
          if (!fresh || !mounted.current || turn.current) return;
          const unsettled = live.current !== undefined && IN_PROGRESS.has(live.current.status);
          if (unsettled || (elsewhere && IN_PROGRESS.has(fresh.status))) start(fresh);
          else setSession(metaOf(fresh));
          if (elsewhere && IN_PROGRESS.has(fresh.status)) setJoin((n) => n + 1);
        });
    },
    [dispatch, queries, sessionId, start],
  );

  useEffect(() => {
    if (!detail.data || live.current) return;
    start(detail.data);
    const first = takeFirst();
    if (first !== undefined) follow(first);
    else if (IN_PROGRESS.has(detail.data.status)) follow();
  }, [detail.data, start, follow, takeFirst]);

  // Joins a turn found running elsewhere once the one this page tried has settled.
  const [join, setJoin] = useState(0);
  useEffect(() => {
    if (join) follow();
  }, [join, follow]);

  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
      // Deferred: React's development double-mount must not cut the turn it is about to keep.
      setTimeout(() => {
        if (mounted.current) return;
        turn.current?.abort();
        if (frame.current !== undefined) cancelAnimationFrame(frame.current);
      }, 0);
    };
  }, []);

  const setMode = useMutation({
    mutationFn: (permissionMode: PermissionMode) =>
      call(Routes.chatSessionUpdate, { params: { id: sessionId }, body: { permissionMode } }),
    onSuccess: (next) => {
      setSession(next);
      void queries.invalidateQueries({ queryKey: chatSessionsKey });
    },
  });
  const cancel = useMutation({ mutationFn: () => call(Routes.chatCancel, { params: { id: sessionId } }) });

  const scroller = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [view]);

  if (detail.isPending) return <Loading />;
  if (detail.error) {
    return (
      <div className="chat-main">
        {detail.error instanceof ApiError && detail.error.code === 'not_found' ? (
          <p className="notice">{t('chat.notFound')}</p>
        ) : null}
        <ErrorNote error={detail.error} />
      </div>
    );
  }
  if (!view || !session) return <Loading />;

  const busy = following || IN_PROGRESS.has(view.status);
  const submit = () => {
    const content = text.trim();
    if (!content || busy) return;
    setText('');
    follow(content);
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends; Shift+Enter breaks the line; nothing is sent while an IME composes.
    if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
    e.preventDefault();
    submit();
  };
  const agentName =
    session.agentId === null
      ? undefined
      : (agents.get(session.agentId) ?? t('chat.agent.unknown', { id: session.agentId }));

  return (
    <div className="chat-main" data-status={view.status}>
      <header className="chat-head">
        {docked ? null : (
          <>
            <Link to="/chat" className="chat-back">
              ← {t('chat.back')}
            </Link>
            <h1 title={session.title}>{session.title || t('chat.new')}</h1>
          </>
        )}
        <Badge tone={TURN_TONE[view.status]}>{t(`chat.status.${view.status}`)}</Badge>
        {agentName ? <span className="badge badge-info">{agentName}</span> : null}
        <span className={`stream-state ${stream}`} data-testid="stream-state">
          {stream === 'open' ? t('common.live') : stream === 'reconnecting' ? t('common.reconnecting') : ''}
        </span>
        <div className="chat-head-mode">
          <PermissionModeSelect value={session.permissionMode} onChange={(m) => setMode.mutate(m)} />
          {setMode.isSuccess ? <div className="ok-text">{t('chat.mode.saved')}</div> : null}
          <ErrorNote error={setMode.error} />
        </div>
      </header>
      <div
        className="chat-scroll"
        ref={scroller}
        onScroll={(e) => {
          const el = e.currentTarget;
          pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        <ol className="chat-log" aria-label={t('chat.conversation')} aria-busy={busy}>
          {view.items.length === 0 ? <li className="sub chat-none">{t('chat.noMessages')}</li> : null}
          {view.items.map((item, i) => {
            if (item.kind === 'user') {
              return (
                <li key={item.id ?? `u${i}`} className="chat-msg user" data-role="user">
                  <span className="visually-hidden">{t('chat.you')}:</span>
                  <div className="bubble">
                    <MessageText text={item.content} />
                  </div>
                </li>
              );
            }
            if (item.kind === 'memory') {
              return (
                <li key={`m${i}`} className="chat-memory sub" data-role="memory">
                  <details>
                    <summary>{t('chat.memory', { n: item.memories.length })}</summary>
                    <ul>
                      {item.memories.map((m) => (
                        <li key={m.id}>{m.text}</li>
                      ))}
                    </ul>
                  </details>
                </li>
              );
            }
            const calls = item.callIds.flatMap((id) => view.calls.get(id) ?? []);
            return (
              <li
                key={item.id ?? `a${i}`}
                className="chat-msg assistant"
                data-role="assistant"
                data-streaming={item.streaming || undefined}
              >
                <span className="visually-hidden">{t('chat.assistant')}:</span>
                {item.content ? (
                  <div className="bubble" data-testid={item.streaming ? 'chat-draft' : undefined}>
                    <MessageText text={item.content} caret={item.streaming && !calls.length} />
                  </div>
                ) : null}
                {calls.length ? (
                  <ul className="chat-calls">
                    {calls.map((c) => (
                      <ToolCallRow key={c.callId} call={c} />
                    ))}
                  </ul>
                ) : null}
                {calls
                  .filter((c) => c.status === 'awaiting_approval')
                  .map((c) => (
                    <ApprovalCard
                      key={c.callId}
                      sessionId={sessionId}
                      call={c}
                      onDecided={(approved) =>
                        dispatch({ type: 'local_decided', callId: c.callId, approved })
                      }
                    />
                  ))}
                {calls
                  .filter((c) => c.input)
                  .map((c) => (
                    <InputRequestForm
                      key={(c.input as PendingInput).id}
                      request={c.input as PendingInput}
                      heading={<strong>{t('input.call')} </strong>}
                    />
                  ))}
                {item.usage ? <Usage usage={item.usage} /> : null}
              </li>
            );
          })}
          {busy &&
          view.status === 'running' &&
          !lastIsStreamingText(view) &&
          // A call waiting for the person's input shows its form instead.
          ![...view.calls.values()].some((c) => c.input) ? (
            <li className="chat-working">
              <Loading label={t('chat.thinking')} />
            </li>
          ) : null}
        </ol>
        {/* Said once an answer is whole (not token by token); the answer itself is in the log. */}
        <div className="visually-hidden" role="status">
          {answered ? t('chat.answered') : ''}
        </div>
        <TurnEnded view={view} />
        <SendError error={sendError} />
        <ErrorNote error={streamError} />
      </div>
      <form
        className="chat-composer"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Composer text={text} onChange={setText} onKeyDown={onKey} />
        <div className="chat-composer-actions">
          <button type="submit" className="primary" disabled={busy || !text.trim()}>
            {t('chat.send')}
          </button>
          {busy ? (
            <button
              type="button"
              className="danger"
              disabled={cancel.isPending}
              onClick={() => cancel.mutate()}
            >
              {t('chat.cancel')}
            </button>
          ) : null}
        </div>
        <ErrorNote error={cancel.error} />
      </form>
    </div>
  );
}

function metaOf(d: ChatSessionDetail): ChatSession {
  const { messages: _m, toolCalls: _c, lastEventId: _l, ...meta } = d;
  return meta;
}

function lastIsStreamingText(view: ChatView): boolean {
  const last = view.items[view.items.length - 1];
  return last?.kind === 'assistant' && last.streaming && last.content !== '' && !last.callIds.length;
}

export function Composer({
  text,
  onChange,
  onKeyDown,
}: {
  text: string;
  onChange: (text: string) => void;
  onKeyDown: (e: KeyboardEvent<HTMLTextAreaElement>) => void;
}) {
  const { t } = useI18n();
  const id = useId();
  return (
    <>
      <label htmlFor={id} className="visually-hidden">
        {t('chat.message')}
      </label>
      <textarea
        id={id}
        className="chat-input"
        rows={3}
        maxLength={100_000}
        placeholder={t('chat.placeholder')}
        value={text}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={onKeyDown}
      />
    </>
  );
}

function Usage({ usage }: { usage: BudgetUsage }) {
  const { t } = useI18n();
  return (
    <div className="sub chat-usage">
      {t(usage.toolCalls === 1 ? 'chat.usage.one' : 'chat.usage', {
        tokens: usage.tokens,
        calls: usage.toolCalls,
        time: formatDuration(usage.wallMs),
      })}
    </div>
  );
}

/** How the turn ended when it did not complete: cancelled, or the error with its code. */
function TurnEnded({ view }: { view: ChatView }) {
  const { t } = useI18n();
  const end = view.ended;
  if (!end) return null;
  if (end.kind === 'cancelled') {
    return (
      <p className="notice" data-testid="turn-cancelled">
        {t('chat.ended.cancelled')} {end.message}
      </p>
    );
  }
  const limit = BudgetLimit.safeParse(end.error.details?.['limit']);
  return (
    <div className="error-note" role="alert" data-testid="turn-error" data-code={end.error.code}>
      <strong>
        {t('chat.ended.error')} <code className="code-tag">{end.error.code}</code>
      </strong>
      {end.error.code === 'budget_exceeded' && limit.success ? (
        <div>{t('chat.budget', { limit: t(`chat.budget.${limit.data}`) })}</div>
      ) : null}
      <div className="chat-error-message">{end.error.message}</div>
    </div>
  );
}

/** A message the server refused: 409 says a turn is in progress; others say what the server said. */
function SendError({ error }: { error: unknown }) {
  const { t } = useI18n();
  if (!error) return null;
  if (error instanceof ApiError && error.code === 'conflict')
    return <ErrorNote error={error} title={t('chat.busy')} />;
  return <ErrorNote error={error} />;
}
