import { Injectable } from '@nestjs/common';
import {
  type Agent,
  type AgentPage,
  type CreateAgentBody,
  type ToolSet,
  type UpdateAgentBody,
} from '@switchyard/contracts';
import { AppError } from '@switchyard/contracts';
import { AgentRepository, PluginRepository } from '@switchyard/server-db-tools';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { ToolSetService } from './tool-set.service';

const ownerOf = (caller: CallContext): string => requireOwner(caller, 'agents');

/** Null ids and duplicates are dropped on save too, so what is stored is what is used. */
function cleanIds(ids: Array<number | null>): number[] {
  return [...new Set(ids.filter((id): id is number => id !== null))];
}

/** An owner's agents; nobody sees or changes another owner's agents. */
@Injectable()
export class AgentsUseCases {
  constructor(
    private readonly agents: AgentRepository,
    private readonly toolSets: ToolSetService,
    private readonly plugins: PluginRepository,
  ) {}

  /** Duplicates dropped; a plugin that is not installed is refused by name (disabled ones are kept). */
  private async pluginIds(ids: readonly string[]): Promise<string[]> {
    const wanted = [...new Set(ids)];
    if (!wanted.length) return [];
    const installed = new Set((await this.plugins.all()).map((p) => p.id));
    const unknown = wanted.filter((id) => !installed.has(id));
    if (unknown.length)
      throw new AppError('validation_failed', `no plugin is installed as ${unknown.join(', ')}`, {
        issues: unknown.map((id) => ({
          path: `pluginIds.${wanted.indexOf(id)}`,
          message: `no plugin ${id} is installed`,
        })),
      });
    return wanted;
  }

  async list(caller: CallContext, pageNum: number, pageSize: number): Promise<AgentPage> {
    const { items, total } = await this.agents.page(ownerOf(caller), pageNum, pageSize);
    return { items, total, pageNum, pageSize };
  }

  get(caller: CallContext, id: number): Promise<Agent> {
    return this.agents.get(ownerOf(caller), id);
  }

  async create(caller: CallContext, body: CreateAgentBody): Promise<Agent> {
    const ownerId = ownerOf(caller);
    return this.agents.create(ownerId, {
      ...body,
      mcpToolIds: cleanIds(body.mcpToolIds),
      pluginIds: await this.pluginIds(body.pluginIds),
    });
  }

  async update(caller: CallContext, id: number, body: UpdateAgentBody): Promise<Agent> {
    const ownerId = ownerOf(caller);
    const { mcpToolIds, pluginIds, ...rest } = body;
    return this.agents.update(ownerId, id, {
      ...rest,
      ...(mcpToolIds ? { mcpToolIds: cleanIds(mcpToolIds) } : {}),
      ...(pluginIds ? { pluginIds: await this.pluginIds(pluginIds) } : {}),
    });
  }

  delete(caller: CallContext, id: number): Promise<Agent> {
    return this.agents.delete(ownerOf(caller), id);
  }

  async tools(caller: CallContext, id: number): Promise<ToolSet> {
    const agent = await this.agents.get(ownerOf(caller), id);
    return this.toolSets.assemble({ recordIds: agent.mcpToolIds, pluginIds: agent.pluginIds });
  }
}
