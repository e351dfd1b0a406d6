import { memo, useId, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import type { ChatToolCallStatus } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call as callRoute } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { Badge, ErrorNote, formatDuration, JsonView } from '../ui/bits';
import type { CallView } from './model';

const CALL_TONE: Record<ChatToolCallStatus, string> = {
  pending: 'muted',
  awaiting_approval: 'wait',
  running: 'run',
  completed: 'ok',
  failed: 'bad',
  denied: 'bad',
  cancelled: 'muted',
};

/**
 * One tool call, folded to a row (tool, status, effect, time); opened it shows the arguments the
 * call ran with and its result or error, long JSON folded behind "show all".
 */
export const ToolCallRow = memo(function ToolCallRow({ call }: { call: CallView }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const body = useId();
  const status = t(`chat.call.${call.status}`);
  return (
    <li className={`chat-call status-${call.status}`} data-call-id={call.callId} data-status={call.status}>
      <button
        type="button"
        className="chat-call-head"
        aria-expanded={open}
        aria-controls={body}
        aria-label={t('chat.call.toggle', { tool: call.tool, status })}
        onClick={() => setOpen(!open)}
      >
        <span className="chevron" aria-hidden="true">
          {open ? '▾' : '▸'}
        </span>
        <code>{call.tool}</code>
        <Badge tone={CALL_TONE[call.status]}>{status}</Badge>
        {call.effect ? <span className={`badge effect-${call.effect}`}>{call.effect}</span> : null}
        {call.status === 'running' ? <span className="spinner" aria-hidden="true" /> : null}
        {call.durationMs !== undefined ? (
          <span className="sub">{formatDuration(call.durationMs)}</span>
        ) : null}
      </button>
      {open ? (
        <div className="chat-call-body" id={body}>
          <h3>{t('chat.call.arguments')}</h3>
          <JsonView value={call.arguments} label={t('chat.call.arguments')} />
          {call.editedArguments ? (
            <>
              <h3>{t('chat.call.edited')}</h3>
              <JsonView value={call.editedArguments} label={t('chat.call.edited')} />
            </>
          ) : null}
          {call.error ? (
            <>
              <h3>{call.status === 'denied' ? t('chat.call.deniedReason') : t('chat.call.error')}</h3>
              <p className="error-text" data-testid="call-error">
                <code className="code-tag">{call.error.code}</code> {call.error.message}
              </p>
            </>
          ) : null}
          {call.result !== undefined ? (
            <>
              <h3>{t('chat.call.result')}</h3>
              <JsonView value={call.result} label={t('chat.call.result')} />
            </>
          ) : null}
        </div>
      ) : null}
    </li>
  );
});

/** The arguments as typed: a JSON object, or what is wrong with the text. */
function argumentsOf(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, reason: '' };
  return { ok: true, value: value as Record<string, unknown> };
}

/**
 * The confirmation card of a call the permission gate paused: the tool, its effect and the gate's
 * reason; the arguments editable as JSON (checked as you type: nothing invalid is sent); approve, or
 * deny with an optional reason the model is told.
 */
export function ApprovalCard({
  sessionId,
  call,
  onDecided,
}: {
  sessionId: string;
  call: CallView;
  onDecided: (approved: boolean) => void;
}) {
  const { t } = useI18n();
  const id = useId();
  const original = JSON.stringify(call.arguments, null, 2);
  const [text, setText] = useState(original);
  const [reason, setReason] = useState('');
  const parsed = argumentsOf(text);
  const edited = text !== original;
  const approve = useMutation({
    mutationFn: () =>
      callRoute(Routes.chatApprove, {
        params: { id: sessionId, callId: call.callId },
        body: edited && parsed.ok ? { arguments: parsed.value } : {},
      }),
    onSuccess: () => onDecided(true),
  });
  const deny = useMutation({
    mutationFn: () =>
      callRoute(Routes.chatDeny, {
        params: { id: sessionId, callId: call.callId },
        body: reason.trim() ? { reason: reason.trim() } : {},
      }),
    onSuccess: () => onDecided(false),
  });
  const busy = approve.isPending || deny.isPending;
  return (
    <section
      className="card gate chat-card"
      data-testid="approval-card"
      data-call-id={call.callId}
      aria-labelledby={`${id}-title`}
    >
      <h2 id={`${id}-title`}>
        {t('chat.card.title', { tool: call.tool })}{' '}
        {call.effect ? <span className={`badge effect-${call.effect}`}>{call.effect}</span> : null}
      </h2>
      {call.reason ? (
        <>
          <h3>{t('chat.card.reason')}</h3>
          <p data-testid="approval-reason">
            {call.reason}
            {call.decision?.rule ? <code className="code-tag">{call.decision.rule}</code> : null}
            {call.decision?.hook ? <code className="code-tag">{call.decision.hook}</code> : null}
            {call.decision?.floor ? <code className="code-tag">{call.decision.floor}</code> : null}
          </p>
        </>
      ) : null}
      <label htmlFor={`${id}-args`}>{t('chat.card.arguments')}</label>
      <textarea
        id={`${id}-args`}
        rows={Math.min(14, Math.max(3, text.split('\n').length))}
        value={text}
        spellCheck={false}
        aria-invalid={!parsed.ok}
        aria-describedby={parsed.ok ? undefined : `${id}-args-error`}
        onChange={(e) => setText(e.target.value)}
      />
      {parsed.ok ? null : (
        <div className="field-error" role="alert" id={`${id}-args-error`}>
          {parsed.reason ? t('chat.card.notJson', { reason: parsed.reason }) : t('chat.card.notObject')}
        </div>
      )}
      <label htmlFor={`${id}-reason`}>{t('chat.card.denyReason')}</label>
      <input
        id={`${id}-reason`}
        type="text"
        maxLength={2000}
        value={reason}
        onChange={(e) => setReason(e.target.value)}
      />
      <ErrorNote error={approve.error ?? deny.error} />
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={busy || !parsed.ok}
          onClick={() => approve.mutate()}
        >
          {edited ? t('chat.card.approveEdited') : t('chat.card.approve')}
        </button>
        <button type="button" className="danger" disabled={busy} onClick={() => deny.mutate()}>
          {t('chat.card.deny')}
        </button>
        {edited ? (
          <button type="button" className="link" onClick={() => setText(original)}>
            {t('chat.card.reset')}
          </button>
        ) : null}
      </div>
    </section>
  );
}
