import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type Agent, type AgentPage, type ToolSet } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** The caller's agents; the owner travels in the NATS header, so nobody reaches another owner's agents. */
@Controller()
export class AgentsController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.agentList)
  list(@In() input: Input<typeof Routes.agentList>, @Req() req: GatewayRequest): Promise<AgentPage> {
    return this.bus.call(Rpc.registry.agentList, input.query, asCaller(req));
  }

  @Endpoint(Routes.agentCreate)
  create(@In() input: Input<typeof Routes.agentCreate>, @Req() req: GatewayRequest): Promise<Agent> {
    return this.bus.call(Rpc.registry.agentCreate, { body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.agentGet)
  get(@In() input: Input<typeof Routes.agentGet>, @Req() req: GatewayRequest): Promise<Agent> {
    return this.bus.call(Rpc.registry.agentGet, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.agentUpdate)
  update(@In() input: Input<typeof Routes.agentUpdate>, @Req() req: GatewayRequest): Promise<Agent> {
    return this.bus.call(Rpc.registry.agentUpdate, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.agentDelete)
  delete(@In() input: Input<typeof Routes.agentDelete>, @Req() req: GatewayRequest): Promise<Agent> {
    return this.bus.call(Rpc.registry.agentDelete, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.agentTools)
  tools(@In() input: Input<typeof Routes.agentTools>, @Req() req: GatewayRequest): Promise<ToolSet> {
    return this.bus.call(Rpc.registry.agentTools, { id: input.params.id }, asCaller(req));
  }
}
