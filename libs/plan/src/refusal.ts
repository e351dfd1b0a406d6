import { AppError, type PlanIssue } from '@switchyard/contracts';

/**
 * The one refusal of a plan that does not validate: `validation_failed` whose message names the first
 * issue (and how many more), every issue as a field issue `code: message`, and the issues themselves
 * in `details` (with `extra`).
 */
export function planRefusal(
  what: string,
  issues: readonly PlanIssue[],
  extra: Record<string, unknown> = {},
): AppError {
  const first = issues[0];
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return new AppError(
    'validation_failed',
    `${what}: ${first?.path ?? '$'}: ${first?.message ?? 'invalid'}${more}`,
    {
      issues: issues.map((i) => ({ path: i.path, message: `${i.code}: ${i.message}` })),
      details: { issues, ...extra },
    },
  );
}
