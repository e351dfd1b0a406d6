import { Controller } from '@nestjs/common';
import type { z } from 'zod';
import {
  Rpc,
  type Memory,
  type MemoryPage,
  type MemorySearchResult,
  type MemorySettings,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { MemoryService } from './memory.service';

type In<K extends keyof typeof Rpc.memory> = z.output<(typeof Rpc.memory)[K]['request']>;

/** `planner.memory.*`: the caller's memories and whether memory is on for them. */
@Controller()
export class MemoryHandler {
  constructor(private readonly memory: MemoryService) {}

  @RpcHandler(Rpc.memory.remember)
  remember(@RpcPayload(Rpc.memory.remember) q: In<'remember'>, @Caller() ctx: CallContext): Promise<Memory> {
    return this.memory.remember(ctx, q.text);
  }

  @RpcHandler(Rpc.memory.search)
  search(
    @RpcPayload(Rpc.memory.search) q: In<'search'>,
    @Caller() ctx: CallContext,
  ): Promise<MemorySearchResult> {
    return this.memory.search(ctx, q);
  }

  @RpcHandler(Rpc.memory.list)
  list(@RpcPayload(Rpc.memory.list) q: In<'list'>, @Caller() ctx: CallContext): Promise<MemoryPage> {
    return this.memory.list(ctx, q);
  }

  @RpcHandler(Rpc.memory.forget)
  forget(@RpcPayload(Rpc.memory.forget) q: In<'forget'>, @Caller() ctx: CallContext): Promise<Memory> {
    return this.memory.forget(ctx, q.id);
  }

  @RpcHandler(Rpc.memory.settingsGet)
  settings(
    @RpcPayload(Rpc.memory.settingsGet) _: In<'settingsGet'>,
    @Caller() ctx: CallContext,
  ): Promise<MemorySettings> {
    return this.memory.settings(ctx);
  }

  @RpcHandler(Rpc.memory.settingsPut)
  putSettings(
    @RpcPayload(Rpc.memory.settingsPut) q: In<'settingsPut'>,
    @Caller() ctx: CallContext,
  ): Promise<MemorySettings> {
    return this.memory.putSettings(ctx, q);
  }
}
