import type { z } from 'zod';
import type { ToolResult } from '@switchyard/contracts';
import { waitTool, WaitParams } from '@switchyard/server-runtime';
import { BuiltinTool, type BuiltinToolHandler, type ToolRunContext } from './builtin-tool';

/**
 * Waits, then returns `value`: for flows (delays) and benchmarks. A local tool (`waitTool`): a run
 * step's call is run by the executor itself; here for every other caller (chat, MCP, direct invokes).
 */
@BuiltinTool({
  name: waitTool.name,
  description: 'Wait `ms` milliseconds (at most one hour), then return `value` unchanged.',
  params: WaitParams,
  effect: 'read',
  idempotent: true,
  outputSchema: { description: 'the `value` argument, unchanged (any JSON); null without one' },
})
export class WaitTool implements BuiltinToolHandler<typeof WaitParams> {
  run(args: z.infer<typeof WaitParams>, ctx: ToolRunContext): Promise<ToolResult> {
    return waitTool.run(args, ctx.signal);
  }
}
