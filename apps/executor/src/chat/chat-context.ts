import type { ChatEventData } from '@switchyard/contracts';

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
