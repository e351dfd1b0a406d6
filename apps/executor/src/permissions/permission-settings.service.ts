import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AppError, type PermissionSettings, type RuleLists } from '@switchyard/contracts';
import { parseRules, type Rule } from '@switchyard/permissions';
import type { BusPort } from '@switchyard/server-bus';
import { GLOBAL_SCOPE, PermissionsRepository } from '@switchyard/server-db-runs';
import { requireOwner, type CallContext, type Logger } from '@switchyard/server-observability';
import { BUS, LOGGER } from '@switchyard/server-runtime';
import { announceChange, OwnerCache } from './owner-cache';

/** The key a settings change is stored under: the caller's own scope, or the global one for admins. */
function scopeOf(ctx: CallContext, scope: 'owner' | 'global'): string {
  if (scope === 'global') {
    if (ctx.role !== 'admin') throw new AppError('forbidden', 'only admins may change the global rules');
    return GLOBAL_SCOPE;
  }
  return requireOwner(ctx, 'rules');
}

/** What the rules need of the permissions repository (an in-memory store in unit tests). */
export type RuleStore = Pick<PermissionsRepository, 'rules' | 'putRules'>;

/**
 * Permission rules: the owner's and the global allow/ask/deny lists as a person edits them, and
 * their parsed form for the gate (owner and global together), cached per owner.
 */
@Injectable()
export class PermissionSettingsService implements OnModuleInit, OnModuleDestroy {
  private readonly cache = new OwnerCache<readonly Rule[]>();
  private unfollow: (() => void) | undefined;

  constructor(
    @Inject(PermissionsRepository) private readonly repo: RuleStore,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    this.unfollow = this.cache.follow(this.bus);
  }

  onModuleDestroy(): void {
    this.unfollow?.();
  }

  /** The rules that apply to an owner's calls, if a recent copy is at hand. */
  cached(ownerId: string): readonly Rule[] | undefined {
    return this.cache.fresh(ownerId);
  }

  /** Reads and parses the owner's and the global rules (one read at a time per owner). */
  load(ownerId: string): Promise<readonly Rule[]> {
    return this.cache.load(ownerId, () => this.read(ownerId));
  }

  private async read(ownerId: string): Promise<readonly Rule[]> {
    const [own, global] = await Promise.all([this.repo.rules(ownerId), this.repo.rules(GLOBAL_SCOPE)]);
    const rules: Rule[] = [];
    for (const [scope, lists] of [
      ['owner', own],
      ['global', global],
    ] as const) {
      const parsed = parseRules(lists, scope);
      // Stored rules were valid when saved; a line a newer parser refuses is logged and left out.
      if (parsed.ok) rules.push(...parsed.rules);
      else
        this.logger.error(
          { ownerId, scope, errors: parsed.errors },
          'stored permission rules no longer parse',
        );
    }
    return rules;
  }

  async settings(scope: 'owner' | 'global', ctx: CallContext): Promise<PermissionSettings> {
    const key = scope === 'global' ? GLOBAL_SCOPE : scopeOf(ctx, 'owner');
    const [own, global] = await Promise.all([this.repo.rules(key), this.repo.rules(GLOBAL_SCOPE)]);
    return {
      scope,
      allow: own.allow,
      ask: own.ask,
      deny: own.deny,
      updatedAt: own.updatedAt,
      global: { allow: global.allow, ask: global.ask, deny: global.deny },
    };
  }

  async replace(scope: 'owner' | 'global', lists: RuleLists, ctx: CallContext): Promise<PermissionSettings> {
    const key = scopeOf(ctx, scope);
    const parsed = parseRules(lists, scope);
    if (!parsed.ok) {
      throw new AppError(
        'validation_failed',
        `${parsed.errors.length} bad rule${parsed.errors.length === 1 ? '' : 's'}; nothing was saved: ` +
          parsed.errors
            .slice(0, 3)
            .map((e) => `${e.list} line ${e.line}: ${e.message}`)
            .join('; '),
        {
          issues: parsed.errors.map((e) => ({
            path: `${e.list}.${e.line - 1}`,
            message: `line ${e.line}: ${e.message}`,
          })),
          details: { errors: parsed.errors },
        },
      );
    }
    await this.repo.putRules(key, lists);
    this.cache.drop(key);
    announceChange(this.bus, key);
    return this.settings(scope, ctx);
  }
}
