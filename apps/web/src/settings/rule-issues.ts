import { ApiError } from '../api/client';

export const RULE_LISTS = ['allow', 'ask', 'deny'] as const;
export type RuleListName = (typeof RULE_LISTS)[number];

/** One refusal of a rules save, placed on its list and line (0-based), or on the list as a whole. */
export interface RuleIssue {
  readonly list: RuleListName;
  readonly index: number | null;
  readonly message: string;
}

const PATH = /^(allow|ask|deny)(?:\.(\d+))?(?:\.|$)/;

/** The server's refusal of a rules save, line by line: `allow.1` names the allow list's second line. */
export function ruleIssues(error: unknown): RuleIssue[] {
  if (!(error instanceof ApiError)) return [];
  const out: RuleIssue[] = [];
  for (const e of error.errors) {
    const m = PATH.exec(e.path);
    if (!m) continue;
    out.push({
      list: m[1] as RuleListName,
      index: m[2] === undefined ? null : Number(m[2]),
      message: e.message.replace(/^line \d+:\s*/i, ''),
    });
  }
  return out;
}

/** The lines of a text area as the API takes them: one per line, trailing blank lines dropped. */
export function linesOf(text: string): string[] {
  const lines = text.split('\n');
  while (lines.length && !lines[lines.length - 1]?.trim()) lines.pop();
  return lines;
}
