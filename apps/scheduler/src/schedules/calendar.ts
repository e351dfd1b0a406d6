import { DateTime, IANAZone } from 'luxon';
import { INTERVAL_SCHEDULE_LIFETIME_MS, type Recurrence } from '@switchyard/contracts';

/**
 * When a schedule's occurrences fall. All calendar arithmetic of the scheduler is here, on luxon's
 * zone data, so it can be swapped as one piece:
 *
 * - calendar rules (daily, weekly, monthly) name a local clock time in an IANA zone; a clock time in
 *   a daylight-saving gap moves forward by the gap, a repeated one runs once, at the earlier offset;
 * - monthly 29–31 fall on the last day of shorter months;
 * - interval rules keep their boundaries (anchor + k × every), whatever time a fire really ran;
 * - a one-shot falls once, `delaySeconds` after the anchor.
 */
export interface ScheduleRule {
  readonly recurrence: Recurrence;
  readonly timeZone: string;
  /** Creation time: intervals count from it, a one-shot's delay starts at it. */
  readonly anchor: Date;
}

export function isKnownZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

/** Interval schedules end 7 days after their anchor; calendar ones run until deleted. */
export function expiryOf(rule: Pick<ScheduleRule, 'recurrence' | 'anchor'>): Date | null {
  return rule.recurrence.type === 'interval'
    ? new Date(rule.anchor.getTime() + INTERVAL_SCHEDULE_LIFETIME_MS)
    : null;
}

/**
 * The instant of a local wall time in `zone`: in a gap, shifted forward by the gap (luxon's rule);
 * when the wall time happens twice, the earlier instant (luxon alone may pick either).
 */
export function wallTime(
  zone: string,
  w: { year: number; month: number; day: number; hour: number; minute: number },
): DateTime {
  const shifted = DateTime.fromObject(w, { zone });
  const z = IANAZone.create(zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute);
  const offsets = new Set(
    [-36, 0, 36].map((h) => z.offset(shifted.toMillis() + h * 3600_000)).concat(shifted.offset),
  );
  let earliest: number | undefined;
  for (const offset of offsets) {
    const instant = asUtc - offset * 60_000;
    const back = DateTime.fromMillis(instant, { zone });
    const same =
      back.year === w.year &&
      back.month === w.month &&
      back.day === w.day &&
      back.hour === w.hour &&
      back.minute === w.minute;
    if (same && (earliest === undefined || instant < earliest)) earliest = instant;
  }
  return earliest === undefined ? shifted : DateTime.fromMillis(earliest, { zone });
}

function clockOf(r: Recurrence): { hour: number; minute: number } {
  const [h, m] = r.time.split(':').map(Number);
  return { hour: h ?? 0, minute: m ?? 0 };
}

/** The calendar occurrence on one local date, or undefined when the rule skips that date. */
function onDate(rule: ScheduleRule, date: DateTime): DateTime | undefined {
  const r = rule.recurrence;
  if (r.type === 'weekly' && !(r.weekdays ?? []).includes(date.weekday)) return undefined;
  if (r.type === 'monthly') {
    const last = date.daysInMonth ?? 28;
    const wanted =
      r.dayOfMonth === 'last' || r.dayOfMonth === undefined ? last : Math.min(r.dayOfMonth, last);
    if (date.day !== wanted) return undefined;
  }
  return wallTime(rule.timeZone, { year: date.year, month: date.month, day: date.day, ...clockOf(r) });
}

/** The first occurrence strictly after `t`, or null when there is none (a one-shot that fell). */
export function nextAfter(rule: ScheduleRule, t: Date): Date | null {
  const r = rule.recurrence;
  const anchor = rule.anchor.getTime();
  if (r.type === 'once') {
    const at = anchor + (r.delaySeconds ?? 0) * 1000;
    return at > t.getTime() ? new Date(at) : null;
  }
  if (r.type === 'interval') {
    const every = (r.everySeconds ?? 60) * 1000;
    const k = Math.max(1, Math.floor((t.getTime() - anchor) / every) + 1);
    const at = anchor + k * every;
    const expiry = expiryOf(rule);
    return expiry && at > expiry.getTime() ? null : new Date(at);
  }
  // Calendar: walk local dates from the day before `t` (an occurrence late on the previous local
  // date may still be after `t` in another offset) for at most a little over a year.
  let date = DateTime.fromJSDate(t, { zone: rule.timeZone }).startOf('day').minus({ days: 1 });
  for (let i = 0; i < 400; i++, date = date.plus({ days: 1 })) {
    const at = onDate(rule, date);
    if (at && at.toMillis() > t.getTime()) return at.toJSDate();
  }
  return null;
}

/** The next `n` occurrences after `t`. */
export function upcoming(rule: ScheduleRule, t: Date, n: number): Date[] {
  const out: Date[] = [];
  let at: Date | null = t;
  while (out.length < n && at) {
    at = nextAfter(rule, at);
    if (at) out.push(at);
  }
  return out;
}

/**
 * How many occurrences fall in (after, upTo], counted up to `cap`: the overdue ones a recovery
 * coalesces. Intervals are counted by arithmetic; calendars by walking (bounded by the cap).
 */
export function countBetween(rule: ScheduleRule, after: Date, upTo: Date, cap = 100_000): number {
  if (upTo.getTime() <= after.getTime()) return 0;
  const r = rule.recurrence;
  if (r.type === 'interval') {
    const first = nextAfter(rule, after);
    if (!first || first.getTime() > upTo.getTime()) return 0;
    const every = (r.everySeconds ?? 60) * 1000;
    const expiry = expiryOf(rule);
    const end = Math.min(upTo.getTime(), expiry ? expiry.getTime() : Infinity);
    return Math.min(cap, Math.floor((end - first.getTime()) / every) + 1);
  }
  let n = 0;
  let at: Date | null = after;
  while (n < cap) {
    at = nextAfter(rule, at);
    if (!at || at.getTime() > upTo.getTime()) break;
    n += 1;
  }
  return n;
}

/** ISO-8601 with the schedule zone's offset, as the API shows fire times. */
export function inZone(at: Date, zone: string): string {
  return DateTime.fromJSDate(at, { zone }).toISO({ suppressMilliseconds: true }) ?? at.toISOString();
}
