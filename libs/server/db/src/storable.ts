/**
 * Postgres refuses two kinds of characters in `text` and `jsonb`: NUL (U+0000), and a UTF-16
 * surrogate without its other half (JavaScript strings may hold one; UTF-8 cannot). Tool output can
 * hold either (a binary file, `/proc/self/cmdline`), so whatever is stored is made storable first.
 */
const UNSTORABLE_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** The same characters as JSON.stringify writes them: `\u0000` or `\udXXX`, not after an escaped `\`. */
const UNSTORABLE_ESCAPE = /(?<!\\)(?:\\\\)*\\u(?:0000|d[89a-f][0-9a-f]{2})/i;

/**
 * Text with each unstorable character replaced by U+FFFD: for messages. Values (results, arguments)
 * are kept losslessly as their JSON text instead; see `jsonHoldsUnstorable`.
 */
export function storableText(text: string): string {
  return text.replace(UNSTORABLE_CHAR, '\ufffd');
}

/** Whether JSON text (as JSON.stringify writes it) stands for a value holding an unstorable character. */
export function jsonHoldsUnstorable(json: string): boolean {
  return UNSTORABLE_ESCAPE.test(json);
}
