import { z } from 'zod';
import type { ToolResult } from '@switchyard/contracts';
import { BuiltinTool, type BuiltinToolHandler, type ToolRunContext } from './builtin-tool';

const WaitParams = z
  .object({
    ms: z.number().int().min(0).max(3_600_000).describe('milliseconds to wait, at most one hour'),
    value: z.unknown().optional().describe('returned as is when the wait ends'),
  })
  .strict();

/** Waits, then returns `value`: for flows (delays) and benchmarks. Stops early when cancelled. */
@BuiltinTool({
  name: 'wait',
  description: 'Wait `ms` milliseconds (at most one hour), then return `value` unchanged.',
  params: WaitParams,
  effect: 'read',
  idempotent: true,
  outputSchema: { description: 'the `value` argument, unchanged (any JSON); null without one' },
})
export class WaitTool implements BuiltinToolHandler<typeof WaitParams> {
  async run(args: z.infer<typeof WaitParams>, ctx: ToolRunContext): Promise<ToolResult> {
    await new Promise<void>((resolve, reject) => {
      // ms=0 yields a turn without the timer phase's ~1 ms granularity.
      const timer = args.ms === 0 ? setImmediate(resolve) : setTimeout(resolve, args.ms);
      ctx.signal.addEventListener(
        'abort',
        () => {
          if (args.ms === 0) clearImmediate(timer as NodeJS.Immediate);
          else clearTimeout(timer as NodeJS.Timeout);
          reject(
            ctx.signal.reason instanceof Error ? ctx.signal.reason : new Error(String(ctx.signal.reason)),
          );
        },
        { once: true },
      );
    });
    return { content: [{ type: 'json', json: args.value ?? null }], isError: false, truncated: false };
  }
}
