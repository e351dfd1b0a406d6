import { Controller } from '@nestjs/common';
import {
  Rpc,
  type InputAnswerReply,
  type InputRequest,
  type InputRequestList,
  type RpcRequest,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { InputRequests } from './input-requests.usecase';

/** `executor.inputs.*`: any replica answers; an answer is handed to the replica holding the wait. */
@Controller()
export class InputsHandler {
  constructor(private readonly inputs: InputRequests) {}

  @RpcHandler(Rpc.executor.inputList)
  list(
    @RpcPayload(Rpc.executor.inputList) q: RpcRequest<typeof Rpc.executor.inputList>,
    @Caller() ctx: CallContext,
  ): Promise<InputRequestList> {
    return this.inputs.list(q, ctx);
  }

  @RpcHandler(Rpc.executor.inputGet)
  get(
    @RpcPayload(Rpc.executor.inputGet) req: RpcRequest<typeof Rpc.executor.inputGet>,
    @Caller() ctx: CallContext,
  ): Promise<InputRequest> {
    return this.inputs.get(req.id, ctx);
  }

  @RpcHandler(Rpc.executor.inputAnswer)
  answer(
    @RpcPayload(Rpc.executor.inputAnswer) req: RpcRequest<typeof Rpc.executor.inputAnswer>,
    @Caller() ctx: CallContext,
  ): Promise<InputAnswerReply> {
    return this.inputs.answer(req.id, req.body, ctx);
  }
}
