import { Inject, Injectable } from '@nestjs/common';
import { MEMORY_INJECT_MAX, memoryPrompt, Rpc, type ChatEventData } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';
import { BUS } from '@switchyard/server-runtime';

/** What a context provider adds to a turn: lines for the system prompt, and the memories behind them. */
export interface ChatContextLines {
  readonly lines: readonly string[];
  /** Shown to the person as a `memory_injected` event when not empty. */
  readonly memories: ChatEventData<'memory_injected'>['memories'];
}

export interface ChatContextRequest {
  readonly ownerId: string;
  readonly sessionId: string;
  readonly agentId: number | null;
  /** The person's new message. */
  readonly content: string;
  /** The caller, for what the provider asks other services. */
  readonly ctx: CallContext;
}

/**
 * Extra system context for a chat turn (cross-session memory plugs in here). Asked once per turn,
 * before the first model call; a provider that fails leaves the turn without its lines.
 */
export interface ChatContextProvider {
  contextFor(req: ChatContextRequest): Promise<ChatContextLines>;
}

export const CHAT_CONTEXT = Symbol('CHAT_CONTEXT');

/** The default: nothing to add. */
export class NoChatContext implements ChatContextProvider {
  contextFor(): Promise<ChatContextLines> {
    return Promise.resolve({ lines: [], memories: [] });
  }
}

/**
 * Cross-session memory in chat: the owner's memories relevant to the new message (memory on, and
 * any matched), put in the system prompt and shown to the person as `memory_injected`.
 */
@Injectable()
export class MemoryChatContext implements ChatContextProvider {
  constructor(@Inject(BUS) private readonly bus: BusPort) {}

  async contextFor(req: ChatContextRequest): Promise<ChatContextLines> {
    const found = await this.bus.call(
      Rpc.memory.search,
      { query: req.content, limit: MEMORY_INJECT_MAX, touch: true },
      { ctx: req.ctx },
    );
    if (!found.enabled || found.items.length === 0) return { lines: [], memories: [] };
    return {
      lines: [memoryPrompt(found.items)],
      memories: found.items.map((m) => ({ id: m.id, text: m.text, score: m.score })),
    };
  }
}
