import { Controller, Inject, Req } from '@nestjs/common';
import { Routes, Rpc, type Task, type TaskCapacity, type TaskPage } from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** Background tasks (owned by the scheduler). `capacity` is declared before `{id}` so it matches first. */
@Controller()
export class TasksController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.taskCapacity)
  capacity(@Req() req: GatewayRequest): Promise<TaskCapacity> {
    return this.bus.call(Rpc.tasks.capacity, {}, asCaller(req));
  }

  @Endpoint(Routes.taskList)
  list(@In() input: Input<typeof Routes.taskList>, @Req() req: GatewayRequest): Promise<TaskPage> {
    return this.bus.call(Rpc.tasks.list, input.query, asCaller(req));
  }

  @Endpoint(Routes.taskSubmit)
  submit(@In() input: Input<typeof Routes.taskSubmit>, @Req() req: GatewayRequest): Promise<Task> {
    return this.bus.call(Rpc.tasks.submit, input.body, asCaller(req));
  }

  @Endpoint(Routes.taskGet)
  get(@In() input: Input<typeof Routes.taskGet>, @Req() req: GatewayRequest): Promise<Task> {
    return this.bus.call(Rpc.tasks.get, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.taskKill)
  kill(@In() input: Input<typeof Routes.taskKill>, @Req() req: GatewayRequest): Promise<Task> {
    return this.bus.call(Rpc.tasks.kill, { id: input.params.id }, asCaller(req));
  }
}
