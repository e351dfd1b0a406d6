import { Controller } from '@nestjs/common';
import {
  isMemoryTool,
  Rpc,
  type InvokeToolRequest,
  type ToolCatalog,
  type ToolResult,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { BuiltinRegistry } from './builtin-registry';
import { InvokeToolUseCase } from './invoke-tool.usecase';
import { McpToolsService } from '../mcp/mcp-tools.service';
import { MemoryGate } from './memory-gate';
import { WorkflowTools } from './workflow-tools';
import { PluginToolsService } from '../plugins/plugin-tools.service';

@Controller()
export class ToolsHandler {
  constructor(
    private readonly builtins: BuiltinRegistry,
    private readonly mcp: McpToolsService,
    private readonly invoker: InvokeToolUseCase,
    private readonly workflows: WorkflowTools,
    private readonly memory: MemoryGate,
    private readonly plugins: PluginToolsService,
  ) {}

  @RpcHandler(Rpc.registry.catalog)
  async catalog(
    @RpcPayload(Rpc.registry.catalog) _: unknown,
    @Caller() caller: CallContext,
  ): Promise<ToolCatalog> {
    const [mcp, workflows, memory, plugins] = await Promise.all([
      this.mcp.descriptors(),
      this.workflows.descriptors(caller),
      this.memory.enabled(caller),
      this.plugins.descriptors(),
    ]);
    const builtins = this.builtins
      .list()
      .filter((t) => memory || !isMemoryTool(t.spec.name))
      .map((t) => t.descriptor);
    return { tools: [...builtins, ...plugins, ...mcp, ...workflows] };
  }

  @RpcHandler(Rpc.registry.invoke)
  invoke(
    @RpcPayload(Rpc.registry.invoke) req: InvokeToolRequest,
    @Caller() caller: CallContext,
  ): Promise<ToolResult> {
    return this.invoker.invoke(req, caller);
  }
}
