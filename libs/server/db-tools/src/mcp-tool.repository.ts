import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  McpSamplingSettings,
  SAMPLING_OFF,
  type McpToolRecord,
  type McpToolStatus,
  type McpToolType,
  type ToolEffect,
} from '@switchyard/contracts';
import { Prisma, type McpTool, type PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

export interface McpToolRow extends Omit<McpToolRecord, 'disabledUntil' | 'oauth'> {
  readonly configEnc: string | null;
  readonly testedToolsHash: string | null;
}

export interface McpToolFilter {
  readonly name?: string | undefined;
  readonly keyword?: string | undefined;
  readonly type?: McpToolType | undefined;
  readonly status?: McpToolStatus | undefined;
}

export interface McpToolWrite {
  name?: string;
  description?: string;
  type?: McpToolType;
  status?: McpToolStatus;
  configEnc?: string | null;
  effect?: ToolEffect | null;
  idempotent?: boolean | null;
  sampling?: McpSamplingSettings;
}

/** A stored sampling setting that no longer parses (an older shape) reads as off. */
function samplingOf(value: Prisma.JsonValue | null): McpSamplingSettings {
  if (value === null) return SAMPLING_OFF;
  const parsed = McpSamplingSettings.safeParse(value);
  return parsed.success ? parsed.data : SAMPLING_OFF;
}

function toRow(t: McpTool): McpToolRow {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    type: t.type,
    status: t.status,
    effect: t.effect,
    idempotent: t.idempotent,
    hasConfig: t.configEnc !== null,
    tested: t.type === 'BUILTIN' || t.testedToolsHash !== null,
    changed: t.changed,
    sampling: samplingOf(t.sampling),
    configEnc: t.configEnc,
    testedToolsHash: t.testedToolsHash,
    createdAt: t.createdAt.toISOString(),
    updatedAt: t.updatedAt.toISOString(),
  };
}

function where(f: McpToolFilter): Prisma.McpToolWhereInput {
  return {
    ...(f.name ? { name: { contains: f.name, mode: 'insensitive' } } : {}),
    ...(f.keyword
      ? {
          OR: [
            { name: { contains: f.keyword, mode: 'insensitive' } },
            { description: { contains: f.keyword, mode: 'insensitive' } },
          ],
        }
      : {}),
    ...(f.type ? { type: f.type } : {}),
    ...(f.status ? { status: f.status } : {}),
  };
}

function uniqueViolation(err: unknown, name: string | undefined): never {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    throw new AppError('conflict', `a tool record named ${JSON.stringify(name)} already exists`);
  }
  throw err;
}

/** Tool records (admin-managed, shared by all owners: the catalog is one). */
@Injectable()
export class McpToolRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async page(
    f: McpToolFilter,
    pageNum: number,
    pageSize: number,
  ): Promise<{ items: McpToolRow[]; total: number }> {
    const [total, rows] = await this.prisma.$transaction([
      this.prisma.mcpTool.count({ where: where(f) }),
      this.prisma.mcpTool.findMany({
        where: where(f),
        orderBy: { id: 'asc' },
        skip: (pageNum - 1) * pageSize,
        take: pageSize,
      }),
    ]);
    return { items: rows.map(toRow), total };
  }

  async all(f: McpToolFilter): Promise<McpToolRow[]> {
    return (await this.prisma.mcpTool.findMany({ where: where(f), orderBy: { id: 'asc' } })).map(toRow);
  }

  async get(id: number): Promise<McpToolRow> {
    const row = await this.prisma.mcpTool.findUnique({ where: { id } });
    if (!row) throw new AppError('not_found', `tool record ${id} does not exist`);
    return toRow(row);
  }

  async findByIds(ids: number[]): Promise<McpToolRow[]> {
    return (await this.prisma.mcpTool.findMany({ where: { id: { in: ids } } })).map(toRow);
  }

  async create(data: Required<Pick<McpToolWrite, 'name' | 'type'>> & McpToolWrite): Promise<McpToolRow> {
    try {
      return toRow(await this.prisma.mcpTool.create({ data }));
    } catch (err) {
      uniqueViolation(err, data.name);
    }
  }

  async update(id: number, data: McpToolWrite): Promise<McpToolRow> {
    try {
      return toRow(await this.prisma.mcpTool.update({ where: { id }, data }));
    } catch (err) {
      if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2025') {
        throw new AppError('not_found', `tool record ${id} does not exist`);
      }
      uniqueViolation(err, data.name);
    }
  }

  async deleteMany(ids: number[]): Promise<number[]> {
    const existing = await this.prisma.mcpTool.findMany({ where: { id: { in: ids } }, select: { id: true } });
    await this.prisma.mcpTool.deleteMany({ where: { id: { in: existing.map((e) => e.id) } } });
    return existing.map((e) => e.id);
  }

  /** Records the tool definitions a successful Test saw (the record's version does not move). */
  async markTested(id: number, hash: string): Promise<void> {
    const row = await this.prisma.mcpTool.findUnique({ where: { id }, select: { updatedAt: true } });
    if (!row) throw new AppError('not_found', `tool record ${id} does not exist`);
    await this.prisma.mcpTool.update({
      where: { id },
      data: { testedToolsHash: hash, changed: false, updatedAt: row.updatedAt },
    });
  }

  /** The server now describes its tools differently from what was tested. */
  async markChanged(id: number): Promise<void> {
    const row = await this.prisma.mcpTool.findUnique({ where: { id }, select: { updatedAt: true } });
    if (!row) return;
    await this.prisma.mcpTool.update({ where: { id }, data: { changed: true, updatedAt: row.updatedAt } });
  }

  /** Creates ENABLED BUILTIN records for built-ins that have none; safe when replicas race. Returns how many it created. */
  async ensureBuiltins(tools: Array<{ name: string; description: string }>): Promise<number> {
    if (!tools.length) return 0;
    const created = await this.prisma.mcpTool.createMany({
      data: tools.map((t) => ({
        name: t.name,
        description: t.description,
        type: 'BUILTIN' as const,
        status: 'ENABLED' as const,
      })),
      skipDuplicates: true,
    });
    return created.count;
  }
}
