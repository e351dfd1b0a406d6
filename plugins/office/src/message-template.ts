import { ToolError } from './errors';

/**
 * Subject and body templates: `{value}`, `{rows}`, `{file}` and `{date}`. `{{value}}` works too when the
 * text arrives through a run input, but inside a flow node's arguments `{{…}}` is a Switchyard reference,
 * hence the single braces. An unknown `{name}` is refused: a typo must not reach fifty inboxes.
 */
export const TEMPLATE_FIELDS = ['value', 'rows', 'file', 'date'] as const;
export type TemplateFields = Record<(typeof TEMPLATE_FIELDS)[number], string>;

const FIELD = /\{\{\s*([A-Za-z_]\w*)\s*\}\}|\{([A-Za-z_]\w*)\}/g;

export function checkTemplate(text: string, what: string): void {
  for (const m of text.matchAll(FIELD)) {
    const name = (m[1] ?? m[2]) as string;
    if (!(TEMPLATE_FIELDS as readonly string[]).includes(name))
      throw new ToolError(
        `the ${what} uses ${m[0]}; it may use ${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(', ')}`,
      );
  }
}

export function render(text: string, fields: TemplateFields): string {
  return text.replace(
    FIELD,
    (_, a: string | undefined, b: string | undefined) => fields[(a ?? b) as keyof TemplateFields],
  );
}
