import { z } from 'zod';
import { AppError, describeIssues, toFieldIssues, type ToolResult } from '@switchyard/contracts';

/**
 * A built-in tool that needs nothing of the host (no files, processes, network, database or
 * secrets): pure work on its arguments. The tool registry offers it like every built-in; a run step
 * that calls it is run by the executor in its own process (see StepRunner), with the same argument
 * check, deadline and cancellation, and without a round trip to the registry. Temporal's local
 * activities make the same trade for short work.
 */
export interface LocalTool<S extends z.ZodObject = z.ZodObject> {
  readonly name: string;
  readonly params: S;
  run(args: z.output<S>, signal: AbortSignal): Promise<ToolResult>;
}

export const WaitParams = z
  .object({
    ms: z.number().int().min(0).max(3_600_000).describe('milliseconds to wait, at most one hour'),
    value: z.unknown().optional().describe('returned as is when the wait ends'),
  })
  .strict();

/** Waits, then returns `value`: for flows (delays) and benchmarks. Stops early when cancelled. */
export const waitTool: LocalTool<typeof WaitParams> = {
  name: 'wait',
  params: WaitParams,
  async run(args, signal) {
    await new Promise<void>((resolve, reject) => {
      const stop = () => {
        if (args.ms === 0) clearImmediate(timer as NodeJS.Immediate);
        else clearTimeout(timer as NodeJS.Timeout);
        reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
      };
      // ms=0 yields a turn without the timer phase's ~1 ms granularity.
      const timer =
        args.ms === 0
          ? setImmediate(() => {
              signal.removeEventListener('abort', stop);
              resolve();
            })
          : setTimeout(() => {
              signal.removeEventListener('abort', stop);
              resolve();
            }, args.ms);
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
    return { content: [{ type: 'json', json: args.value ?? null }], isError: false, truncated: false };
  },
};

const LOCAL: ReadonlyMap<string, LocalTool> = new Map([[waitTool.name, waitTool as unknown as LocalTool]]);

/** The local built-in of that name, if it is one. */
export function localTool(name: string): LocalTool | undefined {
  return LOCAL.get(name);
}

/** A tool call stopped at its deadline (by the registry, or by the executor for a local tool). */
export function toolTimedOut(tool: string, ms: number): AppError {
  return new AppError('timeout', `${tool} did not finish within ${ms} ms and was stopped`);
}

/** A tool's arguments checked against its schema: `validation_failed` listing every bad field. */
export function parseToolArguments<S extends z.ZodObject>(
  tool: string,
  params: S,
  args: Record<string, unknown>,
): z.output<S> {
  const parsed = params.safeParse(args);
  if (parsed.success) return parsed.data;
  const issues = toFieldIssues(parsed.error).map((i) => ({
    ...i,
    path: i.path ? `arguments.${i.path}` : 'arguments',
  }));
  throw new AppError('validation_failed', `invalid arguments for ${tool}: ${describeIssues(issues)}`, {
    issues,
  });
}
