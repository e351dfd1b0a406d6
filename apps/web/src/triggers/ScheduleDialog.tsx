import { useMemo, useState, type FormEvent } from 'react';
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { PermissionMode, type WorkflowSummary } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { call } from '../api/client';
import { useI18n } from '../i18n/i18n';
import { ErrorNote, FieldErrors } from '../ui/bits';
import { Modal } from '../ui/Modal';
import { invalidAt, parseJsonObject, useDebounced } from '../ui/forms';
import { WorkflowPicker } from './WorkflowPicker';
import {
  emptyScheduleForm,
  formatFire,
  recurrenceOf,
  timeZones,
  weekdayName,
  type RecurrenceType,
  type ScheduleForm,
} from './schedule-form';

const TYPES: readonly RecurrenceType[] = ['daily', 'weekly', 'monthly', 'interval', 'once'];
const DAYS = [1, 2, 3, 4, 5, 6, 7];

/**
 * Create a schedule: a calendar (daily, weekly, monthly at a local time in an IANA zone) or an
 * interval (every N minutes, once after a delay). The next five fires are previewed by the server as
 * the form changes, so the preview and the real schedule come from the same code.
 */
export function ScheduleDialog({
  workflows,
  onClose,
  onCreated,
}: {
  workflows: readonly WorkflowSummary[];
  onClose: () => void;
  onCreated: () => void;
}) {
  const { t, lang } = useI18n();
  const [f, setF] = useState<ScheduleForm>(emptyScheduleForm);
  const set = <K extends keyof ScheduleForm>(k: K, v: ScheduleForm[K]) => setF((old) => ({ ...old, [k]: v }));
  const zones = useMemo(timeZones, []);
  const inputs = parseJsonObject(f.inputs);

  const previewBody = useDebounced(
    JSON.stringify({
      timeZone: f.timeZone,
      fireNow: f.type === 'once' ? false : f.fireNow,
      recurrence: recurrenceOf(f),
    }),
    300,
  );
  const preview = useQuery({
    queryKey: ['schedulePreview', previewBody],
    queryFn: ({ signal }) =>
      call(Routes.schedulePreview, { body: JSON.parse(previewBody) as unknown, signal }),
    placeholderData: keepPreviousData,
    retry: false,
    staleTime: 10_000,
  });

  const create = useMutation({
    mutationFn: () =>
      call(Routes.scheduleCreate, {
        body: {
          workflowId: f.workflowId,
          inputs: inputs.ok ? inputs.value : {},
          permissionMode: f.permissionMode,
          timeZone: f.timeZone,
          ...(f.type === 'once' ? {} : { fireNow: f.fireNow }),
          recurrence: recurrenceOf(f),
        },
      }),
    onSuccess: onCreated,
  });
  const err = create.error ?? (preview.isError ? preview.error : null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (inputs.ok) create.mutate();
  };
  const calendar = f.type === 'daily' || f.type === 'weekly' || f.type === 'monthly';

  return (
    <Modal title={t('triggers.schedule.new')} onClose={onClose} wide>
      <form onSubmit={submit} className="form stack" noValidate>
        <label htmlFor="sch-workflow">{t('triggers.workflow')}</label>
        <WorkflowPicker
          id="sch-workflow"
          value={f.workflowId}
          onChange={(v) => set('workflowId', v)}
          workflows={workflows}
        />
        <FieldErrors error={create.error} path="workflowId" />

        <fieldset className="recurrence">
          <legend>{t('triggers.schedule.when')}</legend>
          <div className="tabs" role="radiogroup" aria-label={t('triggers.schedule.type')}>
            {TYPES.map((type) => (
              <label key={type} className="check">
                <input
                  type="radio"
                  name="sch-type"
                  value={type}
                  checked={f.type === type}
                  onChange={() => set('type', type)}
                />
                {t(`triggers.type.${type}`)}
              </label>
            ))}
          </div>
          <div className="row">
            {calendar ? (
              <div>
                <label htmlFor="sch-time">{t('triggers.schedule.time')}</label>
                <input
                  id="sch-time"
                  type="time"
                  value={f.time}
                  onChange={(e) => set('time', e.target.value)}
                  aria-invalid={invalidAt(err, 'recurrence.time')}
                />
                <FieldErrors error={err} path="recurrence.time" />
              </div>
            ) : null}
            {f.type === 'monthly' ? (
              <div>
                <label htmlFor="sch-dom">{t('triggers.schedule.dayOfMonth')}</label>
                <select id="sch-dom" value={f.dayOfMonth} onChange={(e) => set('dayOfMonth', e.target.value)}>
                  {Array.from({ length: 31 }, (_, i) => String(i + 1)).map((d) => (
                    <option key={d} value={d}>
                      {d}
                    </option>
                  ))}
                  <option value="last">{t('triggers.schedule.lastDay')}</option>
                </select>
                <FieldErrors error={err} path="recurrence.dayOfMonth" />
              </div>
            ) : null}
            {f.type === 'interval' ? (
              <div>
                <label htmlFor="sch-every">{t('triggers.schedule.everyMinutes')}</label>
                <input
                  id="sch-every"
                  type="number"
                  min={1}
                  step={1}
                  value={f.everyMinutes}
                  onChange={(e) => set('everyMinutes', e.target.value)}
                />
                <div className="hint">{t('triggers.schedule.intervalHint')}</div>
                <FieldErrors error={err} path="recurrence.everySeconds" />
              </div>
            ) : null}
            {f.type === 'once' ? (
              <div>
                <label htmlFor="sch-delay">{t('triggers.schedule.delayMinutes')}</label>
                <input
                  id="sch-delay"
                  type="number"
                  min={0}
                  step={1}
                  value={f.delayMinutes}
                  onChange={(e) => set('delayMinutes', e.target.value)}
                />
                <FieldErrors error={err} path="recurrence.delaySeconds" />
              </div>
            ) : null}
            {calendar ? (
              <div>
                <label htmlFor="sch-zone">{t('triggers.schedule.zone')}</label>
                <input
                  id="sch-zone"
                  list="sch-zones"
                  value={f.timeZone}
                  onChange={(e) => set('timeZone', e.target.value)}
                />
                <datalist id="sch-zones">
                  {zones.map((z) => (
                    <option key={z} value={z} />
                  ))}
                </datalist>
                <FieldErrors error={err} path="timeZone" />
              </div>
            ) : null}
          </div>
          {f.type === 'weekly' ? (
            <div className="weekdays" role="group" aria-label={t('triggers.schedule.weekdays')}>
              {DAYS.map((d) => (
                <label key={d} className="check">
                  <input
                    type="checkbox"
                    checked={f.weekdays.includes(d)}
                    onChange={(e) =>
                      set(
                        'weekdays',
                        e.target.checked ? [...f.weekdays, d] : f.weekdays.filter((x) => x !== d),
                      )
                    }
                  />
                  {weekdayName(d, lang)}
                </label>
              ))}
              <FieldErrors error={err} path="recurrence.weekdays" />
            </div>
          ) : null}
          {f.type !== 'once' ? (
            <label className="check">
              <input type="checkbox" checked={f.fireNow} onChange={(e) => set('fireNow', e.target.checked)} />
              {t('triggers.schedule.fireNow')}
            </label>
          ) : null}
          <FieldErrors error={err} path="fireNow" />
        </fieldset>

        <div className="preview" aria-live="polite" data-testid="schedule-preview">
          <h3>{t('triggers.nextFires')}</h3>
          {preview.isError ? (
            <div className="field-error">{(preview.error as Error).message}</div>
          ) : preview.data?.nextFires.length ? (
            <ol>
              {preview.data.nextFires.map((iso) => (
                <li key={iso}>
                  {formatFire(iso, calendar ? f.timeZone : 'UTC', lang)} <span className="sub">{iso}</span>
                </li>
              ))}
            </ol>
          ) : preview.isSuccess ? (
            <div className="sub">{t('triggers.schedule.noFires')}</div>
          ) : (
            <div className="sub">{t('common.loading')}</div>
          )}
        </div>

        <div className="row">
          <div>
            <label htmlFor="sch-mode">{t('runs.start.mode')}</label>
            <select
              id="sch-mode"
              value={f.permissionMode}
              onChange={(e) => set('permissionMode', e.target.value as PermissionMode)}
            >
              {PermissionMode.options.map((m) => (
                <option key={m} value={m}>
                  {m}
                </option>
              ))}
            </select>
            <FieldErrors error={create.error} path="permissionMode" />
          </div>
        </div>
        <div className="hint">{t('triggers.modeHint')}</div>
        <label htmlFor="sch-inputs">{t('triggers.inputs')}</label>
        <textarea
          id="sch-inputs"
          rows={4}
          value={f.inputs}
          onChange={(e) => set('inputs', e.target.value)}
          aria-invalid={!inputs.ok}
        />
        {!inputs.ok ? <div className="field-error">{inputs.message}</div> : null}
        <FieldErrors error={create.error} path="inputs" />

        <ErrorNote error={create.error} />
        <div className="actions">
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
          <button
            type="submit"
            className="primary"
            disabled={!inputs.ok || !f.workflowId || create.isPending}
          >
            {t('common.create')}
          </button>
        </div>
      </form>
    </Modal>
  );
}
