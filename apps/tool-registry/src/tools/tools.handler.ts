import { Controller } from '@nestjs/common';
import { Rpc, type InvokeToolRequest, type ToolCatalog, type ToolResult } from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { BuiltinRegistry } from './builtin-registry';
import { InvokeToolUseCase } from './invoke-tool.usecase';
import { McpToolsService } from '../mcp/mcp-tools.service';

@Controller()
export class ToolsHandler {
  constructor(
    private readonly builtins: BuiltinRegistry,
    private readonly mcp: McpToolsService,
    private readonly invoker: InvokeToolUseCase,
  ) {}

  @RpcHandler(Rpc.registry.catalog)
  async catalog(@RpcPayload(Rpc.registry.catalog) _: unknown): Promise<ToolCatalog> {
    return { tools: [...this.builtins.list().map((t) => t.descriptor), ...(await this.mcp.descriptors())] };
  }

  @RpcHandler(Rpc.registry.invoke)
  invoke(
    @RpcPayload(Rpc.registry.invoke) req: InvokeToolRequest,
    @Caller() caller: CallContext,
  ): Promise<ToolResult> {
    return this.invoker.invoke(req, caller);
  }
}
