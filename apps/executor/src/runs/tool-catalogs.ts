import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Events, Rpc, type ToolDescriptor } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import { BUS, ChangeCache } from '@switchyard/server-runtime';

/**
 * A catalog is reused this long at most. Changes the registry announces drop it sooner; one it does
 * not (an MCP server that went away) is met by the registry refusing the call, and a tool the kept
 * catalog lacks makes the caller ask afresh (`fresh`).
 */
export const CATALOG_TTL_MS = 5_000;

export type Catalog = Map<string, ToolDescriptor>;

/**
 * Callers' tool catalogs as the registry lists them, kept per owner for starts of saved workflows
 * (a background task's run asked the registry for the whole catalog, and the registry the planner
 * for the owner's workflows, on every start). Dropped on the events that change a listing: a tool
 * record or a plugin changed (everyone's), an owner's workflows or memory setting (that owner's).
 */
@Injectable()
export class ToolCatalogs implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new ChangeCache<Catalog>(CATALOG_TTL_MS);
  private unsubscribe: Array<() => void> = [];

  constructor(@Inject(BUS) private readonly bus: BusPort) {}

  onModuleInit(): void {
    const everyone = () => this.cache.drop();
    const owner = (e: { ownerId: string }) => this.cache.drop((key) => key === e.ownerId);
    this.unsubscribe = [
      this.bus.on(Events.recordChanged, everyone),
      this.bus.on(Events.pluginChanged, everyone),
      this.bus.on(Events.workflowsChanged, owner),
      this.bus.on(Events.memorySettingChanged, owner),
    ];
  }

  onModuleDestroy(): void {
    this.unsubscribe.forEach((u) => u());
  }

  /** The caller's catalog, by name: kept, or asked of the registry. */
  kept(ctx: CallContext): Promise<Catalog> {
    return this.cache.get(ctx.ownerId ?? '', () => this.fresh(ctx));
  }

  /** Whether `kept` would answer without asking the registry. */
  isKept(ctx: CallContext): boolean {
    return this.cache.has(ctx.ownerId ?? '');
  }

  /** The caller's catalog as the registry lists it now, kept from here on. */
  refresh(ctx: CallContext): Promise<Catalog> {
    const key = ctx.ownerId ?? '';
    this.cache.drop((k) => k === key);
    return this.kept(ctx);
  }

  /** The caller's catalog as the registry lists it now. */
  async fresh(ctx: CallContext): Promise<Catalog> {
    const { tools } = await this.bus.call(Rpc.registry.catalog, {}, { ctx });
    return new Map(tools.map((t) => [t.name, t]));
  }
}
