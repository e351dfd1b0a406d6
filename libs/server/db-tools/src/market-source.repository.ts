import { Inject, Injectable } from '@nestjs/common';
import { AppError, type MarketSource } from '@switchyard/contracts';
import { Prisma, type MarketSource as MarketSourceDb, type PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

function toSource(r: MarketSourceDb): MarketSource {
  return { id: r.id, name: r.name, url: r.url, path: r.path, createdAt: r.createdAt.toISOString() };
}

/** The MCP market's sources (tool registry). */
@Injectable()
export class MarketSourceRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async list(): Promise<MarketSource[]> {
    return (await this.prisma.marketSource.findMany({ orderBy: { name: 'asc' } })).map(toSource);
  }

  async get(name: string): Promise<MarketSource> {
    const row = await this.prisma.marketSource.findUnique({ where: { name } });
    if (!row) throw new AppError('not_found', `no market source named ${name}`);
    return toSource(row);
  }

  async create(s: {
    id: string;
    name: string;
    url: string | null;
    path: string | null;
  }): Promise<MarketSource> {
    try {
      return toSource(await this.prisma.marketSource.create({ data: s }));
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
        throw new AppError('conflict', `a market source named ${s.name} exists already`);
      throw err;
    }
  }

  async delete(name: string): Promise<MarketSource> {
    const row = await this.get(name);
    await this.prisma.marketSource.delete({ where: { name } });
    return row;
  }
}
