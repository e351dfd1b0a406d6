import { Controller, Inject, Req } from '@nestjs/common';
import {
  Routes,
  Rpc,
  type InputAnswerReply,
  type InputRequest,
  type InputRequestList,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import { asCaller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';

/** MCP servers' input requests (elicitation) in the caller's runs and chats: list, read, answer (the executor's). */
@Controller()
export class ElicitationController {
  constructor(@Inject(BUS) private readonly bus: Bus) {}

  @Endpoint(Routes.inputList)
  list(@In() input: Input<typeof Routes.inputList>, @Req() req: GatewayRequest): Promise<InputRequestList> {
    return this.bus.call(Rpc.executor.inputList, input.query, asCaller(req));
  }

  @Endpoint(Routes.inputGet)
  get(@In() input: Input<typeof Routes.inputGet>, @Req() req: GatewayRequest): Promise<InputRequest> {
    return this.bus.call(Rpc.executor.inputGet, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.inputAnswer)
  answer(
    @In() input: Input<typeof Routes.inputAnswer>,
    @Req() req: GatewayRequest,
  ): Promise<InputAnswerReply> {
    return this.bus.call(Rpc.executor.inputAnswer, { id: input.params.id, body: input.body }, asCaller(req));
  }
}
