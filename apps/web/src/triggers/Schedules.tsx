import { useState } from 'react';
import { Link } from 'react-router';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import type { Schedule, ScheduleStatus } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ListTable } from '../ui/ListTable';
import { Badge, EmptyState, formatTime, PageHeader } from '../ui/bits';
import { ConfirmButton } from '../ui/Confirm';
import { ScheduleDialog } from './ScheduleDialog';
import { describeRecurrence, formatFire } from './schedule-form';
import { useWorkflows, workflowName } from './workflows';

const STATUS_TONE: Record<ScheduleStatus, string> = {
  active: 'ok',
  completed: 'muted',
  expired: 'warn',
  cancelled: 'bad',
};
export const schedulesKey = ['tasks', 'schedules'] as const;

/** The owner's schedules: when they fire next, what they missed, why the last fire failed. */
export function Schedules() {
  const { t, lang } = useI18n();
  const { can } = useAuth();
  const queries = useQueryClient();
  const [creating, setCreating] = useState(false);
  const workflows = useWorkflows();
  const list = useQuery({
    queryKey: schedulesKey,
    queryFn: ({ signal }) => call(Routes.scheduleList, { signal }),
    refetchInterval: 15_000,
  });
  const items = list.data?.items ?? [];
  const canEdit = can('agent:task:submit');
  const newButton = canEdit ? (
    <button type="button" className="primary" onClick={() => setCreating(true)}>
      {t('triggers.schedule.new')}
    </button>
  ) : null;

  return (
    <section aria-label={t('triggers.schedules')}>
      <PageHeader level={2} title={t('triggers.schedules')} actions={newButton} />
      <ListTable
        label={t('triggers.schedules')}
        query={list}
        count={items.length}
        empty={<EmptyState action={newButton}>{t('triggers.schedules.empty')}</EmptyState>}
        columns={[
          t('triggers.workflow'),
          t('triggers.schedule.when'),
          t('triggers.nextFires'),
          t('triggers.schedule.counts'),
        ]}
        actions
      >
        {items.map((s) => (
          <ScheduleRow
            key={s.id}
            schedule={s}
            name={workflowName(workflows.data, s.workflowId)}
            canEdit={canEdit}
            lang={lang}
            onDelete={async () => {
              await call(Routes.scheduleDelete, { params: { id: s.id } });
              await queries.invalidateQueries({ queryKey: schedulesKey });
            }}
          />
        ))}
      </ListTable>
      {creating ? (
        <ScheduleDialog
          workflows={workflows.data ?? []}
          onClose={() => setCreating(false)}
          onCreated={() => {
            setCreating(false);
            void queries.invalidateQueries({ queryKey: schedulesKey });
          }}
        />
      ) : null}
    </section>
  );
}

function ScheduleRow({
  schedule: s,
  name,
  canEdit,
  lang,
  onDelete,
}: {
  schedule: Schedule;
  name: string;
  canEdit: boolean;
  lang: 'en' | 'zh';
  onDelete: () => Promise<unknown>;
}) {
  const { t } = useI18n();
  const [allFires, setAllFires] = useState(false);
  const zone = s.recurrence.type === 'interval' || s.recurrence.type === 'once' ? 'UTC' : s.timeZone;
  const fires = allFires ? s.nextFires : s.nextFires.slice(0, 1);
  return (
    <tr data-schedule-id={s.id}>
      <td>
        <strong>{name}</strong>
        <div className="sub">
          <Badge tone={STATUS_TONE[s.status]}>{t(`triggers.status.${s.status}`)}</Badge> {s.permissionMode}
        </div>
      </td>
      <td>
        {describeRecurrence(s.recurrence, lang)}
        <div className="sub">{s.timeZone}</div>
        {s.expiresAt ? (
          <div className="sub">{t('triggers.expires', { at: formatTime(s.expiresAt, lang) })}</div>
        ) : null}
      </td>
      <td>
        {fires.length ? (
          <ol className="fires">
            {fires.map((iso) => (
              <li key={iso} title={iso}>
                {formatFire(iso, zone, lang)}
              </li>
            ))}
          </ol>
        ) : (
          <span className="sub">—</span>
        )}
        {s.nextFires.length > 1 ? (
          <button
            type="button"
            className="link"
            aria-expanded={allFires}
            onClick={() => setAllFires(!allFires)}
          >
            {allFires ? t('run.fold') : t('triggers.showFires', { n: s.nextFires.length })}
          </button>
        ) : null}
      </td>
      <td>
        <div>{t('triggers.fired', { n: s.triggerCount })}</div>
        <div className={s.missedFires ? 'warn-text' : 'sub'}>
          {t('triggers.missed', { n: s.missedFires })}
        </div>
        {s.lastFiredAt ? (
          <div className="sub">{t('triggers.lastFired', { at: formatTime(s.lastFiredAt, lang) })}</div>
        ) : null}
        {s.lastTaskId ? (
          <div className="sub">
            <Link to="/tasks">{t('triggers.lastTask', { id: s.lastTaskId.slice(0, 8) })}</Link>
          </div>
        ) : null}
        {s.lastError ? (
          <div className="error-text" role="note">
            {s.lastError}
          </div>
        ) : null}
      </td>
      <td>
        {canEdit ? (
          <ConfirmButton
            label={t('common.delete')}
            title={t('triggers.schedule.deleteTitle')}
            body={<p>{t('triggers.schedule.deleteBody', { name })}</p>}
            confirmLabel={t('common.delete')}
            onConfirm={onDelete}
          />
        ) : null}
      </td>
    </tr>
  );
}
