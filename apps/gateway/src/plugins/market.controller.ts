import { Controller, Inject, Req } from '@nestjs/common';
import {
  Routes,
  Rpc,
  type MarketEntryDetail,
  type MarketEntryList,
  type MarketImported,
  type MarketSource,
  type MarketSourceList,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** The MCP market (owned by the tool registry, which fetches sources and writes records). */
@Controller()
export class MarketController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.marketSources)
  sources(@Req() req: GatewayRequest): Promise<MarketSourceList> {
    return this.bus.call(Rpc.registry.marketSources, {}, asCaller(req));
  }

  @Endpoint(Routes.marketSourceAdd)
  add(@In() input: Input<typeof Routes.marketSourceAdd>, @Req() req: GatewayRequest): Promise<MarketSource> {
    return this.bus.call(Rpc.registry.marketSourceAdd, input.body, asCaller(req));
  }

  @Endpoint(Routes.marketSourceDelete)
  delete(
    @In() input: Input<typeof Routes.marketSourceDelete>,
    @Req() req: GatewayRequest,
  ): Promise<MarketSource> {
    return this.bus.call(Rpc.registry.marketSourceDelete, input.params, asCaller(req));
  }

  @Endpoint(Routes.marketEntries)
  entries(
    @In() input: Input<typeof Routes.marketEntries>,
    @Req() req: GatewayRequest,
  ): Promise<MarketEntryList> {
    return this.bus.call(Rpc.registry.marketEntries, input.query, asCaller(req));
  }

  @Endpoint(Routes.marketEntry)
  entry(
    @In() input: Input<typeof Routes.marketEntry>,
    @Req() req: GatewayRequest,
  ): Promise<MarketEntryDetail> {
    return this.bus.call(Rpc.registry.marketEntry, input.params, asCaller(req));
  }

  @Endpoint(Routes.marketImport)
  import(
    @In() input: Input<typeof Routes.marketImport>,
    @Req() req: GatewayRequest,
  ): Promise<MarketImported> {
    return this.bus.call(Rpc.registry.marketImport, input.body, asCaller(req));
  }
}
