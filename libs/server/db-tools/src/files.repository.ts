import { Inject, Injectable } from '@nestjs/common';
import { AppError, type StoredFile } from '@switchyard/contracts';
import type { PrismaClient, StoredFile as StoredFileRow } from '@prisma/client';
import { decodeKeysetCursor, encodeKeysetCursor, PRISMA } from '@switchyard/server-db';

function toFile(r: StoredFileRow): StoredFile {
  return {
    id: r.id,
    name: r.name,
    contentType: r.contentType,
    size: Number(r.size),
    sha256: r.sha256,
    createdAt: r.createdAt.toISOString(),
  };
}

/** Uploaded files belong to their owner: every method takes the owner id; another owner's is "not found". */
@Injectable()
export class FilesRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async create(ownerId: string, f: Omit<StoredFile, 'createdAt'>): Promise<StoredFile> {
    return toFile(await this.prisma.storedFile.create({ data: { ...f, size: BigInt(f.size), ownerId } }));
  }

  /** Newest first, keyset-paged (`nextCursor` null on the last page). */
  async page(
    ownerId: string,
    limit: number,
    cursor: string | undefined,
  ): Promise<{ items: StoredFile[]; nextCursor: string | null }> {
    const after = cursor ? decodeKeysetCursor(cursor) : undefined;
    const rows = await this.prisma.storedFile.findMany({
      where: {
        ownerId,
        ...(after
          ? { OR: [{ createdAt: { lt: after.at } }, { createdAt: after.at, id: { gt: after.id } }] }
          : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
      take: limit + 1,
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map(toFile),
      nextCursor: rows.length > limit && last ? encodeKeysetCursor(last.createdAt, last.id) : null,
    };
  }

  async get(ownerId: string, id: string): Promise<StoredFile> {
    const row = await this.prisma.storedFile.findFirst({ where: { id, ownerId } });
    if (!row) throw new AppError('not_found', `file ${id} does not exist`, { details: { fileId: id } });
    return toFile(row);
  }

  /** The owner's files among `ids`, by id (missing ones are simply absent). */
  async many(ownerId: string, ids: readonly string[]): Promise<Map<string, StoredFile>> {
    const rows = await this.prisma.storedFile.findMany({ where: { ownerId, id: { in: [...ids] } } });
    return new Map(rows.map((r) => [r.id, toFile(r)]));
  }

  async totalBytes(ownerId: string): Promise<number> {
    const sum = await this.prisma.storedFile.aggregate({ where: { ownerId }, _sum: { size: true } });
    return Number(sum._sum.size ?? 0n);
  }

  async delete(ownerId: string, id: string): Promise<StoredFile> {
    const file = await this.get(ownerId, id);
    await this.prisma.storedFile.deleteMany({ where: { id, ownerId } });
    return file;
  }
}
