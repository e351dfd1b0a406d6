export type ExtractedJson =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly error: string };

const FENCED = /```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)```/g;
// Reasoning models served through OpenAI-compatible endpoints often think aloud in the content.
const THINKING = /<think>[\s\S]*?<\/think>/g;

/** End (exclusive) of the balanced `{…}` opening at `start`, braces in strings ignored; -1 if unclosed. */
function balancedEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The first outermost `{…}` of the text that parses as a JSON object. A candidate that does not
 * parse is skipped as a whole, so a broken plan is reported as broken rather than answered with one
 * of its inner objects.
 */
function outermostObject(text: string): ExtractedJson {
  let error = 'the answer holds no JSON object';
  for (let start = text.indexOf('{'); start !== -1;) {
    const end = balancedEnd(text, start);
    if (end === -1) {
      return {
        ok: false,
        error: 'the JSON object is never closed (is the answer cut off?)',
      };
    }
    try {
      const value: unknown = JSON.parse(text.slice(start, end));
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        return { ok: true, value: value as Record<string, unknown> };
      }
    } catch (err) {
      error = `the JSON object does not parse: ${(err as Error).message}`;
    }
    start = text.indexOf('{', end);
  }
  return { ok: false, error };
}

/**
 * The JSON object in a model's answer: inside a Markdown fence if there is one that holds an object,
 * otherwise the first outermost object of the text, prose around it ignored.
 */
export function extractJsonObject(answer: string): ExtractedJson {
  const text = answer.replace(THINKING, '');
  for (const fence of text.matchAll(FENCED)) {
    const found = outermostObject(fence[1] ?? '');
    if (found.ok) return found;
  }
  return outermostObject(text);
}
