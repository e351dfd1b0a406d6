import { useId, useState, type KeyboardEvent } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { ChatSession, PermissionMode } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { PermissionModeSelect } from '../runs/PermissionModeSelect';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { useAgents } from './agents';
import { Composer } from './Conversation';

/**
 * A chat not started yet: the agent and the permission mode it runs under, and its first message.
 * Sending creates the session; the page then opens it and sends the message there. Docked (the flow
 * builder's assistant), the host draws the heading and names the session (`title`).
 */
export function NewChat({
  onCreated,
  docked = false,
  title,
  intro,
}: {
  onCreated: (session: ChatSession, firstMessage: string) => void;
  docked?: boolean;
  title?: string;
  intro?: string;
}) {
  const { t } = useI18n();
  const agentField = useId();
  const { agents, allowed, error: agentsError } = useAgents();
  const [agentId, setAgentId] = useState<number | undefined>();
  const [mode, setMode] = useState<PermissionMode>('ask');
  const [text, setText] = useState('');
  const create = useMutation({
    mutationFn: () =>
      call(Routes.chatSessionCreate, {
        body: {
          permissionMode: mode,
          ...(agentId !== undefined ? { agentId } : {}),
          ...(title ? { title: title.slice(0, 200) } : {}),
        },
      }),
    onSuccess: (session) => onCreated(session, text.trim()),
  });
  const submit = () => {
    if (!text.trim() || create.isPending) return;
    create.mutate();
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
    e.preventDefault();
    submit();
  };
  return (
    <div className="chat-main chat-new">
      {docked ? null : (
        <header className="chat-head">
          <h1>{t('chat.start.title')}</h1>
        </header>
      )}
      <div className="chat-scroll">
        <p className="sub">{intro ?? t('chat.start.intro')}</p>
        <div className="chat-pickers">
          {allowed ? (
            <div>
              <label htmlFor={agentField}>{t('chat.agent')}</label>
              <select
                id={agentField}
                value={agentId ?? ''}
                aria-describedby={`${agentField}-hint`}
                onChange={(e) => setAgentId(e.target.value ? Number(e.target.value) : undefined)}
              >
                <option value="">{t('chat.agent.none')}</option>
                {agents.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name}
                  </option>
                ))}
              </select>
              <div className="hint" id={`${agentField}-hint`}>
                {t('chat.agent.hint')}
              </div>
              <FieldErrors error={create.error} path="agentId" />
              <ErrorNote error={agentsError} />
            </div>
          ) : null}
          <PermissionModeSelect value={mode} onChange={setMode} />
        </div>
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
          <button type="submit" className="primary" disabled={create.isPending || !text.trim()}>
            {t('chat.send')}
          </button>
        </div>
        <ErrorNote error={create.error} />
      </form>
    </div>
  );
}
