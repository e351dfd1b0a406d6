import { Controller } from '@nestjs/common';
import {
  Rpc,
  type MarketEntriesQuery,
  type MarketEntryDetail,
  type MarketEntryList,
  type MarketImportBody,
  type MarketImported,
  type MarketSource,
  type MarketSourceBody,
  type MarketSourceList,
  type RpcRequest,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { MarketService } from './market.service';

/** `registry.market.*`: the MCP market (admins). */
@Controller()
export class MarketHandler {
  constructor(private readonly market: MarketService) {}

  @RpcHandler(Rpc.registry.marketSources)
  async sources(
    @RpcPayload(Rpc.registry.marketSources) _: unknown,
    @Caller() ctx: CallContext,
  ): Promise<MarketSourceList> {
    return { items: await this.market.list(ctx) };
  }

  @RpcHandler(Rpc.registry.marketSourceAdd)
  add(
    @RpcPayload(Rpc.registry.marketSourceAdd) body: MarketSourceBody,
    @Caller() ctx: CallContext,
  ): Promise<MarketSource> {
    return this.market.add(body, ctx);
  }

  @RpcHandler(Rpc.registry.marketSourceDelete)
  delete(
    @RpcPayload(Rpc.registry.marketSourceDelete) req: RpcRequest<typeof Rpc.registry.marketSourceDelete>,
    @Caller() ctx: CallContext,
  ): Promise<MarketSource> {
    return this.market.delete(req.source, ctx);
  }

  @RpcHandler(Rpc.registry.marketEntries)
  entries(
    @RpcPayload(Rpc.registry.marketEntries) q: MarketEntriesQuery,
    @Caller() ctx: CallContext,
  ): Promise<MarketEntryList> {
    return this.market.entries(q, ctx);
  }

  @RpcHandler(Rpc.registry.marketEntry)
  entry(
    @RpcPayload(Rpc.registry.marketEntry) req: RpcRequest<typeof Rpc.registry.marketEntry>,
    @Caller() ctx: CallContext,
  ): Promise<MarketEntryDetail> {
    return this.market.entry(req.source, req.name, ctx);
  }

  @RpcHandler(Rpc.registry.marketImport)
  import(
    @RpcPayload(Rpc.registry.marketImport) body: MarketImportBody,
    @Caller() ctx: CallContext,
  ): Promise<MarketImported> {
    return this.market.import(body, ctx);
  }
}
