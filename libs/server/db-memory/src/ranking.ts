import { MEMORY_HALF_LIFE_DAYS } from '@switchyard/contracts';

/**
 * Keyword ranking of memories: what a fact and a query have in common, in words that carry meaning,
 * weighted by how recent the fact is. Pure: the repository stores `keywords(text)` with each fact and
 * ranks candidates with `rankMemories`.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

// Function words carry no topic: "what do I like" and "I like tea" should overlap in "like" only.
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below ' +
    'between both but by can could did do does doing down during each few for from further had has have ' +
    'having he her here hers herself him himself his how i if in into is it its itself just me more most ' +
    'my myself no nor not now of off on once only or other our ours ourselves out over own same she ' +
    'should so some such than that the their theirs them themselves then there these they this those ' +
    'through to too under until up very was we were what when where which while who whom why will with ' +
    'would you your yours yourself yourselves remember please always never also use using ' +
    // Chinese function words that appear as whole bigrams.
    '我们 你们 他们 这个 那个 什么 怎么 一个 就是 还是 因为 所以 但是 如果 可以 记住'
  ).split(/\s+/),
);

/** Han, kana and Hangul: scripts written without spaces between words. */
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const RUNS = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+|[\p{L}\p{N}]+/gu;

/**
 * The distinct normalised tokens of a text: lower-cased words of two or more letters or digits
 * without stop words; text in CJK scripts, which has no spaces to split on, as overlapping character
 * bigrams ("我喜欢咖啡" → 我喜, 喜欢, 欢咖, 咖啡), a lone character as itself.
 */
export function keywords(text: string): string[] {
  const out = new Set<string>();
  for (const [run] of text.normalize('NFKC').toLowerCase().matchAll(RUNS)) {
    if (CJK.test(run)) {
      const chars = [...run];
      if (chars.length === 1) out.add(run);
      for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i] + chars[i + 1]);
    } else if (run.length >= 2 || /\d/.test(run)) {
      out.add(run);
    }
  }
  for (const w of out) if (STOP_WORDS.has(w)) out.delete(w);
  return [...out];
}

/** How many of the query's tokens the fact has. */
export function overlap(queryTokens: readonly string[], factTokens: ReadonlySet<string>): number {
  let n = 0;
  for (const t of new Set(queryTokens)) if (factTokens.has(t)) n++;
  return n;
}

/** 1 for a fact written now, ½ a half-life later, ¼ two half-lives later; a fact from the future counts as new. */
export function recencyWeight(createdAt: Date, now: Date): number {
  const ageDays = Math.max(0, now.getTime() - createdAt.getTime()) / DAY_MS;
  return Math.pow(0.5, ageDays / MEMORY_HALF_LIFE_DAYS);
}

/** score = overlap × 0.5^(ageDays / 7). */
export function memoryScore(
  queryTokens: readonly string[],
  fact: { readonly keywords: readonly string[]; readonly createdAt: Date },
  now: Date,
): number {
  const shared = overlap(queryTokens, new Set(fact.keywords));
  return shared === 0 ? 0 : shared * recencyWeight(fact.createdAt, now);
}

/**
 * The facts that share at least one token with the query, best first (ties: the newer first), at
 * most `limit`.
 */
export function rankMemories<F extends { readonly keywords: readonly string[]; readonly createdAt: Date }>(
  query: string,
  facts: readonly F[],
  now: Date,
  limit: number,
): Array<F & { score: number }> {
  const tokens = keywords(query);
  if (!tokens.length) return [];
  return facts
    .map((f) => ({ ...f, score: memoryScore(tokens, f, now) }))
    .filter((f) => f.score > 0)
    .sort((a, b) => b.score - a.score || b.createdAt.getTime() - a.createdAt.getTime())
    .slice(0, limit);
}
