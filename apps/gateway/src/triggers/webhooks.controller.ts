import type { BlockList } from 'node:net';
import { Controller, Inject, Req } from '@nestjs/common';
import {
  AppError,
  Routes,
  Rpc,
  type CreatedTrigger,
  type DeliveryAccepted,
  type DeliveryPage,
  type Trigger,
  type TriggerList,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { APP_CONFIG, BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { deliveryOf, sourceAllowed, sourceList, type HookRequest } from './hook-intake';

/** Webhook triggers (owned by the scheduler) and the public delivery endpoint. */
@Controller()
export class WebhooksController {
  private readonly sources: BlockList;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.sources = sourceList(config.webhooks.allowedSources);
  }

  @Endpoint(Routes.triggerCreate)
  create(
    @In() input: Input<typeof Routes.triggerCreate>,
    @Req() req: GatewayRequest,
  ): Promise<CreatedTrigger> {
    return this.bus.call(Rpc.webhooks.create, input.body, asCaller(req));
  }

  @Endpoint(Routes.triggerList)
  list(@Req() req: GatewayRequest): Promise<TriggerList> {
    return this.bus.call(Rpc.webhooks.list, {}, asCaller(req));
  }

  @Endpoint(Routes.triggerRotate)
  rotate(
    @In() input: Input<typeof Routes.triggerRotate>,
    @Req() req: GatewayRequest,
  ): Promise<{ secret: string }> {
    return this.bus.call(Rpc.webhooks.rotate, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.triggerDelete)
  delete(@In() input: Input<typeof Routes.triggerDelete>, @Req() req: GatewayRequest): Promise<Trigger> {
    return this.bus.call(Rpc.webhooks.delete, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.triggerDeliveries)
  deliveries(
    @In() input: Input<typeof Routes.triggerDeliveries>,
    @Req() req: GatewayRequest,
  ): Promise<DeliveryPage> {
    return this.bus.call(Rpc.webhooks.deliveries, { id: input.params.id, ...input.query }, asCaller(req));
  }

  @Endpoint(Routes.hookDeliver)
  deliver(@In() input: Input<typeof Routes.hookDeliver>, @Req() req: HookRequest): Promise<DeliveryAccepted> {
    // req.ip honours X-Forwarded-For only from the trusted (loopback/private) proxies.
    if (!sourceAllowed(this.sources, req.ip))
      throw new AppError(
        'forbidden',
        `webhook deliveries are accepted from ${this.config.webhooks.allowedSources.join(', ')} only (WEBHOOK_ALLOWED_SOURCES)`,
      );
    return this.bus.call(Rpc.webhooks.deliver, deliveryOf(req, input.params.triggerId, input.body), {
      ctx: { correlationId: req.correlationId },
    });
  }
}
