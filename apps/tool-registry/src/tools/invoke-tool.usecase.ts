import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Bus } from '@switchyard/server-bus';
import {
  AppError,
  Events,
  isMemoryTool,
  type InvokeToolRequest,
  type ToolContent,
  type ToolResult,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { CallContext, Logger } from '@switchyard/server-observability';
import {
  APP_CONFIG,
  BUS,
  expiringDeadline,
  LOGGER,
  parseToolArguments,
  toolTimedOut,
} from '@switchyard/server-runtime';
import { BuiltinRegistry } from './builtin-registry';
import { MCP_PREFIX, McpToolsService } from '../mcp/mcp-tools.service';
import { MemoryGate } from './memory-gate';
import { WorkflowTools } from './workflow-tools';
import { FilesService } from '../files/files.service';
import { PluginToolsService } from '../plugins/plugin-tools.service';

/** Cuts text content so the whole result stays within `limit` bytes. */
export function capOutput(result: ToolResult, limit: number): ToolResult {
  let budget = limit;
  let truncated = result.truncated;
  const content: ToolContent[] = [];
  for (const block of result.content) {
    const serialized = block.type === 'text' ? block.text : JSON.stringify(block.json);
    const size = Buffer.byteLength(serialized);
    if (size <= budget) {
      content.push(block);
      budget -= size;
      continue;
    }
    truncated = true;
    const cut = Buffer.from(serialized)
      .subarray(0, Math.max(0, budget))
      .toString('utf8')
      .replace(/\uFFFD$/, '');
    content.push({ type: 'text', text: `${cut}\n[output cut at ${limit} bytes]` });
    break;
  }
  // A value is whole or absent (then references read the cut content): it has a budget of its own.
  if (result.value !== undefined && Buffer.byteLength(JSON.stringify(result.value) ?? '') > limit) {
    const { value: _dropped, ...rest } = result;
    return { ...rest, content, truncated: true };
  }
  return { ...result, content, truncated };
}

/**
 * registry.tools.invoke: find the tool, validate the arguments against its schema (every bad field
 * listed), run it under a deadline whose expiry aborts the tool's work, cap the output.
 */
@Injectable()
export class InvokeToolUseCase implements OnModuleInit, OnModuleDestroy {
  private readonly running = new Map<string, AbortController>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly builtins: BuiltinRegistry,
    private readonly mcp: McpToolsService,
    private readonly workflows: WorkflowTools,
    private readonly memory: MemoryGate,
    private readonly plugins: PluginToolsService,
    private readonly files: FilesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.toolCancel, (msg) =>
      this.running.get(msg.invocationId)?.abort('cancelled'),
    );
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
    for (const controller of this.running.values()) controller.abort('shutdown');
  }

  async invoke(req: InvokeToolRequest, caller: CallContext): Promise<ToolResult> {
    const run = this.prepare(req, caller);
    const timeoutMs = Math.min(req.timeoutMs ?? this.config.tools.timeoutMs, this.config.tools.timeoutMs);
    const controller = new AbortController();
    if (req.invocationId) this.running.set(req.invocationId, controller);
    // The deadline stands still while the call waits for a person (its server's input request).
    const { deadline: clock, expired } = expiringDeadline(
      timeoutMs,
      () => toolTimedOut(req.tool, timeoutMs),
      () => controller.abort('timeout'),
    );
    const pause = () => clock.pause();
    const started = performance.now();
    try {
      const result = await Promise.race([(await run)(controller.signal, timeoutMs, pause), expired]);
      return capOutput(result, this.config.tools.outputLimitBytes);
    } catch (err) {
      if (controller.signal.aborted && controller.signal.reason === 'cancelled') {
        return {
          content: [{ type: 'text', text: `${req.tool} was cancelled by the caller` }],
          isError: true,
          truncated: false,
        };
      }
      if (err instanceof AppError) throw err;
      this.logger.warn({ tool: req.tool, err: (err as Error).message }, 'tool failed');
      throw new AppError('tool_failed', `${req.tool} failed: ${(err as Error).message}`, { cause: err });
    } finally {
      clock.clear();
      if (req.invocationId) this.running.delete(req.invocationId);
      this.logger.debug({ tool: req.tool, ms: Math.round(performance.now() - started) }, 'tool invoked');
    }
  }

  /** Finds the tool and checks its arguments before the clock starts. */
  private async prepare(
    req: InvokeToolRequest,
    caller: CallContext,
  ): Promise<(signal: AbortSignal, timeoutMs: number, pause: () => () => void) => Promise<ToolResult>> {
    const workflow = this.workflows.runner(req.tool, req.arguments, caller, {
      ...(req.invocationId ? { invocationId: req.invocationId } : {}),
      ...(req.permissionMode ? { permissionMode: req.permissionMode } : {}),
    });
    if (workflow) return workflow;
    if (req.tool.startsWith(MCP_PREFIX)) {
      const { asker, invocationId } = req;
      return (signal, timeoutMs, pause) =>
        this.mcp.invoke(
          req.tool,
          req.arguments,
          signal,
          timeoutMs,
          asker && invocationId ? { asker, invocationId, ctx: caller, pause } : undefined,
        );
    }
    const tool = this.builtins.get(req.tool);
    if (!tool) {
      // Plugin tools have bare names that no built-in takes (refused at install).
      // A call carrying the run's file grants goes to a server of that run's own, with the grants
      // bound into its sandbox (checked here again: only this run's files or the caller's view).
      const binds = await this.files.pluginBinds(req.runId, req.files, caller);
      const plugin = await this.plugins.runner(
        req.tool,
        req.arguments,
        binds.length ? { key: `run:${req.runId}`, binds } : undefined,
      );
      if (plugin) return plugin;
      throw new AppError('not_found', `no tool named ${req.tool} in the catalog`);
    }
    if (isMemoryTool(req.tool) && !(await this.memory.enabled(caller))) {
      throw new AppError('not_found', `no tool named ${req.tool} in the catalog: memory is off for you`);
    }
    const args = parseToolArguments(req.tool, tool.spec.params, req.arguments);
    return (signal) => tool.handler.run(args, { signal, caller });
  }
}
