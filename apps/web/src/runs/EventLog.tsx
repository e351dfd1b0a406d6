import { memo, useState } from 'react';
import type { RunEvent } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';

const SHOWN = 300;

function line(e: RunEvent): string {
  switch (e.type) {
    case 'plan_token':
      return `+${e.data.text.length} chars`;
    case 'step_start':
    case 'step_complete':
    case 'step_retry':
    case 'step_approval_requested':
      return `${e.data.stepId} (${e.data.tool})`;
    case 'step_failed':
      return `${e.data.stepId}: ${e.data.cancelled ? 'cancelled' : `${e.data.code} ${e.data.error}`}`;
    case 'step_approved':
      return e.data.stepId;
    case 'step_input_requested':
      return `${e.data.stepId}: ${e.data.server} asks “${e.data.message}”`;
    case 'step_input_answered':
      // Who settled it and why; what was answered stays in the event (and the step's result).
      return `${e.data.stepId}: ${e.data.action} (${e.data.by}${e.data.reason ? `: ${e.data.reason}` : ''})`;
    case 'memory_injected':
      // What of the owner's memory the planning prompt carried, in full: this is where a person sees it.
      return e.data.memories.map((m) => `“${m.text}”`).join('; ');
    case 'error':
      return `${e.data.code}: ${e.data.message}`;
    case 'complete':
      return e.data.summary;
    case 'cancelled':
    case 'interrupted':
    case 'cancel_requested':
      return e.data.message;
    default:
      return '';
  }
}

/** The run's audit log as it streams, newest last; token chunks fold into one line each. */
export const EventLog = memo(function EventLog({ events }: { events: readonly RunEvent[] }) {
  const { t } = useI18n();
  const [all, setAll] = useState(false);
  const shown = all ? events : events.slice(-SHOWN);
  return (
    <div className="card">
      <h2>
        {t('run.log')} <span className="sub">({events.length})</span>
      </h2>
      {events.length > SHOWN && !all ? (
        <button type="button" className="link" onClick={() => setAll(true)}>
          {t('common.more')}
        </button>
      ) : null}
      <ol className="event-log" data-testid="event-log" aria-live="off">
        {shown.map((e) => (
          <EventLine key={e.seq} event={e} />
        ))}
      </ol>
    </div>
  );
});

/** One line; an event never changes, so a line renders once however long the run streams. */
const EventLine = memo(function EventLine({ event: e }: { event: RunEvent }) {
  return (
    <li data-seq={e.seq} data-type={e.type}>
      <span className="seq">#{e.seq}</span> <span className="type">{e.type}</span> <span>{line(e)}</span>
    </li>
  );
});
