import { Inject, Injectable } from '@nestjs/common';
import {
  AppError,
  chatTitleOf,
  type Budget,
  type ChatMessageBody,
  type ChatSession,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { createChatModel } from '@switchyard/server-agents';
import type { AppConfig } from '@switchyard/server-config';
import type { BusPort } from '@switchyard/server-bus';
import { ACTIVE_CHAT_STATUSES, ChatRepository } from '@switchyard/server-db-runs';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';
import { PermissionsService } from '../permissions/permissions.service';
import { RunLauncher, toolsOf, type RunAgent } from '../runs/run-launcher';
import { ActiveChats } from './active-chats';
import { InputWaits } from '../inputs/input-waits';
import { CHAT_CONTEXT, type ChatContextProvider } from './chat-context';
import { DEFAULT_SYSTEM_PROMPT } from './chat-tools';
import { ChatTurn, type TurnLimits } from './chat-turn';
import { ChatWriter } from './chat-writer';
import { FLOW_ASSISTANT_PROMPT, FlowAssistant, type ScopedTool } from './flow-assistant';
import { chatOwner } from './chat-sessions.usecase';

/** The platform's ceilings on a turn, tightened (never loosened) by the session's budget. */
export function turnLimits(platform: AppConfig['chat'], budget: Budget | null): TurnLimits {
  return {
    maxToolCalls: Math.min(platform.maxToolCalls, budget?.maxToolCalls ?? Infinity),
    maxTokens: Math.min(platform.maxTokens, budget?.maxTokens ?? Infinity),
    maxWallMs: Math.min(platform.turnTimeoutMs, budget?.maxWallMs ?? Infinity),
  };
}

/**
 * Sends a message: checks the session is free, builds the model (refusing before anything is stored
 * when none is configured), gathers the tools the model may call, takes the turn on this replica,
 * stores the message and the turn's first event, and answers with the sequence to stream after while
 * the turn goes on here.
 */
@Injectable()
export class SendChatMessage {
  constructor(
    private readonly repo: ChatRepository,
    private readonly active: ActiveChats,
    private readonly launcher: RunLauncher,
    private readonly permissions: PermissionsService,
    private readonly inputWaits: InputWaits,
    @Inject(CHAT_CONTEXT) private readonly context: ChatContextProvider,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async send(
    id: string,
    body: ChatMessageBody,
    ctx: CallContext,
  ): Promise<{ sessionId: string; afterSeq: number }> {
    const ownerId = chatOwner(ctx);
    const found = await this.repo.getDriven(ownerId, id);
    // A turn whose replica stopped answering is taken over; a live one is a conflict.
    let takeOver: string | undefined;
    if (ACTIVE_CHAT_STATUSES.has(found.status)) {
      if (await this.active.alive(id)) throw this.busy(id);
      takeOver = found.replica ?? '';
    }
    const { replica: _replica, ...session } = found;
    const [agent, catalog] = await Promise.all([
      session.agentId === null ? undefined : this.agent(session.agentId, ctx),
      this.launcher.catalog(ctx),
    ]);
    const model = createChatModel(this.config.llm, agent?.modelSettings);
    // The caller's live catalog, or for an agent its tool set within that catalog.
    const tools = [...toolsOf(catalog, agent).values()];
    await this.permissions.warm(ownerId);
    const claimed = await this.repo.claimTurn(
      ownerId,
      id,
      this.active.replica,
      takeOver,
      this.config.runs.foreground,
    );
    if (!claimed) throw this.busy(id);
    try {
      // The calls the dead replica left open will not end any more.
      if (takeOver !== undefined) await this.repo.closeOpenCalls(ownerId, id, 'cancelled');
      if (!session.title) await this.repo.titleIfEmpty(ownerId, id, chatTitleOf(body.content));
      const message = await this.repo.addMessage(ownerId, id, { role: 'user', content: body.content });
      const writer = new ChatWriter(this.repo, this.bus, ownerId, id, this.active.replica);
      let closed!: () => void;
      const ended = new Promise<void>((resolve) => (closed = resolve));
      const assistant = body.flow
        ? new FlowAssistant(body.flow, tools, {
            bus: this.bus,
            ctx,
            permissionMode: session.permissionMode,
            onProposal: (proposal, callId) => writer.emit('flow_proposal', { callId, proposal }),
            onSaved: (saved, callId) => writer.emit('flow_saved', { callId, ...saved }),
          })
        : undefined;
      const scoped = new Map((assistant?.tools() ?? []).map((t) => [t.descriptor.name, t]));
      const turn = this.turn(session, ctx, model, agent, tools, scoped, writer, () => {
        this.active.closed(id);
        closed();
      });
      await this.active.register(turn, ended);
      const first = await turn.begin(message);
      void turn.run(body.content);
      return { sessionId: id, afterSeq: first - 1 };
    } catch (err) {
      this.active.closed(id);
      await this.repo.releaseTurn(ownerId, id, this.active.replica).catch(() => undefined);
      throw err;
    }
  }

  private turn(
    session: ChatSession,
    ctx: CallContext,
    model: ReturnType<typeof createChatModel>,
    agent: RunAgent | undefined,
    tools: readonly ToolDescriptor[],
    scoped: ReadonlyMap<string, ScopedTool>,
    writer: ChatWriter,
    onClosed: () => void,
  ): ChatTurn {
    const ownerId = session.ownerId;
    return new ChatTurn({
      session,
      ctx,
      model,
      systemPrompt: [
        agent?.systemPrompt.trim() || DEFAULT_SYSTEM_PROMPT,
        ...(scoped.size ? [FLOW_ASSISTANT_PROMPT] : []),
      ].join('\n\n'),
      // The canvas's tools first: a catalog tool of the same name never hides them.
      tools: [...[...scoped.values()].map((t) => t.descriptor), ...tools.filter((t) => !scoped.has(t.name))],
      scoped,
      limits: turnLimits(this.config.chat, session.budget),
      log: this.repo,
      writer,
      replica: this.active.replica,
      bus: this.bus,
      logger: this.logger,
      context: this.context,
      toolTimeoutMs: this.config.tools.timeoutMs,
      resultLimit: this.config.runs.resultLimitBytes,
      gate: (call, callId, tool, permissionMode) =>
        this.permissions.decide({
          ownerId,
          call,
          // An external effect asks unless the session runs in full-access (the seed's confirmation card).
          step: { id: callId, requiresApproval: tool.effect === 'external' },
          config: {
            permissionMode,
            stepApproval: 'none',
            capabilityMode: 'read-write',
            unattended: false,
          },
        }),
      observe: (event, data) => this.permissions.fire(event, ownerId, data),
      inputWaits: this.inputWaits,
      onClosed,
    });
  }

  private async agent(agentId: number, ctx: CallContext): Promise<RunAgent> {
    try {
      return await this.launcher.agent(agentId, ctx);
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        throw new AppError('not_found', `agent ${agentId} of this chat no longer exists; start a new chat`);
      throw err;
    }
  }

  private busy(id: string): AppError {
    return new AppError(
      'conflict',
      `chat session ${id} has a turn in progress; wait for it to end or cancel it`,
    );
  }
}
