import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { Response } from 'express';
import {
  isTerminalChatEvent,
  Routes,
  Rpc,
  type ChatControlReply,
  type ChatEvent,
  type ChatSession,
  type ChatSessionDetail,
  type ChatSessionPage,
} from '@switchyard/contracts';
import type { Bus } from '@switchyard/server-bus';
import { ChatEventsReader } from '@switchyard/server-db-run-events';
import { BUS } from '@switchyard/server-runtime';
import type { Principal } from '../auth/principal';
import { asCaller, Caller, Endpoint, In, type GatewayRequest, type Input } from '../http/endpoint';
import { RunFeed } from '../runs/run-feed';
import { lastEventIdOf, StreamRelay, type EventLog } from '../runs/stream-relay';

/** AI chat (the executor drives the turns): sessions, messages answered as SSE, confirmation cards, cancel. */
@Controller()
export class ChatController {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly relay: StreamRelay,
    private readonly feed: RunFeed,
    private readonly events: ChatEventsReader,
  ) {}

  @Endpoint(Routes.chatSessionCreate)
  create(
    @In() input: Input<typeof Routes.chatSessionCreate>,
    @Req() req: GatewayRequest,
  ): Promise<ChatSession> {
    return this.bus.call(Rpc.chat.create, input.body, asCaller(req));
  }

  @Endpoint(Routes.chatSessionList)
  list(
    @In() input: Input<typeof Routes.chatSessionList>,
    @Req() req: GatewayRequest,
  ): Promise<ChatSessionPage> {
    return this.bus.call(Rpc.chat.list, input.query, asCaller(req));
  }

  @Endpoint(Routes.chatSessionGet)
  get(
    @In() input: Input<typeof Routes.chatSessionGet>,
    @Req() req: GatewayRequest,
  ): Promise<ChatSessionDetail> {
    return this.bus.call(Rpc.chat.get, { id: input.params.id }, asCaller(req));
  }

  @Endpoint(Routes.chatSessionUpdate)
  update(
    @In() input: Input<typeof Routes.chatSessionUpdate>,
    @Req() req: GatewayRequest,
  ): Promise<ChatSession> {
    return this.bus.call(Rpc.chat.update, { id: input.params.id, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.chatSessionDelete)
  delete(
    @In() input: Input<typeof Routes.chatSessionDelete>,
    @Req() req: GatewayRequest,
  ): Promise<ChatSession> {
    return this.bus.call(Rpc.chat.delete, { id: input.params.id }, asCaller(req));
  }

  /** Starts the turn (a refusal is a problem response, nothing streamed), then relays it to its end. */
  @Endpoint(Routes.chatMessage)
  async message(
    @In() input: Input<typeof Routes.chatMessage>,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    const { sessionId, afterSeq } = await this.bus.call(
      Rpc.chat.send,
      { id: input.params.id, body: input.body },
      asCaller(req),
    );
    return this.relay.relay(this.log(sessionId), afterSeq, req, res);
  }

  @Endpoint(Routes.chatStream)
  async stream(
    @In() input: Input<typeof Routes.chatStream>,
    @Caller() caller: Principal,
    @Req() req: GatewayRequest,
    @Res() res: Response,
  ): Promise<void> {
    await this.events.assertOwned(input.params.id, caller.owner.id);
    return this.relay.relay(this.log(input.params.id), lastEventIdOf(req, input.query.lastEventId), req, res);
  }

  @Endpoint(Routes.chatApprove)
  approve(
    @In() input: Input<typeof Routes.chatApprove>,
    @Req() req: GatewayRequest,
  ): Promise<ChatControlReply> {
    return this.bus.call(Rpc.chat.approve, { ...input.params, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.chatDeny)
  deny(@In() input: Input<typeof Routes.chatDeny>, @Req() req: GatewayRequest): Promise<ChatControlReply> {
    return this.bus.call(Rpc.chat.deny, { ...input.params, body: input.body }, asCaller(req));
  }

  @Endpoint(Routes.chatCancel)
  cancel(
    @In() input: Input<typeof Routes.chatCancel>,
    @Req() req: GatewayRequest,
  ): Promise<ChatControlReply> {
    return this.bus.call(Rpc.chat.cancel, { id: input.params.id }, asCaller(req));
  }

  private log(sessionId: string): EventLog<ChatEvent> {
    return {
      label: { sessionId },
      follow: (listener) => this.feed.followChat(sessionId, listener),
      readAfter: (after, limit) => this.events.readAfter(sessionId, after, limit),
      isTerminal: isTerminalChatEvent,
    };
  }
}
