import { useCallback, useEffect, useRef } from 'react';
import { useNavigate, useParams } from 'react-router';
import { useQueryClient } from '@tanstack/react-query';
import { Conversation } from '../chat/Conversation';
import { NewChat } from '../chat/NewChat';
import { chatSessionsKey, SessionList } from '../chat/SessionList';

/**
 * AI chat: the sessions on the left, the open one (or a new one) on the right. `/chat/{id}` is a
 * deep link: a reload draws the stored conversation and follows a turn still in progress.
 */
export default function ChatPage() {
  const { sessionId } = useParams();
  const navigate = useNavigate();
  const queries = useQueryClient();
  /** The first message of a chat just created, sent once its page has opened. */
  const first = useRef<{ sessionId: string; content: string } | undefined>(undefined);
  const takeFirst = useCallback(() => {
    const pending = first.current;
    if (!pending || pending.sessionId !== sessionId) return undefined;
    first.current = undefined;
    return pending.content;
  }, [sessionId]);

  // The page fills the window under the top bar: the conversation scrolls, the composer stays.
  useEffect(() => {
    document.body.classList.add('full-workspace');
    return () => document.body.classList.remove('full-workspace');
  }, []);

  return (
    <section className={`chat-page${sessionId ? ' has-session' : ''}`}>
      <SessionList current={sessionId} />
      {sessionId ? (
        <Conversation key={sessionId} sessionId={sessionId} takeFirst={takeFirst} />
      ) : (
        <NewChat
          onCreated={(session, content) => {
            first.current = { sessionId: session.id, content };
            void queries.invalidateQueries({ queryKey: chatSessionsKey });
            void navigate(`/chat/${session.id}`);
          }}
        />
      )}
    </section>
  );
}
