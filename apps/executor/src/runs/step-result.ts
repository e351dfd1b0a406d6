import type { ToolResult } from '@switchyard/contracts';

/**
 * The value a step's result stands for in references: a single JSON block is that JSON; text that
 * is a JSON object or array is parsed (MCP tools usually answer JSON as text); other text stays text.
 */
export function resultValue(result: ToolResult): unknown {
  const [only] = result.content;
  if (result.content.length === 1 && only?.type === 'json') return only.json;
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');
  const t = text.trim();
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.parse(t) as unknown;
    } catch {
      // text that only looks like JSON
    }
  }
  return text;
}

/** A failed call's message, as the tool wrote it. */
export function resultText(result: ToolResult, max = 2_000): string {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : JSON.stringify(c.json))).join('\n');
  return text.length > max
    ? `${text.slice(0, max)}…`
    : text || 'the tool reported an error without a message';
}

/** What the history keeps of a result: the value, or its first `limit` characters of JSON, flagged. */
export function capResult(value: unknown, limit: number): { value: unknown; truncated: boolean } {
  const json = JSON.stringify(value ?? null);
  if (json.length <= limit) return { value, truncated: false };
  return { value: json.slice(0, limit), truncated: true };
}
