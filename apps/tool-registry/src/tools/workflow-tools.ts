import { Inject, Injectable } from '@nestjs/common';
import { Rpc, workflowIdOfTool, type ToolDescriptor, type ToolResult } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';

/** Extra time the executor gets over the call's own deadline to report how the run ended. */
const REPORT_MS = 5_000;

/**
 * Published workflows in the catalog (`run_workflow_<id>`, asked of the planner on every listing, so
 * unpublishing or deleting one removes it at once) and their invocation (the executor runs the
 * published version to the end; a cancel of this call reaches it on the same cancel subject).
 */
@Injectable()
export class WorkflowTools {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async descriptors(caller: CallContext): Promise<ToolDescriptor[]> {
    if (!caller.ownerId) return [];
    try {
      return (await this.bus.call(Rpc.workflows.tools, {}, { ctx: caller, timeoutMs: 3_000 })).tools;
    } catch (err) {
      // The catalog still lists everything else when the planner is down.
      this.logger.warn({ err: (err as Error).message }, 'workflow tools left out of the catalog');
      return [];
    }
  }

  /** A runner for `tool` if it names a workflow, else undefined. */
  runner(
    tool: string,
    args: Record<string, unknown>,
    caller: CallContext,
    opts: { invocationId?: string; permissionMode?: 'ask' | 'approve-for-me' | 'full-access' },
  ): ((signal: AbortSignal, timeoutMs: number) => Promise<ToolResult>) | undefined {
    const workflowId = workflowIdOfTool(tool);
    if (!workflowId) return undefined;
    return (_signal, timeoutMs) =>
      this.bus.call(
        Rpc.workflows.invoke,
        {
          workflowId,
          inputs: args,
          timeoutMs,
          ...(opts.invocationId ? { invocationId: opts.invocationId } : {}),
          ...(opts.permissionMode ? { permissionMode: opts.permissionMode } : {}),
        },
        { ctx: caller, timeoutMs: timeoutMs + REPORT_MS },
      );
  }
}
