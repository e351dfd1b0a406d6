import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type Memory, type MemoryPage, type MemorySettings } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Memory (experimental): the setting and the stored memories, all owned by the planner. */
@Controller()
export class MemoryController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.memorySettingsGet)
  settings(@Req() req: GatewayRequest): Promise<MemorySettings> {
    return this.bus.call(Rpc.memory.settingsGet, {}, asCaller(req));
  }

  @Endpoint(Routes.memorySettingsPut)
  putSettings(
    @In() input: Input<typeof Routes.memorySettingsPut>,
    @Req() req: GatewayRequest,
  ): Promise<MemorySettings> {
    return this.bus.call(Rpc.memory.settingsPut, input.body, asCaller(req));
  }

  @Endpoint(Routes.memoryList)
  list(@In() input: Input<typeof Routes.memoryList>, @Req() req: GatewayRequest): Promise<MemoryPage> {
    return this.bus.call(Rpc.memory.list, input.query, asCaller(req));
  }

  @Endpoint(Routes.memoryDelete)
  delete(@In() input: Input<typeof Routes.memoryDelete>, @Req() req: GatewayRequest): Promise<Memory> {
    return this.bus.call(Rpc.memory.forget, { id: input.params.id }, asCaller(req));
  }
}
