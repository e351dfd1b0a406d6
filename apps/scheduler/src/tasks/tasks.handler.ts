import { Controller } from '@nestjs/common';
import {
  Rpc,
  type FinishTask,
  type FinishTasks,
  type RpcRequest,
  type SubmitTaskBody,
  type Task,
  type TaskCapacity,
  type TaskListQuery,
  type TaskPage,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { TasksService } from './tasks.service';

/** `scheduler.tasks.*`: the owner's API, and the executor's claim / attach / finish. */
@Controller()
export class TasksHandler {
  constructor(private readonly tasks: TasksService) {}

  @RpcHandler(Rpc.tasks.submit)
  submit(@RpcPayload(Rpc.tasks.submit) body: SubmitTaskBody, @Caller() ctx: CallContext): Promise<Task> {
    return this.tasks.submit(body, ctx);
  }

  @RpcHandler(Rpc.tasks.list)
  list(@RpcPayload(Rpc.tasks.list) q: TaskListQuery, @Caller() ctx: CallContext): Promise<TaskPage> {
    return this.tasks.list(q, ctx);
  }

  @RpcHandler(Rpc.tasks.get)
  get(@RpcPayload(Rpc.tasks.get) req: { id: string }, @Caller() ctx: CallContext): Promise<Task> {
    return this.tasks.get(req.id, ctx);
  }

  @RpcHandler(Rpc.tasks.capacity)
  capacity(@RpcPayload(Rpc.tasks.capacity) _: unknown, @Caller() ctx: CallContext): Promise<TaskCapacity> {
    return this.tasks.capacity(ctx);
  }

  @RpcHandler(Rpc.tasks.kill)
  kill(@RpcPayload(Rpc.tasks.kill) req: { id: string }, @Caller() ctx: CallContext): Promise<Task> {
    return this.tasks.kill(req.id, ctx);
  }

  @RpcHandler(Rpc.tasks.claim)
  claim(@RpcPayload(Rpc.tasks.claim) req: { id: string }) {
    return this.tasks.claim(req.id);
  }

  @RpcHandler(Rpc.tasks.claimBatch)
  async claimBatch(@RpcPayload(Rpc.tasks.claimBatch) req: RpcRequest<typeof Rpc.tasks.claimBatch>) {
    return { claims: await this.tasks.claimAll(req.ids, req.runIds) };
  }

  @RpcHandler(Rpc.tasks.attachBatch)
  async attachBatch(@RpcPayload(Rpc.tasks.attachBatch) req: RpcRequest<typeof Rpc.tasks.attachBatch>) {
    return { answers: await this.tasks.attachAll(req.runs) };
  }

  @RpcHandler(Rpc.tasks.attach)
  attach(@RpcPayload(Rpc.tasks.attach) req: RpcRequest<typeof Rpc.tasks.attach>) {
    return this.tasks.attach(req.id, req.runId);
  }

  @RpcHandler(Rpc.tasks.finish)
  async finish(@RpcPayload(Rpc.tasks.finish) req: FinishTask): Promise<Record<string, never>> {
    await this.tasks.finish(req);
    return {};
  }

  @RpcHandler(Rpc.tasks.finishBatch)
  async finishBatch(@RpcPayload(Rpc.tasks.finishBatch) req: FinishTasks): Promise<Record<string, never>> {
    await this.tasks.finishAll(req.ends);
    return {};
  }
}
