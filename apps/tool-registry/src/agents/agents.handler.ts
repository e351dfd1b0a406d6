import { Controller } from '@nestjs/common';
import type { z } from 'zod';
import { Rpc } from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { AgentsUseCases } from './agents.usecases';
import { ToolSetService } from './tool-set.service';

type In<K extends keyof typeof Rpc.registry> = z.output<(typeof Rpc.registry)[K]['request']>;

@Controller()
export class AgentsHandler {
  constructor(
    private readonly agents: AgentsUseCases,
    private readonly toolSets: ToolSetService,
  ) {}

  @RpcHandler(Rpc.registry.toolSet)
  toolSet(@RpcPayload(Rpc.registry.toolSet) req: In<'toolSet'>) {
    return this.toolSets.assemble(req);
  }

  @RpcHandler(Rpc.registry.agentList)
  list(@RpcPayload(Rpc.registry.agentList) q: In<'agentList'>, @Caller() caller: CallContext) {
    return this.agents.list(caller, q.pageNum, q.pageSize);
  }

  @RpcHandler(Rpc.registry.agentGet)
  get(@RpcPayload(Rpc.registry.agentGet) q: In<'agentGet'>, @Caller() caller: CallContext) {
    return this.agents.get(caller, q.id);
  }

  @RpcHandler(Rpc.registry.agentCreate)
  create(@RpcPayload(Rpc.registry.agentCreate) q: In<'agentCreate'>, @Caller() caller: CallContext) {
    return this.agents.create(caller, q.body);
  }

  @RpcHandler(Rpc.registry.agentUpdate)
  update(@RpcPayload(Rpc.registry.agentUpdate) q: In<'agentUpdate'>, @Caller() caller: CallContext) {
    return this.agents.update(caller, q.id, q.body);
  }

  @RpcHandler(Rpc.registry.agentDelete)
  delete(@RpcPayload(Rpc.registry.agentDelete) q: In<'agentDelete'>, @Caller() caller: CallContext) {
    return this.agents.delete(caller, q.id);
  }

  @RpcHandler(Rpc.registry.agentTools)
  tools(@RpcPayload(Rpc.registry.agentTools) q: In<'agentTools'>, @Caller() caller: CallContext) {
    return this.agents.tools(caller, q.id);
  }
}
