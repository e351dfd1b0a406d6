import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { AppError, TOKEN_PREFIX, type ApiTokenInfo, type Owner, type Role } from '@switchyard/contracts';
import type { ApiToken, Owner as OwnerRecord, PrismaClient } from '@prisma/client';
import { decodeKeysetCursor, encodeKeysetCursor, PRISMA } from '@switchyard/server-db';

export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function mintToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export interface AuthenticatedToken {
  readonly tokenId: string;
  readonly owner: Owner;
  readonly expiresAt: Date | null;
}

function toOwner(o: OwnerRecord): Owner {
  return { id: o.id, name: o.name, role: o.role, createdAt: o.createdAt.toISOString() };
}

function toInfo(t: ApiToken & { owner: OwnerRecord }): ApiTokenInfo {
  return {
    id: t.id,
    ownerId: t.ownerId,
    ownerName: t.owner.name,
    label: t.label,
    prefix: t.prefix,
    createdAt: t.createdAt.toISOString(),
    lastUsedAt: t.lastUsedAt?.toISOString() ?? null,
    expiresAt: t.expiresAt?.toISOString() ?? null,
    revokedAt: t.revokedAt?.toISOString() ?? null,
  };
}

/** Owners and API tokens. Tokens are stored only as SHA-256 digests. */
@Injectable()
export class IdentityRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async findOwnerByName(name: string): Promise<Owner | null> {
    const o = await this.prisma.owner.findUnique({ where: { name } });
    return o ? toOwner(o) : null;
  }

  /** The names of these owners, by id (owners that are gone are left out). */
  async ownerNames(ids: readonly string[]): Promise<Map<string, string>> {
    if (!ids.length) return new Map();
    const rows = await this.prisma.owner.findMany({
      where: { id: { in: [...ids] } },
      select: { id: true, name: true },
    });
    return new Map(rows.map((o) => [o.id, o.name]));
  }

  /** Creates the owner when missing. An existing owner keeps its role unless `forceRole` is set. */
  async ensureOwner(
    name: string,
    role: Role,
    forceRole = false,
  ): Promise<{ owner: Owner; created: boolean }> {
    const existing = await this.prisma.owner.findUnique({ where: { name } });
    if (existing) {
      if (forceRole && existing.role !== role) {
        const updated = await this.prisma.owner.update({ where: { id: existing.id }, data: { role } });
        return { owner: toOwner(updated), created: false };
      }
      return { owner: toOwner(existing), created: false };
    }
    // Two gateways may race here at boot: the unique name decides, the loser reads the winner's row.
    const created = await this.prisma.owner
      .upsert({ where: { name }, create: { name, role }, update: {} })
      .catch(async () => this.prisma.owner.findUniqueOrThrow({ where: { name } }));
    return { owner: toOwner(created), created: true };
  }

  async createToken(
    ownerId: string,
    opts: { label?: string | undefined; expiresAt?: Date | undefined; token?: string | undefined } = {},
  ): Promise<{ token: string; info: ApiTokenInfo }> {
    const token = opts.token ?? mintToken();
    const row = await this.prisma.apiToken.create({
      data: {
        ownerId,
        digest: digestToken(token),
        prefix: token.slice(0, 10),
        label: opts.label ?? null,
        expiresAt: opts.expiresAt ?? null,
      },
      include: { owner: true },
    });
    return { token, info: toInfo(row) };
  }

  /**
   * Makes sure `token` authenticates as `ownerId` (used for SWITCHYARD_ADMIN_TOKEN). Idempotent and
   * safe when several gateways start at once.
   */
  async ensureToken(ownerId: string, token: string, label: string): Promise<void> {
    const digest = digestToken(token);
    await this.prisma.apiToken.upsert({
      where: { digest },
      create: { ownerId, digest, prefix: token.slice(0, 10), label },
      update: { ownerId, revokedAt: null },
    });
  }

  /** The owner behind a presented token, or null when it is unknown, revoked or expired. */
  async authenticate(token: string, now = new Date()): Promise<AuthenticatedToken | null> {
    const row = await this.prisma.apiToken.findUnique({
      where: { digest: digestToken(token) },
      include: { owner: true },
    });
    if (!row || row.revokedAt || (row.expiresAt && row.expiresAt <= now)) return null;
    return { tokenId: row.id, owner: toOwner(row.owner), expiresAt: row.expiresAt };
  }

  async touch(tokenId: string, at = new Date()): Promise<void> {
    await this.prisma.apiToken.updateMany({ where: { id: tokenId }, data: { lastUsedAt: at } });
  }

  async listTokens(
    ownerId: string,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<{ items: ApiTokenInfo[]; nextCursor: string | null }> {
    const cursor = page.cursor ? decodeKeysetCursor(page.cursor) : undefined;
    const after = cursor ? { createdAt: cursor.at, id: cursor.id } : undefined;
    const rows = await this.prisma.apiToken.findMany({
      where: {
        ownerId,
        ...(after
          ? {
              OR: [
                { createdAt: { lt: after.createdAt } },
                { createdAt: after.createdAt, id: { gt: after.id } },
              ],
            }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: page.limit + 1,
      include: { owner: true },
    });
    const items = rows.slice(0, page.limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toInfo),
      nextCursor: rows.length > page.limit && last ? encodeKeysetCursor(last.createdAt, last.id) : null,
    };
  }

  /** Revokes a token of `ownerId` (or of anyone when `ownerId` is null: admin path). */
  async revokeToken(
    tokenId: string,
    ownerId: string | null,
  ): Promise<{ info: ApiTokenInfo; digest: string }> {
    const row = await this.prisma.apiToken.findUnique({ where: { id: tokenId }, include: { owner: true } });
    if (!row || (ownerId !== null && row.ownerId !== ownerId)) {
      throw new AppError('not_found', `token ${tokenId} does not exist`);
    }
    const updated = row.revokedAt
      ? row
      : await this.prisma.apiToken.update({
          where: { id: tokenId },
          data: { revokedAt: new Date() },
          include: { owner: true },
        });
    return { info: toInfo(updated), digest: updated.digest };
  }
}
