import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  ChatControl,
  chatControlSubject,
  type ChatControlReply,
  type ElicitationReply,
  type InputAnswerReply,
} from '@switchyard/contracts';
import { isNoResponders, type BusPort } from '@switchyard/server-bus';
import { BUS } from '@switchyard/server-runtime';
import type { ChatTurn } from './chat-turn';
import { InputWaits } from '../inputs/input-waits';

/** What the replica needs of a turn it drives (a ChatTurn; a stand-in in tests). */
export type DrivenTurn = Pick<
  ChatTurn,
  'sessionId' | 'approve' | 'deny' | 'cancel' | 'abandon' | 'setMode' | 'input'
>;

/** What each control message is answered with. */
export type ChatControlAnswer<M extends ChatControl> = M extends { action: 'elicit' }
  ? ElicitationReply
  : M extends { action: 'input' }
    ? InputAnswerReply
    : ChatControlReply;

function act(turn: DrivenTurn, msg: ChatControl, inputs: InputWaits): unknown {
  switch (msg.action) {
    case 'elicit':
      return turn.input(msg);
    case 'input':
      // The wait is this replica's (it drives the turn): settle it.
      return inputs.answer(msg.elicitationId, msg.reply, msg.answeredBy);
    case 'approve':
      return turn.approve(msg.callId, msg.arguments);
    case 'deny':
      return turn.deny(msg.callId, msg.reason);
    case 'cancel':
      return turn.cancel(msg.reason);
    case 'mode':
      return turn.setMode(msg.permissionMode);
    case 'ping':
      return { accepted: true, status: 'running' };
  }
}

/**
 * The chat turns this replica drives. Each answers its session's control subject (approve, deny,
 * cancel), so those reach it from whichever replica the request landed on. A session whose replica
 * died is found out when nobody answers its subject: the next message takes the session over.
 */
@Injectable()
export class ActiveChats implements BeforeApplicationShutdown {
  readonly replica = randomUUID();
  private readonly turns = new Map<
    string,
    { turn: DrivenTurn; unsubscribe: () => void; closed: Promise<void> }
  >();

  constructor(
    @Inject(BUS) private readonly bus: BusPort,
    private readonly inputs: InputWaits,
  ) {}

  /** Starts answering the session's control subject; `closed` resolves when the turn has ended. */
  async register(turn: DrivenTurn, closed: Promise<void>): Promise<void> {
    const unsubscribe = await this.bus.respond(chatControlSubject(turn.sessionId), (payload) =>
      Promise.resolve().then(() => act(turn, ChatControl.parse(payload), this.inputs)),
    );
    this.turns.set(turn.sessionId, { turn, unsubscribe, closed });
  }

  closed(sessionId: string): void {
    const entry = this.turns.get(sessionId);
    if (!entry) return;
    this.turns.delete(sessionId);
    entry.unsubscribe();
  }

  /** Forwards a control message to whichever replica drives the session's turn. */
  async control<M extends ChatControl>(sessionId: string, msg: M): Promise<ChatControlAnswer<M>> {
    const local = this.turns.get(sessionId)?.turn;
    if (local) return (await act(local, msg, this.inputs)) as ChatControlAnswer<M>;
    return (await this.bus.request(chatControlSubject(sessionId), msg)) as ChatControlAnswer<M>;
  }

  /** Whether some replica still drives the session's turn (nobody answering says no). */
  async alive(sessionId: string): Promise<boolean> {
    try {
      await this.control(sessionId, { action: 'ping' });
      return true;
    } catch (err) {
      return !isNoResponders(err);
    }
  }

  /** Graceful stop: turns in progress end as failed (unavailable) and their end is recorded. */
  async beforeApplicationShutdown(): Promise<void> {
    const open = [...this.turns.values()];
    for (const { turn } of open)
      turn.abandon('the executor replica running this chat shut down; send the message again');
    await Promise.race([
      Promise.all(open.map((e) => e.closed)),
      new Promise((resolve) => setTimeout(resolve, 5_000).unref()),
    ]);
  }
}
