/**
 * Rule lists as a person writes them in Settings (one rule per line) turned into rules, with every
 * bad line reported at once so a settings form can mark them all in one round trip.
 */

import { parseMatcher, type Matcher } from './matchers';

export type RuleList = 'allow' | 'ask' | 'deny';
export type RuleScope = 'global' | 'owner';

export interface RuleLists {
  allow: string[];
  ask: string[];
  deny: string[];
}

export interface RuleError {
  list: RuleList;
  /** 1-based index in that list; blank and comment lines count. */
  line: number;
  rule: string;
  message: string;
}

export interface Rule {
  list: RuleList;
  scope: RuleScope;
  /** As written, trimmed. */
  text: string;
  matcher: Matcher;
}

export type ParsedRules = { ok: true; rules: Rule[] } | { ok: false; errors: RuleError[] };

/** Keeps evaluation cost bounded: every call is checked against every rule. */
export const MAX_RULES_PER_LIST = 500;
export const MAX_RULE_LENGTH = 1_000;

const LISTS: readonly RuleList[] = ['deny', 'ask', 'allow'];

/** Blank lines and lines starting with `#` are skipped. */
export function parseRules(lists: RuleLists, scope: RuleScope): ParsedRules {
  const rules: Rule[] = [];
  const errors: RuleError[] = [];
  for (const list of LISTS) {
    let count = 0;
    (lists[list] ?? []).forEach((raw: unknown, index) => {
      const line = index + 1;
      if (typeof raw !== 'string') {
        errors.push({ list, line, rule: String(raw), message: 'a rule must be a line of text' });
        return;
      }
      const text = raw.trim();
      if (!text || text.startsWith('#')) return;
      if (text.length > MAX_RULE_LENGTH) {
        errors.push({
          list,
          line,
          rule: `${text.slice(0, 80)}…`,
          message: `the rule is ${text.length} characters long; at most ${MAX_RULE_LENGTH} are allowed`,
        });
        return;
      }
      if (++count === MAX_RULES_PER_LIST + 1)
        errors.push({
          list,
          line,
          rule: text,
          message: `the ${list} list has more than ${MAX_RULES_PER_LIST} rules; merge some with globs or :*`,
        });
      if (count > MAX_RULES_PER_LIST) return;
      const parsed = parseMatcher(text);
      if (parsed.ok) rules.push({ list, scope, text, matcher: parsed.matcher });
      else errors.push({ list, line, rule: text, message: parsed.message });
    });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, rules };
}

/** How a decision names its rule: `deny: Command(rm:*) (global)`. */
export function describeRule(rule: Rule): string {
  return `${rule.list}: ${rule.text} (${rule.scope})`;
}
