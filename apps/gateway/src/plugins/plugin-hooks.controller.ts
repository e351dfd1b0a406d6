import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type PluginHooksEntry, type PluginHooksList } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Plugins' hooks and their trust (owned by the executor, which runs them). */
@Controller()
export class PluginHooksController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.pluginHookList)
  list(@Req() req: GatewayRequest): Promise<PluginHooksList> {
    return this.bus.call(Rpc.executor.pluginHookList, {}, asCaller(req));
  }

  @Endpoint(Routes.pluginHookTrust)
  trust(
    @In() input: Input<typeof Routes.pluginHookTrust>,
    @Req() req: GatewayRequest,
  ): Promise<PluginHooksEntry> {
    return this.bus.call(Rpc.executor.pluginHookTrust, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.pluginHookUntrust)
  untrust(
    @In() input: Input<typeof Routes.pluginHookUntrust>,
    @Req() req: GatewayRequest,
  ): Promise<PluginHooksEntry> {
    return this.bus.call(Rpc.executor.pluginHookUntrust, { id: input.params.id }, asCaller(req));
  }
}
