import { Controller } from '@nestjs/common';
import { Rpc } from '@switchyard/contracts';
import type { z } from 'zod';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { PluginsUseCases } from './plugins.usecases';

type In<K extends keyof typeof Rpc.registry> = z.output<(typeof Rpc.registry)[K]['request']>;

@Controller()
export class PluginsHandler {
  constructor(private readonly plugins: PluginsUseCases) {}

  @RpcHandler(Rpc.registry.pluginList)
  list(@RpcPayload(Rpc.registry.pluginList) _: In<'pluginList'>, @Caller() caller: CallContext) {
    return this.plugins.list(caller);
  }

  @RpcHandler(Rpc.registry.pluginGet)
  get(@RpcPayload(Rpc.registry.pluginGet) q: In<'pluginGet'>, @Caller() caller: CallContext) {
    return this.plugins.get(caller, q.id);
  }

  @RpcHandler(Rpc.registry.pluginInstall)
  install(@RpcPayload(Rpc.registry.pluginInstall) body: In<'pluginInstall'>, @Caller() caller: CallContext) {
    return this.plugins.install(caller, body);
  }

  @RpcHandler(Rpc.registry.pluginEnable)
  enable(@RpcPayload(Rpc.registry.pluginEnable) q: In<'pluginEnable'>, @Caller() caller: CallContext) {
    return this.plugins.enable(caller, q.id);
  }

  @RpcHandler(Rpc.registry.pluginDisable)
  disable(@RpcPayload(Rpc.registry.pluginDisable) q: In<'pluginDisable'>, @Caller() caller: CallContext) {
    return this.plugins.disable(caller, q.id);
  }

  @RpcHandler(Rpc.registry.pluginDelete)
  delete(@RpcPayload(Rpc.registry.pluginDelete) q: In<'pluginDelete'>, @Caller() caller: CallContext) {
    return this.plugins.delete(caller, q.id);
  }

  @RpcHandler(Rpc.registry.pluginGrants)
  grants(@RpcPayload(Rpc.registry.pluginGrants) q: In<'pluginGrants'>, @Caller() caller: CallContext) {
    return this.plugins.grants(caller, q.id, q.body);
  }

  @RpcHandler(Rpc.registry.pluginSettings)
  settings(@RpcPayload(Rpc.registry.pluginSettings) q: In<'pluginSettings'>, @Caller() caller: CallContext) {
    return this.plugins.settings(caller, q.id, q.body);
  }

  /** Open to every caller: runs record the posture they were created under. */
  @RpcHandler(Rpc.registry.pluginPosture)
  posture(@RpcPayload(Rpc.registry.pluginPosture) _: In<'pluginPosture'>) {
    return this.plugins.posture();
  }
}
