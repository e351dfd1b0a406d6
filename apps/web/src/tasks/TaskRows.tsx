import { useState } from 'react';
import { Link } from 'react-router';
import type { Task, TaskState } from '@switchyard/contracts';
import { useI18n } from '../i18n/i18n';
import { Badge, JsonView, formatDuration, formatTime } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';

export const STATE_TONE: Record<TaskState, string> = {
  queued: 'wait',
  running: 'run',
  completed: 'ok',
  failed: 'bad',
  cancelled: 'muted',
  interrupted: 'warn',
};
const PRIORITY_TONE = { interactive: 'info', normal: 'muted', batch: 'muted' } as const;

/**
 * The live figures of a task: the server's numbers as of the fetch, advanced by the time since
 * (no dependence on the browser's clock agreeing with the server's).
 */
export function liveFigures(task: Task, fetchedAt: number, now: number) {
  const since = Math.max(0, now - fetchedAt);
  const wait = task.queued && task.state === 'queued' ? task.queueWaitMs + since : task.queueWaitMs;
  const duration = task.state === 'running' ? (task.runDurationMs ?? 0) + since : task.runDurationMs;
  return { wait, duration };
}

export function TaskRow({
  task,
  fetchedAt,
  now,
  canKill,
  onKill,
  workflow,
}: {
  task: Task;
  workflow: string;
  fetchedAt: number;
  now: number;
  canKill: boolean;
  onKill: () => Promise<unknown>;
}) {
  const { t, lang } = useI18n();
  const [showOutput, setShowOutput] = useState(false);
  const { wait, duration } = liveFigures(task, fetchedAt, now);
  const active = task.state === 'queued' || task.state === 'running';
  const hasOutput = task.output !== null && task.output !== undefined;
  return (
    <>
      <tr data-task-id={task.id} data-state={task.state}>
        <td>
          <code title={task.id}>{task.id.slice(0, 8)}</code>
          <div className="sub">
            {task.runId ? <Link to={`/runs/${task.runId}`}>{t('tasks.openRun')}</Link> : null}{' '}
            <span title={task.workflowId}>{workflow}</span>
          </div>
          <div className="narrow-only sub">
            <Badge tone={STATE_TONE[task.state]}>{t(`tasks.state.${task.state}`)}</Badge> {t('tasks.wait')}{' '}
            {formatDuration(wait)}
            {duration === null ? '' : ` · ${t('tasks.duration')} ${formatDuration(duration)}`}
          </div>
          {task.error ? <div className="sub error-text">{task.error}</div> : null}
        </td>
        <td>
          <Badge tone={PRIORITY_TONE[task.priority]}>{t(`tasks.class.${task.priority}`)}</Badge>
        </td>
        <td>
          <Badge tone={STATE_TONE[task.state]}>{t(`tasks.state.${task.state}`)}</Badge>
        </td>
        <td data-testid="queue-wait">{formatDuration(wait)}</td>
        <td data-testid="duration">{duration === null ? '—' : formatDuration(duration)}</td>
        <td>{formatTime(task.createdAt, lang)}</td>
        <td>
          <div className="row-actions">
            {hasOutput ? (
              <button type="button" aria-expanded={showOutput} onClick={() => setShowOutput(!showOutput)}>
                {showOutput ? t('tasks.hideOutput') : t('tasks.output')}
              </button>
            ) : null}
            {active && canKill ? (
              <ConfirmButton
                label={t('tasks.kill')}
                title={t('tasks.kill.title')}
                body={<p>{task.queued ? t('tasks.kill.queued') : t('tasks.kill.running')}</p>}
                confirmLabel={t('tasks.kill')}
                onConfirm={onKill}
              />
            ) : null}
          </div>
        </td>
      </tr>
      {showOutput ? (
        <tr className="detail-row">
          <td colSpan={7}>
            {task.outputTruncated ? <div className="notice">{t('tasks.truncated')}</div> : null}
            <JsonView value={task.output} label={t('tasks.output')} />
          </td>
        </tr>
      ) : null}
    </>
  );
}
