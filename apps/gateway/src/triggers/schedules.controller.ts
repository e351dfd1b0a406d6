import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type Schedule, type ScheduleList, type SchedulePreview } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Workflow schedules (owned by the scheduler). */
@Controller()
export class SchedulesController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.scheduleCreate)
  create(@In() input: Input<typeof Routes.scheduleCreate>, @Req() req: GatewayRequest): Promise<Schedule> {
    return this.bus.call(Rpc.schedules.create, input.body, asCaller(req));
  }

  @Endpoint(Routes.scheduleList)
  list(@Req() req: GatewayRequest): Promise<ScheduleList> {
    return this.bus.call(Rpc.schedules.list, {}, asCaller(req));
  }

  @Endpoint(Routes.schedulePreview)
  preview(
    @In() input: Input<typeof Routes.schedulePreview>,
    @Req() req: GatewayRequest,
  ): Promise<SchedulePreview> {
    return this.bus.call(Rpc.schedules.preview, input.body, asCaller(req));
  }

  @Endpoint(Routes.scheduleGet)
  get(@In() input: Input<typeof Routes.scheduleGet>, @Req() req: GatewayRequest): Promise<Schedule> {
    return this.bus.call(Rpc.schedules.get, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.scheduleUpdate)
  update(@In() input: Input<typeof Routes.scheduleUpdate>, @Req() req: GatewayRequest): Promise<Schedule> {
    return this.bus.call(Rpc.schedules.update, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.scheduleDelete)
  delete(@In() input: Input<typeof Routes.scheduleDelete>, @Req() req: GatewayRequest): Promise<Schedule> {
    return this.bus.call(Rpc.schedules.delete, { id: input.params.id }, asCaller(req));
  }
}
