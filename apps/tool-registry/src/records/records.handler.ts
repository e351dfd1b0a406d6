import { Controller } from '@nestjs/common';
import { Rpc } from '@switchyard/contracts';
import type { z } from 'zod';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { RecordsUseCases } from './records.usecases';
import { RecordOAuthUseCases } from './record-oauth.usecases';

type In<K extends keyof typeof Rpc.registry> = z.output<(typeof Rpc.registry)[K]['request']>;

@Controller()
export class RecordsHandler {
  constructor(
    private readonly records: RecordsUseCases,
    private readonly oauth: RecordOAuthUseCases,
  ) {}

  @RpcHandler(Rpc.registry.list)
  list(@RpcPayload(Rpc.registry.list) q: In<'list'>) {
    return this.records.list(q);
  }

  @RpcHandler(Rpc.registry.all)
  all(@RpcPayload(Rpc.registry.all) q: In<'all'>) {
    return this.records.all(q);
  }

  @RpcHandler(Rpc.registry.options)
  options(@RpcPayload(Rpc.registry.options) _: In<'options'>) {
    return this.records.options();
  }

  @RpcHandler(Rpc.registry.get)
  get(@RpcPayload(Rpc.registry.get) q: In<'get'>) {
    return this.records.get(q.id);
  }

  @RpcHandler(Rpc.registry.create)
  create(@RpcPayload(Rpc.registry.create) body: In<'create'>, @Caller() caller: CallContext) {
    return this.records.create(caller, body);
  }

  @RpcHandler(Rpc.registry.update)
  update(@RpcPayload(Rpc.registry.update) body: In<'update'>, @Caller() caller: CallContext) {
    return this.records.update(caller, body);
  }

  @RpcHandler(Rpc.registry.setStatus)
  setStatus(@RpcPayload(Rpc.registry.setStatus) body: In<'setStatus'>, @Caller() caller: CallContext) {
    return this.records.setStatus(caller, body.id, body.status);
  }

  @RpcHandler(Rpc.registry.test)
  test(@RpcPayload(Rpc.registry.test) body: In<'test'>, @Caller() caller: CallContext) {
    return this.records.test(caller, body.id);
  }

  @RpcHandler(Rpc.registry.connect)
  connect(@RpcPayload(Rpc.registry.connect) body: In<'connect'>, @Caller() caller: CallContext) {
    return this.oauth.connect(caller, body);
  }

  @RpcHandler(Rpc.registry.oauthCallback)
  oauthCallback(
    @RpcPayload(Rpc.registry.oauthCallback) q: In<'oauthCallback'>,
    @Caller() caller: CallContext,
  ) {
    return this.oauth.callback(caller, q);
  }

  @RpcHandler(Rpc.registry.delete)
  delete(@RpcPayload(Rpc.registry.delete) body: In<'delete'>, @Caller() caller: CallContext) {
    return this.records.delete(caller, body.ids);
  }
}
