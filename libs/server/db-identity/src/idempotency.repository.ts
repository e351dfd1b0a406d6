import { Inject, Injectable } from '@nestjs/common';
import type { PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

/** Keys are honoured this long; an older key starts afresh. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;

export type IdempotencyClaim =
  | { readonly kind: 'mine' }
  | { readonly kind: 'other-body' }
  | { readonly kind: 'pending' }
  | { readonly kind: 'done'; readonly status: number; readonly response: unknown };

/** Idempotency keys of the start routes (gateway): one row per owner, route and key. */
@Injectable()
export class IdempotencyRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  /** Claims the key for this body, or says what holds it: the same body (pending or answered) or another. */
  async claim(ownerId: string, route: string, key: string, bodyDigest: string): Promise<IdempotencyClaim> {
    await this.prisma.$executeRawUnsafe(
      `DELETE FROM idempotent_request WHERE owner_id = $1::uuid AND route = $2 AND key = $3
         AND created_at < now() - make_interval(hours => $4)`,
      ownerId,
      route,
      key,
      IDEMPOTENCY_WINDOW_HOURS,
    );
    const [mine] = await this.prisma.$queryRawUnsafe<Array<{ key: string }>>(
      `INSERT INTO idempotent_request (owner_id, route, key, body_digest) VALUES ($1::uuid, $2, $3, $4)
       ON CONFLICT DO NOTHING RETURNING key`,
      ownerId,
      route,
      key,
      bodyDigest,
    );
    if (mine) return { kind: 'mine' };
    const [held] = await this.prisma.$queryRawUnsafe<
      Array<{ body_digest: string; status: number | null; response: unknown }>
    >(
      `SELECT body_digest, status, response FROM idempotent_request WHERE owner_id = $1::uuid AND route = $2 AND key = $3`,
      ownerId,
      route,
      key,
    );
    if (!held) return this.claim(ownerId, route, key, bodyDigest);
    if (held.body_digest.trim() !== bodyDigest) return { kind: 'other-body' };
    return held.status === null
      ? { kind: 'pending' }
      : { kind: 'done', status: held.status, response: held.response };
  }

  async complete(
    ownerId: string,
    route: string,
    key: string,
    status: number,
    response: unknown,
  ): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `UPDATE idempotent_request SET status = $4, response = $5::jsonb WHERE owner_id = $1::uuid AND route = $2 AND key = $3`,
      ownerId,
      route,
      key,
      status,
      JSON.stringify(response ?? null),
    );
  }

  /** A failed first attempt gives the key back: errors are not replayed, a retry runs again. */
  async release(ownerId: string, route: string, key: string): Promise<void> {
    await this.prisma.$executeRawUnsafe(
      `DELETE FROM idempotent_request WHERE owner_id = $1::uuid AND route = $2 AND key = $3 AND status IS NULL`,
      ownerId,
      route,
      key,
    );
  }
}
