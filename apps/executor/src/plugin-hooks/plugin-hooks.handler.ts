import { Controller } from '@nestjs/common';
import { Rpc, type PluginHooksEntry, type PluginHooksList, type RpcRequest } from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { PluginHooksService } from './plugin-hooks.service';

/** `executor.plugin-hooks.*`: plugins' hooks and their trust (admins). */
@Controller()
export class PluginHooksHandler {
  constructor(private readonly hooks: PluginHooksService) {}

  @RpcHandler(Rpc.executor.pluginHookList)
  async list(
    @RpcPayload(Rpc.executor.pluginHookList) _: unknown,
    @Caller() ctx: CallContext,
  ): Promise<PluginHooksList> {
    return { items: await this.hooks.list(ctx) };
  }

  @RpcHandler(Rpc.executor.pluginHookTrust)
  trust(
    @RpcPayload(Rpc.executor.pluginHookTrust) req: RpcRequest<typeof Rpc.executor.pluginHookTrust>,
    @Caller() ctx: CallContext,
  ): Promise<PluginHooksEntry> {
    return this.hooks.trust(req.id, ctx);
  }

  @RpcHandler(Rpc.executor.pluginHookUntrust)
  untrust(
    @RpcPayload(Rpc.executor.pluginHookUntrust) req: RpcRequest<typeof Rpc.executor.pluginHookUntrust>,
    @Caller() ctx: CallContext,
  ): Promise<PluginHooksEntry> {
    return this.hooks.untrust(req.id, ctx);
  }
}
