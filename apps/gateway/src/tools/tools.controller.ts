import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type ToolCatalog } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { callContext, Endpoint, type GatewayRequest } from '../http/endpoint';

@Controller()
export class ToolsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.toolCatalog)
  catalog(@Req() req: GatewayRequest): Promise<ToolCatalog> {
    return this.bus.call(Rpc.registry.catalog, {}, { ctx: callContext(req.principal, req.correlationId) });
  }
}
