/**
 * The scheduler's sense of now. Schedules, claims and signature windows read it, never `Date.now()`,
 * so calendars, daylight-saving days and downtime are tested by moving a clock instead of waiting.
 */
export interface Clock {
  now(): Date;
}

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = { now: () => new Date() };
