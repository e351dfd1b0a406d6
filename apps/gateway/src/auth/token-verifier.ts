import { Inject, Injectable } from '@nestjs/common';
import { PERMISSIONS, roleAllows } from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import { digestToken, IdentityRepository } from '@switchyard/server-db-identity';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, LOGGER } from '@switchyard/server-runtime';
import type { Principal } from './principal';

interface CacheEntry {
  readonly principal: Principal | null;
  readonly until: number;
}

const MAX_ENTRIES = 10_000;
const TOUCH_EVERY_MS = 60_000;

/**
 * Turns a presented token into a principal. Postgres is asked at most once per TOKEN_CACHE_TTL_MS
 * per token (misses are cached too, so a flood of bad tokens cannot hammer the database), and
 * `last_used_at` is written at most once a minute per token.
 */
@Injectable()
export class TokenVerifier {
  private readonly cache = new Map<string, CacheEntry>();
  private readonly touched = new Map<string, number>();

  constructor(
    private readonly identity: IdentityRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async verify(token: string): Promise<Principal | null> {
    const digest = digestToken(token);
    const now = Date.now();
    const hit = this.cache.get(digest);
    if (hit && hit.until > now) {
      this.touch(hit.principal, now);
      return hit.principal;
    }
    const found = await this.identity.authenticate(token);
    const principal: Principal | null = found
      ? {
          owner: found.owner,
          tokenId: found.tokenId,
          permissions: PERMISSIONS.filter((p) => roleAllows(found.owner.role, p)),
        }
      : null;
    let until = now + this.config.identity.tokenCacheTtlMs;
    if (found?.expiresAt) until = Math.min(until, found.expiresAt.getTime());
    if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(digest, { principal, until });
    this.touch(principal, now);
    return principal;
  }

  /** Forget a token at once on this replica (revocation). */
  forget(digest: string): void {
    this.cache.delete(digest);
  }

  private touch(principal: Principal | null, now: number): void {
    if (!principal) return;
    const last = this.touched.get(principal.tokenId) ?? 0;
    if (now - last < TOUCH_EVERY_MS) return;
    this.touched.set(principal.tokenId, now);
    if (this.touched.size > MAX_ENTRIES) this.touched.clear();
    this.identity
      .touch(principal.tokenId)
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'could not record token use'));
  }
}
