import { Controller } from '@nestjs/common';
import {
  Rpc,
  type ChatMessageBody,
  type ChatControlReply,
  type ChatSessionListQuery,
  type CreateChatSessionBody,
  type RpcRequest,
} from '@switchyard/contracts';
import type { CallContext } from '@switchyard/server-observability';
import { Caller, RpcHandler, RpcPayload } from '@switchyard/server-runtime';
import { ChatSessions } from './chat-sessions.usecase';
import { SendChatMessage } from './send-chat-message.usecase';

/** `executor.chat.*`: any replica answers; approve, deny and cancel reach the turn's own replica. */
@Controller()
export class ChatHandler {
  constructor(
    private readonly sessions: ChatSessions,
    private readonly sends: SendChatMessage,
  ) {}

  @RpcHandler(Rpc.chat.create)
  create(@RpcPayload(Rpc.chat.create) body: CreateChatSessionBody, @Caller() ctx: CallContext) {
    return this.sessions.create(body, ctx);
  }

  @RpcHandler(Rpc.chat.list)
  list(@RpcPayload(Rpc.chat.list) q: ChatSessionListQuery, @Caller() ctx: CallContext) {
    return this.sessions.list(q, ctx);
  }

  @RpcHandler(Rpc.chat.get)
  get(@RpcPayload(Rpc.chat.get) req: RpcRequest<typeof Rpc.chat.get>, @Caller() ctx: CallContext) {
    return this.sessions.get(req.id, ctx);
  }

  @RpcHandler(Rpc.chat.update)
  update(@RpcPayload(Rpc.chat.update) req: RpcRequest<typeof Rpc.chat.update>, @Caller() ctx: CallContext) {
    return this.sessions.update(req.id, req.body, ctx);
  }

  @RpcHandler(Rpc.chat.delete)
  delete(@RpcPayload(Rpc.chat.delete) req: RpcRequest<typeof Rpc.chat.delete>, @Caller() ctx: CallContext) {
    return this.sessions.delete(req.id, ctx);
  }

  @RpcHandler(Rpc.chat.send)
  send(
    // Parsed by the pipe: defaults are filled in.
    @RpcPayload(Rpc.chat.send) req: { id: string; body: ChatMessageBody },
    @Caller() ctx: CallContext,
  ) {
    return this.sends.send(req.id, req.body, ctx);
  }

  @RpcHandler(Rpc.chat.approve)
  approve(
    @RpcPayload(Rpc.chat.approve) req: RpcRequest<typeof Rpc.chat.approve>,
    @Caller() ctx: CallContext,
  ): Promise<ChatControlReply> {
    return this.sessions.approve(req.id, req.callId, req.body.arguments, ctx);
  }

  @RpcHandler(Rpc.chat.deny)
  deny(
    @RpcPayload(Rpc.chat.deny) req: RpcRequest<typeof Rpc.chat.deny>,
    @Caller() ctx: CallContext,
  ): Promise<ChatControlReply> {
    return this.sessions.deny(req.id, req.callId, req.body.reason, ctx);
  }

  @RpcHandler(Rpc.chat.cancel)
  cancel(
    @RpcPayload(Rpc.chat.cancel) req: RpcRequest<typeof Rpc.chat.cancel>,
    @Caller() ctx: CallContext,
  ): Promise<ChatControlReply> {
    return this.sessions.cancel(req.id, ctx);
  }
}
