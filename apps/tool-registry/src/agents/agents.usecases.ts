import { Injectable } from '@nestjs/common';
import {
  type Agent,
  type AgentPage,
  type CreateAgentBody,
  type ToolSet,
  type UpdateAgentBody,
} from '@switchyard/contracts';
import { AgentRepository } from '@switchyard/server-db-tools';
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
  ) {}

  async list(caller: CallContext, pageNum: number, pageSize: number): Promise<AgentPage> {
    const { items, total } = await this.agents.page(ownerOf(caller), pageNum, pageSize);
    return { items, total, pageNum, pageSize };
  }

  get(caller: CallContext, id: number): Promise<Agent> {
    return this.agents.get(ownerOf(caller), id);
  }

  create(caller: CallContext, body: CreateAgentBody): Promise<Agent> {
    return this.agents.create(ownerOf(caller), { ...body, mcpToolIds: cleanIds(body.mcpToolIds) });
  }

  update(caller: CallContext, id: number, body: UpdateAgentBody): Promise<Agent> {
    const { mcpToolIds, ...rest } = body;
    return this.agents.update(ownerOf(caller), id, {
      ...rest,
      ...(mcpToolIds ? { mcpToolIds: cleanIds(mcpToolIds) } : {}),
    });
  }

  delete(caller: CallContext, id: number): Promise<Agent> {
    return this.agents.delete(ownerOf(caller), id);
  }

  async tools(caller: CallContext, id: number): Promise<ToolSet> {
    const agent = await this.agents.get(ownerOf(caller), id);
    return this.toolSets.assemble({ recordIds: agent.mcpToolIds });
  }
}
