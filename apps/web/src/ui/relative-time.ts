const STEPS: readonly [Intl.RelativeTimeFormatUnit, number][] = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 30],
  ['month', 12],
  ['year', Infinity],
];

/** "5 minutes ago" / "5 分钟前": how long before `now` the time `iso` was, in the largest whole unit. */
export function relativeTime(iso: string, now: number, lang: string): string {
  const format = new Intl.RelativeTimeFormat(lang === 'zh' ? 'zh-CN' : 'en', { numeric: 'auto' });
  let value = (new Date(iso).getTime() - now) / 1000;
  if (Number.isNaN(value)) return '';
  // A clock a little ahead of the server's must not say "in 2 seconds".
  if (value > 0 && value < 60) value = 0;
  for (const [unit, size] of STEPS) {
    if (Math.abs(value) < size) return format.format(Math.trunc(value), unit);
    value /= size;
  }
  return format.format(Math.trunc(value), 'year');
}
