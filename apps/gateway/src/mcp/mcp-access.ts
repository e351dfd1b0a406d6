import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  AppError,
  Events,
  type McpAccess,
  type McpAccessBody,
  type McpAccessQuery,
  type Owner,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import {
  IdentityRepository,
  McpAccessRepository,
  type McpAccessRecord,
} from '@switchyard/server-db-identity';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';

/**
 * Owners' MCP access: read on every /mcp request, so cached per replica for TOKEN_CACHE_TTL_MS
 * (like tokens) and dropped at once on every replica when it changes (Events.mcpAccessChanged).
 */
@Injectable()
export class McpAccessService implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new Map<string, { access: Promise<McpAccessRecord>; until: number }>();
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly repo: McpAccessRepository,
    private readonly identity: IdentityRepository,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    this.unsubscribe = this.bus.on(Events.mcpAccessChanged, (e) => this.cache.delete(e.ownerId));
  }

  onModuleDestroy(): void {
    this.unsubscribe?.();
  }

  of(ownerId: string): Promise<McpAccessRecord> {
    const now = Date.now();
    const hit = this.cache.get(ownerId);
    if (hit && hit.until > now) return hit.access;
    const access = this.repo.get(ownerId);
    access.catch(() => this.cache.delete(ownerId));
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(ownerId, { access, until: now + this.config.identity.tokenCacheTtlMs });
    return access;
  }

  /** Refuses a caller whose owner has MCP access off. */
  async enabledFor(caller: Principal): Promise<McpAccessRecord> {
    const access = await this.of(caller.owner.id);
    if (!access.enabled)
      throw new AppError(
        'forbidden',
        `MCP access is off for owner "${caller.owner.name}"; an admin can turn it on (PUT /api/settings/mcp?owner=${caller.owner.name})`,
      );
    return access;
  }

  async view(caller: Principal, q: McpAccessQuery): Promise<McpAccess> {
    const owner = await this.target(caller, q);
    return present(owner, await this.repo.get(owner.id));
  }

  async put(caller: Principal, q: McpAccessQuery, body: McpAccessBody): Promise<McpAccess> {
    const owner = await this.target(caller, q);
    if (body.enabled !== undefined && caller.owner.role !== 'admin') {
      const current = await this.repo.get(owner.id);
      if (current.enabled !== body.enabled)
        throw new AppError('forbidden', 'only an admin turns MCP access on or off', {
          details: { field: 'enabled' },
        });
    }
    const saved = await this.repo.put(owner.id, body);
    this.cache.delete(owner.id);
    this.bus.emit(Events.mcpAccessChanged, { ownerId: owner.id });
    return present(owner, saved);
  }

  /** The caller, or for an admin the owner named in ?owner=. */
  private async target(caller: Principal, q: McpAccessQuery): Promise<Owner> {
    if (!q.owner || q.owner === caller.owner.name) return caller.owner;
    if (caller.owner.role !== 'admin')
      throw new AppError('forbidden', "only an admin reads or changes another owner's MCP access");
    const owner = await this.identity.findOwnerByName(q.owner);
    if (!owner) throw new AppError('not_found', `no owner named "${q.owner}"`);
    return owner;
  }
}

function present(owner: Owner, a: McpAccessRecord): McpAccess {
  return {
    owner: owner.name,
    enabled: a.enabled,
    permissionMode: a.permissionMode,
    exposedWorkflows: a.exposedWorkflows ? [...a.exposedWorkflows] : 'all',
    updatedAt: a.updatedAt?.toISOString() ?? null,
  };
}
