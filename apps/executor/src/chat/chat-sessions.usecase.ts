import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  Rpc,
  type ChatControlReply,
  type ChatSession,
  type ChatSessionDetail,
  type ChatSessionListQuery,
  type ChatSessionPage,
  type CreateChatSessionBody,
  type UpdateChatSessionBody,
} from '@switchyard/contracts';
import { isNoResponders, type BusPort } from '@switchyard/server-bus';
import { ACTIVE_CHAT_STATUSES, ChatRepository, InputRequestsRepository } from '@switchyard/server-db-runs';
import { requireOwner, type CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';
import { ActiveChats } from './active-chats';

/** Whose chat a call is about: always the caller's own (admins included: chats are private). */
export function chatOwner(ctx: CallContext): string {
  return requireOwner(ctx, 'chat sessions');
}

/** Sessions: create, list, read, change, delete; and the control verbs, routed to the turn's replica. */
@Injectable()
export class ChatSessions {
  constructor(
    private readonly repo: ChatRepository,
    private readonly active: ActiveChats,
    private readonly inputs: InputRequestsRepository,
    @Inject(BUS) private readonly bus: BusPort,
  ) {}

  async create(body: CreateChatSessionBody, ctx: CallContext): Promise<ChatSession> {
    const ownerId = chatOwner(ctx);
    // The agent must be one the caller can see (not_found otherwise).
    if (body.agentId !== undefined) await this.bus.call(Rpc.registry.agentGet, { id: body.agentId }, { ctx });
    return this.repo.create(ownerId, body);
  }

  list(q: ChatSessionListQuery, ctx: CallContext): Promise<ChatSessionPage> {
    return this.repo.list(chatOwner(ctx), q);
  }

  async get(id: string, ctx: CallContext): Promise<ChatSessionDetail> {
    const ownerId = chatOwner(ctx);
    const [detail, inputs] = await Promise.all([
      this.repo.detail(ownerId, id),
      this.inputs.pendingOf(ownerId, { sessionId: id }),
    ]);
    return { ...detail, inputRequests: inputs };
  }

  async update(id: string, body: UpdateChatSessionBody, ctx: CallContext): Promise<ChatSession> {
    const session = await this.repo.update(chatOwner(ctx), id, body);
    // A turn in progress takes a new mode from its next call (a budget from the next turn).
    if (body.permissionMode && ACTIVE_CHAT_STATUSES.has(session.status))
      await this.active
        .control(id, { action: 'mode', permissionMode: body.permissionMode })
        .catch(() => undefined);
    return session;
  }

  async delete(id: string, ctx: CallContext): Promise<ChatSession> {
    const ownerId = chatOwner(ctx);
    const session = await this.repo.get(ownerId, id);
    if (ACTIVE_CHAT_STATUSES.has(session.status))
      await this.active
        .control(id, { action: 'cancel', reason: 'the session was deleted' })
        .catch(() => undefined);
    return this.repo.delete(ownerId, id);
  }

  approve(id: string, callId: string, args: Record<string, unknown> | undefined, ctx: CallContext) {
    return this.control(id, { action: 'approve', callId, ...(args ? { arguments: args } : {}) }, ctx);
  }

  deny(id: string, callId: string, reason: string | undefined, ctx: CallContext) {
    return this.control(id, { action: 'deny', callId, ...(reason ? { reason } : {}) }, ctx);
  }

  async cancel(id: string, ctx: CallContext): Promise<ChatControlReply> {
    const session = await this.repo.get(chatOwner(ctx), id);
    if (!ACTIVE_CHAT_STATUSES.has(session.status)) return { accepted: false, status: session.status };
    try {
      return await this.active.control(id, { action: 'cancel', reason: 'cancelled by the person' });
    } catch (err) {
      if (isNoResponders(err)) return { accepted: false, status: session.status };
      throw err;
    }
  }

  private async control(
    id: string,
    msg: { action: 'approve' | 'deny'; callId: string; arguments?: Record<string, unknown>; reason?: string },
    ctx: CallContext,
  ): Promise<ChatControlReply> {
    const session = await this.repo.get(chatOwner(ctx), id);
    if (session.status !== 'awaiting_approval')
      throw new AppError(
        'conflict',
        `chat session ${id} has no call waiting for approval (it is ${session.status})`,
        {
          details: { status: session.status },
        },
      );
    try {
      return await this.active.control(id, msg);
    } catch (err) {
      if (isNoResponders(err))
        throw new AppError(
          'conflict',
          `no executor replica drives chat session ${id} any more; send the message again`,
          { details: { status: session.status } },
        );
      throw err;
    }
  }
}
