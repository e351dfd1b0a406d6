import type { ToolResult, ValueEncoding } from '@switchyard/contracts';
import { jsonHoldsUnstorable, storableText } from '@switchyard/server-db';

// Moved to the plan library (the canvas previews values with it); kept here for the run engine.
export { resultValue } from '@switchyard/plan';

/** A failed call's message, as the tool wrote it (characters Postgres cannot store shown as U+FFFD). */
export function resultText(result: ToolResult, max = 2_000): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');
  const shown = text.length > max ? `${text.slice(0, max)}…` : text;
  return storableText(shown) || 'the tool reported an error without a message';
}

/** What the history keeps of a value (a result, a step's arguments). */
export interface KeptValue {
  readonly value: unknown;
  /** `value` is the first `limit` characters of the value's JSON text. */
  readonly truncated: boolean;
  /** `value` is the whole JSON text: the value holds characters Postgres cannot store (NUL, half a surrogate pair). */
  readonly encoded?: ValueEncoding;
}

/**
 * What the history keeps of a value: the value; or the first `limit` characters of its JSON, flagged
 * truncated; or, when it holds characters Postgres cannot store, its JSON text, flagged encoded (lossless).
 */
export function capResult(value: unknown, limit: number): KeptValue {
  const json = JSON.stringify(value ?? null);
  if (json.length > limit) {
    // Never between the halves of a surrogate pair: half of one cannot be stored.
    const end = /[\ud800-\udbff]/.test(json.charAt(limit - 1)) ? limit - 1 : limit;
    return { value: json.slice(0, end), truncated: true };
  }
  if (jsonHoldsUnstorable(json)) return { value: json, truncated: false, encoded: 'json' };
  return { value, truncated: false };
}

/** The value a kept one stands for: an encoded value decoded; a truncated one stays its JSON prefix. */
export function keptValue(kept: {
  readonly value: unknown;
  readonly encoded?: ValueEncoding | undefined;
}): unknown {
  return kept.encoded === 'json' && typeof kept.value === 'string'
    ? (JSON.parse(kept.value) as unknown)
    : kept.value;
}
