import { Recurrence } from '@switchyard/contracts';
import {
  countBetween,
  expiryOf,
  inZone,
  isKnownZone,
  nextAfter,
  upcoming,
  type ScheduleRule,
} from './calendar';

const rule = (timeZone: string, recurrence: Partial<Recurrence>, anchor = '2026-01-01T00:00:00Z') => ({
  timeZone,
  recurrence: Recurrence.parse(recurrence),
  anchor: new Date(anchor),
});
const next = (r: ScheduleRule, from: string, n = 5) =>
  upcoming(r, new Date(from), n).map((d) => inZone(d, r.timeZone));

describe('schedule calendar: daylight saving', () => {
  it('Europe/Berlin spring forward: 02:30 does not exist on 29 March and runs at 03:30 (shifted by the gap)', () => {
    expect(next(rule('Europe/Berlin', { type: 'daily', time: '02:30' }), '2026-03-27T12:00:00Z', 3)).toEqual([
      '2026-03-28T02:30:00+01:00',
      '2026-03-29T03:30:00+02:00',
      '2026-03-30T02:30:00+02:00',
    ]);
  });

  it('Europe/Berlin fall back: 02:30 happens twice on 25 October and runs once, at the earlier offset', () => {
    expect(next(rule('Europe/Berlin', { type: 'daily', time: '02:30' }), '2026-10-24T12:00:00Z', 3)).toEqual([
      '2026-10-25T02:30:00+02:00',
      '2026-10-26T02:30:00+01:00',
      '2026-10-27T02:30:00+01:00',
    ]);
    // Asked from between the two 02:30s: the repeat is not a second occurrence.
    expect(next(rule('Europe/Berlin', { type: 'daily', time: '02:30' }), '2026-10-25T00:45:00Z', 1)).toEqual([
      '2026-10-26T02:30:00+01:00',
    ]);
  });

  it('America/New_York: 02:30 on the spring-forward day runs at 03:30; 01:30 on the fall-back day runs once, in EDT', () => {
    expect(
      next(rule('America/New_York', { type: 'daily', time: '02:30' }), '2026-03-07T12:00:00Z', 2),
    ).toEqual(['2026-03-08T03:30:00-04:00', '2026-03-09T02:30:00-04:00']);
    expect(
      next(rule('America/New_York', { type: 'daily', time: '01:30' }), '2026-10-31T12:00:00Z', 2),
    ).toEqual(['2026-11-01T01:30:00-04:00', '2026-11-02T01:30:00-05:00']);
  });

  it('Australia/Lord_Howe (a 30-minute shift): 02:15 moves to 02:45; 01:45 repeats and runs once at +11:00', () => {
    expect(
      next(rule('Australia/Lord_Howe', { type: 'daily', time: '02:15' }), '2026-10-03T00:00:00Z', 2),
    ).toEqual(['2026-10-04T02:45:00+11:00', '2026-10-05T02:15:00+11:00']);
    expect(
      next(rule('Australia/Lord_Howe', { type: 'daily', time: '01:45' }), '2026-04-03T12:00:00Z', 3),
    ).toEqual(['2026-04-04T01:45:00+11:00', '2026-04-05T01:45:00+11:00', '2026-04-06T01:45:00+10:30']);
  });

  it('keeps the local clock time across a change: a 09:00 Berlin schedule stays 09:00, its UTC hour moves', () => {
    const r = rule('Europe/Berlin', { type: 'daily', time: '09:00' });
    const utc = upcoming(r, new Date('2026-03-28T12:00:00Z'), 2).map((d) => d.toISOString());
    expect(utc).toEqual(['2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    expect(upcoming(r, new Date('2026-03-27T12:00:00Z'), 1)[0]?.toISOString()).toBe(
      '2026-03-28T08:00:00.000Z',
    );
  });
});

describe('schedule calendar: months and weeks', () => {
  it('monthly on the 31st falls on the last day of shorter months, in a common year and a leap year', () => {
    const r31 = rule('UTC', { type: 'monthly', dayOfMonth: 31, time: '06:00' });
    expect(next(r31, '2027-01-15T00:00:00Z', 4)).toEqual([
      '2027-01-31T06:00:00Z',
      '2027-02-28T06:00:00Z',
      '2027-03-31T06:00:00Z',
      '2027-04-30T06:00:00Z',
    ]);
    expect(next(r31, '2028-02-01T00:00:00Z', 1)).toEqual(['2028-02-29T06:00:00Z']);
    expect(
      next(rule('UTC', { type: 'monthly', dayOfMonth: 29, time: '06:00' }), '2027-02-01T00:00:00Z', 2),
    ).toEqual(['2027-02-28T06:00:00Z', '2027-03-29T06:00:00Z']);
  });

  it('"last" is the last day of every month', () => {
    expect(
      next(
        rule('Europe/Berlin', { type: 'monthly', dayOfMonth: 'last', time: '23:30' }),
        '2028-01-31T23:00:00Z',
        3,
      ),
    ).toEqual(['2028-02-29T23:30:00+01:00', '2028-03-31T23:30:00+02:00', '2028-04-30T23:30:00+02:00']);
  });

  it('weekly on several weekdays (Monday = 1)', () => {
    expect(
      next(
        rule('Europe/Berlin', { type: 'weekly', weekdays: [5, 1, 3], time: '09:00' }),
        '2026-06-01T10:00:00+02:00',
      ),
    ).toEqual([
      '2026-06-03T09:00:00+02:00',
      '2026-06-05T09:00:00+02:00',
      '2026-06-08T09:00:00+02:00',
      '2026-06-10T09:00:00+02:00',
      '2026-06-12T09:00:00+02:00',
    ]);
    expect(
      next(rule('UTC', { type: 'weekly', weekdays: [7], time: '00:00' }), '2026-06-06T23:59:00Z', 1),
    ).toEqual(['2026-06-07T00:00:00Z']);
  });

  it('defaults to daily at 09:00', () => {
    expect(next(rule('Asia/Tokyo', {}), '2026-05-31T20:00:00Z', 1)).toEqual(['2026-06-01T09:00:00+09:00']);
  });
});

describe('schedule calendar: intervals, one-shots, counting', () => {
  const anchor = '2026-05-01T10:00:00Z';

  it('keeps interval boundaries from the anchor, whenever it is asked, and ends after 7 days', () => {
    const r = rule('UTC', { type: 'interval', everySeconds: 3600 }, anchor);
    expect(nextAfter(r, new Date('2026-05-01T11:59:59.999Z'))?.toISOString()).toBe(
      '2026-05-01T12:00:00.000Z',
    );
    expect(nextAfter(r, new Date('2026-05-01T12:00:00Z'))?.toISOString()).toBe('2026-05-01T13:00:00.000Z');
    expect(nextAfter(r, new Date('2026-04-01T00:00:00Z'))?.toISOString()).toBe('2026-05-01T11:00:00.000Z');
    expect(expiryOf(r)?.toISOString()).toBe('2026-05-08T10:00:00.000Z');
    expect(nextAfter(r, new Date('2026-05-08T09:30:00Z'))?.toISOString()).toBe('2026-05-08T10:00:00.000Z');
    expect(nextAfter(r, new Date('2026-05-08T10:00:00Z'))).toBeNull();
    expect(expiryOf(rule('UTC', { type: 'daily' }))).toBeNull();
  });

  it('fires a one-shot once, its delay after the anchor', () => {
    const r = rule('UTC', { type: 'once', delaySeconds: 90 }, anchor);
    expect(upcoming(r, new Date(anchor), 5).map((d) => d.toISOString())).toEqual([
      '2026-05-01T10:01:30.000Z',
    ]);
    expect(nextAfter(r, new Date('2026-05-01T10:01:30Z'))).toBeNull();
  });

  it('counts the occurrences in a window: the overdue ones a recovery coalesces', () => {
    const r = rule('UTC', { type: 'interval', everySeconds: 60 }, anchor);
    expect(countBetween(r, new Date('2026-05-01T10:01:00Z'), new Date('2026-05-01T10:05:30Z'))).toBe(4);
    expect(countBetween(r, new Date('2026-05-01T10:01:00Z'), new Date('2026-05-01T10:01:00Z'))).toBe(0);
    expect(countBetween(r, new Date('2026-05-01T10:00:00Z'), new Date('2027-01-01T00:00:00Z'))).toBe(
      7 * 24 * 60,
    );
    const daily = rule('Europe/Berlin', { type: 'daily', time: '02:30' });
    expect(countBetween(daily, new Date('2026-03-27T12:00:00Z'), new Date('2026-04-01T12:00:00Z'))).toBe(5);
    expect(countBetween(daily, new Date('2026-10-24T12:00:00Z'), new Date('2026-10-26T12:00:00Z'))).toBe(2);
  });

  it('knows which zones exist', () => {
    expect(isKnownZone('Australia/Lord_Howe')).toBe(true);
    expect(isKnownZone('Mars/Olympus_Mons')).toBe(false);
  });
});
