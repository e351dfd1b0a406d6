import type { ToolResult } from '@switchyard/contracts';

/**
 * The value a step's result stands for in references: the result's `value` when the tool gives one;
 * else a single JSON block is that JSON; text that is a JSON object or array is parsed (MCP tools
 * usually answer JSON as text); other text stays text. A tool's `outputSchema` describes this value.
 * Pure: the executor and the canvas use the same code.
 */
export function resultValue(result: ToolResult): unknown {
  if (result.value !== undefined) return result.value;
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
