import { Inject, Injectable } from '@nestjs/common';
import { AppError, type Agent, type ModelSettings } from '@switchyard/contracts';
import { Prisma, type Agent as AgentModel, type PrismaClient } from '@prisma/client';
import { PRISMA } from '@switchyard/server-db';

function toAgent(a: AgentModel): Agent {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    systemPrompt: a.systemPrompt,
    modelSettings: (a.modelSettings ?? {}) as ModelSettings,
    mcpToolIds: a.mcpToolIds,
    pluginIds: a.pluginIds,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}

export interface AgentWrite {
  name?: string;
  description?: string;
  systemPrompt?: string;
  modelSettings?: ModelSettings;
  mcpToolIds?: number[];
  pluginIds?: string[];
}

function mapWriteError(err: unknown, name: string | undefined): never {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
    throw new AppError('conflict', `you already have an agent named ${JSON.stringify(name)}`);
  }
  throw err;
}

/** Agents belong to their owner: every method takes the owner id, and another owner's agent is "not found". */
@Injectable()
export class AgentRepository {
  constructor(@Inject(PRISMA) private readonly prisma: PrismaClient) {}

  async page(ownerId: string, pageNum: number, pageSize: number): Promise<{ items: Agent[]; total: number }> {
    const [total, rows] = await this.prisma.$transaction([
      this.prisma.agent.count({ where: { ownerId } }),
      this.prisma.agent.findMany({
        where: { ownerId },
        orderBy: { id: 'asc' },
        skip: (pageNum - 1) * pageSize,
        take: pageSize,
      }),
    ]);
    return { items: rows.map(toAgent), total };
  }

  async get(ownerId: string, id: number): Promise<Agent> {
    const row = await this.prisma.agent.findFirst({ where: { id, ownerId } });
    if (!row) throw new AppError('not_found', `agent ${id} does not exist`);
    return toAgent(row);
  }

  async create(ownerId: string, data: Required<AgentWrite>): Promise<Agent> {
    try {
      return toAgent(await this.prisma.agent.create({ data: { ...data, ownerId } }));
    } catch (err) {
      mapWriteError(err, data.name);
    }
  }

  async update(ownerId: string, id: number, data: AgentWrite): Promise<Agent> {
    await this.get(ownerId, id);
    try {
      return toAgent(await this.prisma.agent.update({ where: { id }, data }));
    } catch (err) {
      mapWriteError(err, data.name);
    }
  }

  async delete(ownerId: string, id: number): Promise<Agent> {
    const agent = await this.get(ownerId, id);
    await this.prisma.agent.deleteMany({ where: { id, ownerId } });
    return agent;
  }
}
