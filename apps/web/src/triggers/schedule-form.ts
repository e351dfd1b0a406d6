import type { PermissionMode, Recurrence } from '@switchyard/contracts';
import type { Lang } from '../i18n/i18n';

export type RecurrenceType = Recurrence['type'];

/** The schedule form as typed: strings where the person types, turned into a ScheduleBody on send. */
export interface ScheduleForm {
  workflowId: string;
  type: RecurrenceType;
  time: string;
  weekdays: number[];
  dayOfMonth: string;
  everyMinutes: string;
  delayMinutes: string;
  timeZone: string;
  permissionMode: PermissionMode;
  inputs: string;
  fireNow: boolean;
}

export function deviceZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

export function emptyScheduleForm(): ScheduleForm {
  return {
    workflowId: '',
    type: 'daily',
    time: '09:00',
    weekdays: [1],
    dayOfMonth: '1',
    everyMinutes: '60',
    delayMinutes: '10',
    timeZone: deviceZone(),
    permissionMode: 'ask',
    inputs: '{}',
    fireNow: false,
  };
}

function minutes(text: string): number | undefined {
  if (!text.trim()) return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? Math.round(n * 60) : undefined;
}

/** The recurrence the form describes; the server checks it (and names the field when it is wrong). */
export function recurrenceOf(f: ScheduleForm): Record<string, unknown> {
  switch (f.type) {
    case 'daily':
      return { type: 'daily', time: f.time };
    case 'weekly':
      return { type: 'weekly', time: f.time, weekdays: [...f.weekdays].sort() };
    case 'monthly':
      return {
        type: 'monthly',
        time: f.time,
        dayOfMonth: f.dayOfMonth === 'last' ? 'last' : Number(f.dayOfMonth),
      };
    case 'interval':
      return { type: 'interval', everySeconds: minutes(f.everyMinutes) };
    case 'once':
      return { type: 'once', delaySeconds: minutes(f.delayMinutes) };
  }
}

/** Human words for a stored recurrence, e.g. "weekly on Mon, Fri at 09:00". */
export function describeRecurrence(r: Recurrence, lang: Lang): string {
  const zh = lang === 'zh';
  switch (r.type) {
    case 'daily':
      return zh ? `每天 ${r.time}` : `daily at ${r.time}`;
    case 'weekly': {
      const days = (r.weekdays ?? []).map((d) => weekdayName(d, lang)).join(zh ? '、' : ', ');
      return zh ? `每周 ${days} ${r.time}` : `weekly on ${days} at ${r.time}`;
    }
    case 'monthly': {
      const day =
        r.dayOfMonth === 'last'
          ? zh
            ? '最后一天'
            : 'the last day'
          : zh
            ? `${r.dayOfMonth} 日`
            : `day ${r.dayOfMonth}`;
      return zh ? `每月${day} ${r.time}` : `monthly on ${day} at ${r.time}`;
    }
    case 'interval': {
      const m = Math.round((r.everySeconds ?? 0) / 60);
      return zh ? `每 ${m} 分钟` : `every ${m} min`;
    }
    case 'once': {
      const m = Math.round((r.delaySeconds ?? 0) / 60);
      return zh ? `${m} 分钟后一次` : `once, ${m} min after creation`;
    }
  }
}

/** ISO weekday (Monday = 1) in the UI's language. */
export function weekdayName(isoDay: number, lang: Lang): string {
  // 2024-01-01 was a Monday.
  return new Date(Date.UTC(2024, 0, isoDay)).toLocaleDateString(lang === 'zh' ? 'zh-CN' : 'en-GB', {
    weekday: 'short',
    timeZone: 'UTC',
  });
}

/** A fire time shown in the schedule's own zone; an unknown zone falls back to the ISO text. */
export function formatFire(iso: string, zone: string, lang: Lang): string {
  try {
    return new Date(iso).toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-GB', {
      timeZone: zone,
      weekday: 'short',
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
    });
  } catch {
    return iso;
  }
}

export function timeZones(): string[] {
  try {
    return Intl.supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
}
