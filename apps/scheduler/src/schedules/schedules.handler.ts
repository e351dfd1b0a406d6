import { Controller } from '@nestjs/common';
import {
  Rpc,
  type Schedule,
  type ScheduleBody,
  type ScheduleList,
  type SchedulePreview,
  type SchedulePreviewBody,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { SchedulesService } from './schedules.service';

/** `scheduler.schedules.*`: the owner's schedules (the REST routes and the task_schedule tool). */
@Controller()
export class SchedulesHandler {
  constructor(private readonly schedules: SchedulesService) {}

  @RpcHandler(Rpc.schedules.create)
  create(
    @RpcPayload(Rpc.schedules.create) body: ScheduleBody,
    @Caller() ctx: CallContext,
  ): Promise<Schedule> {
    return this.schedules.create(body, ctx);
  }

  @RpcHandler(Rpc.schedules.list)
  list(@RpcPayload(Rpc.schedules.list) _: unknown, @Caller() ctx: CallContext): Promise<ScheduleList> {
    return this.schedules.list(ctx);
  }

  @RpcHandler(Rpc.schedules.get)
  get(@RpcPayload(Rpc.schedules.get) req: { id: string }, @Caller() ctx: CallContext): Promise<Schedule> {
    return this.schedules.get(req.id, ctx);
  }

  @RpcHandler(Rpc.schedules.update)
  update(
    @RpcPayload(Rpc.schedules.update) req: { id: string; body: ScheduleBody },
    @Caller() ctx: CallContext,
  ): Promise<Schedule> {
    return this.schedules.update(req.id, req.body, ctx);
  }

  @RpcHandler(Rpc.schedules.delete)
  delete(
    @RpcPayload(Rpc.schedules.delete) req: { id: string },
    @Caller() ctx: CallContext,
  ): Promise<Schedule> {
    return this.schedules.delete(req.id, ctx);
  }

  @RpcHandler(Rpc.schedules.preview)
  preview(@RpcPayload(Rpc.schedules.preview) body: SchedulePreviewBody): SchedulePreview {
    return this.schedules.preview(body);
  }
}
