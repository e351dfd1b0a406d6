import { Inject, Injectable } from '@nestjs/common';
import {
  Events,
  MemorySearchRequest,
  type Memory,
  type MemoryListQuery,
  type MemoryPage,
  type MemorySearchResult,
  type MemorySettings,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { MemoryRepository } from '@switchyard/server-db-memory';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';

const ownerOf = (ctx: CallContext): string => requireOwner(ctx, 'memories');

/**
 * The caller's memory (experimental, off by default). Listing and forgetting work whether memory is
 * on or off (a person can always see and delete what is kept); remembering needs it on, and a search
 * while it is off finds nothing.
 */
@Injectable()
export class MemoryService {
  constructor(
    private readonly repo: MemoryRepository,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  async settings(ctx: CallContext): Promise<MemorySettings> {
    return { enabled: await this.repo.enabled(ownerOf(ctx)) };
  }

  async putSettings(ctx: CallContext, body: MemorySettings): Promise<MemorySettings> {
    const ownerId = ownerOf(ctx);
    const enabled = await this.repo.setEnabled(ownerId, body.enabled);
    // Registry replicas cache the setting briefly; this drops it so the catalog changes at once.
    this.bus.emit(Events.memorySettingChanged, { ownerId, enabled });
    return { enabled };
  }

  remember(ctx: CallContext, text: string): Promise<Memory> {
    return this.repo.remember(ownerOf(ctx), text);
  }

  async search(ctx: CallContext, req: MemorySearchRequest): Promise<MemorySearchResult> {
    const ownerId = ownerOf(ctx);
    const { query, limit, touch } = MemorySearchRequest.parse(req);
    if (!(await this.repo.enabled(ownerId))) return { enabled: false, items: [] };
    return { enabled: true, items: await this.repo.search(ownerId, query, { limit, touch }) };
  }

  list(ctx: CallContext, q: MemoryListQuery): Promise<MemoryPage> {
    return this.repo.page(ownerOf(ctx), {
      limit: q.limit,
      ...(q.cursor ? { cursor: q.cursor } : {}),
      ...(q.q ? { q: q.q } : {}),
    });
  }

  forget(ctx: CallContext, id: string): Promise<Memory> {
    return this.repo.forget(ownerOf(ctx), id);
  }
}
