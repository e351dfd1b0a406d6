/**
 * Whole-string wildcard matching: `*` is any run of characters (possibly empty) and, when `question`
 * is set, `?` is exactly one character; everything else is literal.
 *
 * Written as the classic two-pointer matcher instead of a RegExp so a 10,000-character command
 * against a 1,000-character rule costs O(n·m) at worst and never backtracks exponentially.
 */
export function globMatch(pattern: string, text: string, options: { question: boolean }): boolean {
  let p = 0;
  let t = 0;
  let starP = -1;
  let starT = 0;
  while (t < text.length) {
    const pc = pattern[p];
    if (pc === '*') {
      starP = p++;
      starT = t;
    } else if (pc !== undefined && (pc === text[t] || (options.question && pc === '?'))) {
      p++;
      t++;
    } else if (starP !== -1) {
      p = starP + 1;
      t = ++starT;
    } else {
      return false;
    }
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
