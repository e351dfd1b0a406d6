import type { ToolDescriptor, ToolEffect } from '@switchyard/contracts';

/** A built-in tool of the catalog for component tests (read tools are idempotent). */
function builtinTool(
  name: string,
  inputSchema: Record<string, unknown>,
  effect: ToolEffect = 'read',
): ToolDescriptor {
  return { name, description: name, effect, idempotent: effect === 'read', source: 'builtin', inputSchema };
}

/** `wait`: `ms` required, `value` anything. */
export const WAIT_TOOL = builtinTool('wait', {
  type: 'object',
  properties: { ms: { type: 'integer' }, value: {} },
  required: ['ms'],
});
