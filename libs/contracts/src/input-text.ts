import type { FieldIssue } from './errors';

/**
 * How deeply a request body (or query, or path) may nest objects and arrays at the HTTP edge. The
 * deepest legitimate body is a batch of plans (`runs[i].workflow.steps[j].arguments`, 7 levels) with
 * arguments at the plan's own 32-level limit; 64 leaves room for that and nothing pathological.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * The same guard on every NATS request a service accepts. Higher than the API's limit because
 * service messages also carry values tools produced (a run's output to the scheduler, a step's
 * resolved arguments); low enough that no recursive walk in a service comes near the stack limit.
 */
export const MAX_MESSAGE_DEPTH = 512;

/** Past this many, the rest of a hostile value is not inspected: the request is refused anyway. */
const MAX_ISSUES = 20;

// U+0000, or a surrogate half without its partner: Postgres stores neither in text or jsonb, and
// neither is Unicode text.
const BAD_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function textProblem(s: string): string | undefined {
  if (!BAD_TEXT.test(s)) return undefined;
  return s.includes('\u0000')
    ? 'contains U+0000 (NUL), which text may not contain'
    : 'contains an unpaired UTF-16 surrogate, which is not Unicode text';
}

function join(path: string, key: string | number): string {
  // A hostile key is named escaped (`\u0000`), so the issue itself is plain text.
  const k = typeof key === 'number' ? String(key) : JSON.stringify(key).slice(1, -1);
  return path ? `${path}.${k}` : k;
}

/**
 * What makes a value unacceptable before any schema sees it: strings (values or keys) containing
 * U+0000 or an unpaired surrogate, and objects or arrays nested deeper than `maxDepth` (the value
 * itself is level 1). Paths are dotted like zod's (`body.steps.0.arguments`), under `root`.
 * Never recurses past `maxDepth`, so a 100,000-level value costs nothing and overflows nothing.
 */
export function inputTextIssues(value: unknown, root: string, maxDepth: number): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const visit = (v: unknown, path: string, depth: number): void => {
    if (issues.length >= MAX_ISSUES) return;
    if (typeof v === 'string') {
      const problem = textProblem(v);
      if (problem) issues.push({ path, message: problem });
      return;
    }
    if (v === null || typeof v !== 'object') return;
    if (depth > maxDepth) {
      issues.push({ path, message: `nests deeper than ${maxDepth} levels of objects and arrays` });
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, join(path, i), depth + 1));
      return;
    }
    for (const [key, item] of Object.entries(v)) {
      const problem = textProblem(key);
      if (problem) {
        if (issues.length < MAX_ISSUES) issues.push({ path: join(path, key), message: `key ${problem}` });
        continue;
      }
      visit(item, join(path, key), depth + 1);
    }
  };
  visit(value, root, 1);
  return issues;
}
