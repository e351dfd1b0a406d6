import { useCallback, useEffect, useId, useRef, useState } from 'react';
import type { ChatEvent, FlowSnapshot } from '@switchyard/contracts';
import { Conversation } from '../../chat/Conversation';
import { NewChat } from '../../chat/NewChat';
import { useI18n } from '../../i18n/i18n';

/**
 * The flow builder's assistant, docked bottom-right over the canvas: one chat session per open
 * builder page, made on the first message and named after the flow. It is the chat page's
 * conversation (tokens, tool rows, confirmation cards); each message carries `flow()`, the canvas as
 * it is when sent, and every event of the turn goes to `onEvent` (the page draws proposals and
 * reloads what the assistant saved). Hidden, it stays mounted: the turn and the session go on.
 */
export function AssistantPanel({
  id,
  open,
  onClose,
  flowName,
  flow,
  onEvent,
  sessionId: initialSession,
  onSession,
}: {
  id: string;
  open: boolean;
  onClose: () => void;
  flowName: string;
  flow: () => FlowSnapshot;
  onEvent: (e: ChatEvent) => void;
  /** A session this page already has (carried over when a new flow's first save moved the page). */
  sessionId?: string;
  onSession?: (sessionId: string | undefined) => void;
}) {
  const { t } = useI18n();
  const heading = useId();
  const [sessionId, setSessionId] = useState<string | undefined>(initialSession);
  const first = useRef<string | undefined>(undefined);
  const takeFirst = useCallback(() => {
    const content = first.current;
    first.current = undefined;
    return content;
  }, []);
  const panel = useRef<HTMLElement>(null);

  // Opening moves the focus into the panel, to the message box.
  useEffect(() => {
    if (open) panel.current?.querySelector<HTMLTextAreaElement>('textarea.chat-input')?.focus();
  }, [open, sessionId]);

  const choose = (next: string | undefined) => {
    setSessionId(next);
    onSession?.(next);
  };

  return (
    <aside
      id={id}
      ref={panel}
      className="assistant-panel"
      hidden={!open}
      aria-labelledby={heading}
      data-testid="assistant-panel"
      onKeyDown={(e) => {
        if (e.key !== 'Escape' || e.defaultPrevented) return;
        e.preventDefault();
        onClose();
      }}
    >
      <header className="assistant-head">
        <h2 id={heading}>{t('assistant.title')}</h2>
        {sessionId ? (
          <button type="button" className="link" onClick={() => choose(undefined)}>
            {t('assistant.restart')}
          </button>
        ) : null}
        <button type="button" className="assistant-close" onClick={onClose} title="Esc">
          <span aria-hidden="true">▾</span>
          <span className="visually-hidden">{t('assistant.collapse')}</span>
        </button>
      </header>
      {sessionId ? (
        <Conversation
          key={sessionId}
          sessionId={sessionId}
          takeFirst={takeFirst}
          docked
          flow={flow}
          onEvent={onEvent}
        />
      ) : (
        <NewChat
          docked
          title={t('assistant.sessionTitle', { name: flowName })}
          intro={t('assistant.intro')}
          onCreated={(session, content) => {
            first.current = content;
            choose(session.id);
          }}
        />
      )}
    </aside>
  );
}
