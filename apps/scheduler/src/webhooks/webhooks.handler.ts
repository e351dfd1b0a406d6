import { Controller } from '@nestjs/common';
import {
  Rpc,
  type CreatedTrigger,
  type DeliverRequest,
  type DeliveryAccepted,
  type DeliveryListQuery,
  type DeliveryPage,
  type Trigger,
  type TriggerBody,
  type TriggerList,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { WebhooksService } from './webhooks.service';

/** `scheduler.triggers.*`: the owner's webhook triggers, and deliveries relayed by the gateway. */
@Controller()
export class WebhooksHandler {
  constructor(private readonly webhooks: WebhooksService) {}

  @RpcHandler(Rpc.webhooks.create)
  create(
    @RpcPayload(Rpc.webhooks.create) body: TriggerBody,
    @Caller() ctx: CallContext,
  ): Promise<CreatedTrigger> {
    return this.webhooks.create(body, ctx);
  }

  @RpcHandler(Rpc.webhooks.list)
  list(@RpcPayload(Rpc.webhooks.list) _: unknown, @Caller() ctx: CallContext): Promise<TriggerList> {
    return this.webhooks.list(ctx);
  }

  @RpcHandler(Rpc.webhooks.rotate)
  rotate(@RpcPayload(Rpc.webhooks.rotate) req: { id: string }, @Caller() ctx: CallContext) {
    return this.webhooks.rotate(req.id, ctx);
  }

  @RpcHandler(Rpc.webhooks.delete)
  delete(@RpcPayload(Rpc.webhooks.delete) req: { id: string }, @Caller() ctx: CallContext): Promise<Trigger> {
    return this.webhooks.delete(req.id, ctx);
  }

  @RpcHandler(Rpc.webhooks.deliveries)
  deliveries(
    @RpcPayload(Rpc.webhooks.deliveries) req: { id: string } & DeliveryListQuery,
    @Caller() ctx: CallContext,
  ): Promise<DeliveryPage> {
    return this.webhooks.deliveries(req.id, { limit: req.limit, cursor: req.cursor }, ctx);
  }

  @RpcHandler(Rpc.webhooks.deliver)
  deliver(@RpcPayload(Rpc.webhooks.deliver) req: DeliverRequest): Promise<DeliveryAccepted> {
    return this.webhooks.deliver(req);
  }
}
