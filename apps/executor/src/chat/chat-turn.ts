import { randomUUID } from 'node:crypto';
import { AIMessage, ToolMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import {
  AppError,
  Events,
  MAX_INPUTS_PER_CALL,
  Rpc,
  type BudgetLimit,
  type ElicitationAsk,
  type ElicitationReply,
  type InputRequest,
  type BudgetUsage,
  type ChatControlReply,
  type ChatError,
  type ChatMessage,
  type ChatSession,
  type ChatToolCallRequest,
  type ChatTurnStatus,
  type PermissionDecision,
  type PermissionMode,
  type ToolDescriptor,
  type ToolResult,
} from '@switchyard/contracts';
import { checkInputs } from '@switchyard/plan';
import { toolCallOf, type ToolCall } from '@switchyard/permissions';
import type { BusPort } from '@switchyard/server-bus';
import type { ChatRepository } from '@switchyard/server-db-runs';
import type { CallContext, Logger } from '@switchyard/server-observability';
import { expiringDeadline, type PausableDeadline } from '@switchyard/server-runtime';
import { shownRequest, type InputPort } from '../inputs/input-waits';
import { capResult, resultValue } from '../runs/step-result';
import type { ChatContextProvider } from './chat-context';
import { conversation, resultForModel, textOf, TurnTools } from './chat-tools';
import type { ChatWriter } from './chat-writer';
import type { ScopedTool } from './flow-assistant';

/** The ceilings of one turn (the platform's, tightened by the session's budget). */
export interface TurnLimits {
  readonly maxToolCalls: number;
  readonly maxTokens: number;
  readonly maxWallMs: number;
}

/** What the turn needs of a chat model (a LangChain BaseChatModel; a scripted one in unit tests). */
export interface TurnModelRunnable {
  stream(messages: BaseMessage[], options: { signal: AbortSignal }): Promise<AsyncIterable<AIMessageChunk>>;
}
export interface TurnModel extends TurnModelRunnable {
  bindTools?(tools: ReturnType<TurnTools['definitions']>): TurnModelRunnable;
}

/** What the turn needs of the chat tables. */
export type TurnLog = Pick<ChatRepository, 'addMessage' | 'closeOpenCalls' | 'history'>;

export interface ChatTurnInit {
  readonly session: ChatSession;
  readonly ctx: CallContext;
  readonly model: TurnModel;
  readonly systemPrompt: string;
  readonly tools: readonly ToolDescriptor[];
  /** Tools of this turn only (the flow assistant's), run here instead of by the registry. */
  readonly scoped?: ReadonlyMap<string, ScopedTool>;
  readonly limits: TurnLimits;
  readonly log: TurnLog;
  readonly writer: ChatWriter;
  /** The replica driving the turn (the session row's `replica`). */
  readonly replica: string;
  readonly bus: BusPort;
  readonly logger: Logger;
  readonly context: ChatContextProvider;
  /** A tool call's timeout (the registry's TOOL_TIMEOUT_MS); never past the turn's wall time. */
  readonly toolTimeoutMs: number;
  /** What the model reads of a result at most (characters), and what the history keeps (bytes). */
  readonly resultLimit: number;
  /** The permission gate: rules, hooks, the session's mode, the dangerous-command floor. */
  readonly gate: (
    call: ToolCall,
    callId: string,
    tool: ToolDescriptor,
    mode: PermissionMode,
  ) => PermissionDecision | Promise<PermissionDecision>;
  readonly observe: (event: 'post_tool_use' | 'post_tool_use_failure', data: Record<string, unknown>) => void;
  /** MCP servers' input requests during the turn's calls: shown in the chat and waited on. */
  readonly inputWaits: InputPort;
  /** Told once the turn's end is recorded (or given up). */
  readonly onClosed: () => void;
  /** Milliseconds since some origin (performance.now by default). */
  readonly now?: () => number;
}

/** Why a turn stops before the model finished. */
type Stop =
  | { readonly kind: 'cancelled'; readonly reason: string }
  | { readonly kind: 'budget'; readonly limit: BudgetLimit; readonly message: string }
  | { readonly kind: 'abandoned'; readonly reason: string };

class Stopped extends Error {
  constructor(readonly stop: Stop) {
    super(stop.kind === 'budget' ? stop.message : stop.reason);
  }
}

/** A person's answer at a confirmation card. */
type Verdict =
  | { readonly approved: true; readonly arguments?: Record<string, unknown> }
  | { readonly approved: false; readonly reason: string };

interface Waiting {
  readonly callId: string;
  readonly tool: ToolDescriptor;
  readonly settle: (v: Verdict) => void;
  readonly fail: (err: unknown) => void;
}

/**
 * One turn of a chat, driven by the replica that took it: the model answers (tokens streamed), each
 * tool call it asks for passes the permission gate and, allowed or approved, the registry; results
 * and refusals go back to the model until it answers without calls. Every step is an event of the
 * session's log. Ends with `message_complete`, `cancelled` or `error` (a crossed limit is
 * `budget_exceeded` naming it); a model or tool failure ends the turn, never the service.
 */
export class ChatTurn {
  readonly sessionId: string;
  private readonly abort = new AbortController();
  private readonly tools: TurnTools;
  private readonly now: () => number;
  private readonly started: number;
  private stop: Stop | undefined;
  private waiting: Waiting | undefined;
  private invocation: string | undefined;
  /** The registry call in flight: its call id, deadline and the input requests it made. */
  private current:
    | {
        readonly invocationId: string;
        readonly callId: string;
        readonly deadline: PausableDeadline;
        asked: number;
      }
    | undefined;
  private tokens = 0;
  private toolCalls = 0;
  private status: ChatTurnStatus = 'running';
  private wallTimer: NodeJS.Timeout | undefined;
  /** The session's permission mode (a change reaches the turn in progress: from its next call). */
  private mode: PermissionMode;
  /** Writes of finished calls still in flight (the next call starts meanwhile); settled before the model reads. */
  private settling: Array<Promise<unknown>> = [];
  /** Tool messages not written yet, in the order of the calls; written in batches, one at a time. */

  constructor(private readonly init: ChatTurnInit) {
    this.sessionId = init.session.id;
    this.mode = init.session.permissionMode;
    this.tools = new TurnTools(init.tools);
    this.now = init.now ?? (() => performance.now());
    this.started = this.now();
  }

  private get ownerId(): string {
    return this.init.session.ownerId;
  }

  /** Records the turn's start (the person's message stored first); resolves with its sequence number. */
  async begin(message: ChatMessage): Promise<number> {
    const e = await this.init.writer.emit('turn_started', {
      messageId: message.id,
      content: message.content,
    });
    return e.seq;
  }

  /** Runs the turn to its end; never rejects. */
  async run(content: string): Promise<void> {
    this.wallTimer = setTimeout(
      () =>
        this.halt({
          kind: 'budget',
          limit: 'maxWallMs',
          message: `the turn ran past its wall-time limit of ${this.init.limits.maxWallMs} ms`,
        }),
      this.init.limits.maxWallMs,
    );
    try {
      await this.converse(content);
    } catch (err) {
      await this.ended(err);
    } finally {
      clearTimeout(this.wallTimer);
      this.init.onClosed();
    }
  }

  // ---- control (from the session's control subject) ---------------------------------------

  approve(callId: string, args: Record<string, unknown> | undefined): ChatControlReply {
    const w = this.waitingFor(callId);
    // Edits that do not fit leave the card waiting.
    if (args) {
      const issues = checkInputs(w.tool.inputSchema, args);
      if (issues.length)
        throw new AppError(
          'validation_failed',
          `the edited arguments do not fit ${w.tool.name}: ` +
            issues.map((i) => `${i.path.replace(/^inputs\./, '')} ${i.message}`).join('; '),
          { details: { issues } },
        );
    }
    this.waiting = undefined;
    w.settle({ approved: true, ...(args ? { arguments: args } : {}) });
    return { accepted: true, status: 'running' };
  }

  deny(callId: string, reason: string | undefined): ChatControlReply {
    const w = this.waitingFor(callId);
    this.waiting = undefined;
    w.settle({ approved: false, reason: reason?.trim() || 'the person said no' });
    return { accepted: true, status: 'running' };
  }

  cancel(reason: string): ChatControlReply {
    this.halt({ kind: 'cancelled', reason });
    return { accepted: true, status: 'cancelled' };
  }

  setMode(mode: PermissionMode): ChatControlReply {
    this.mode = mode;
    return { accepted: true, status: this.status };
  }

  /**
   * A server's input request during the call in flight (relayed by the registry): shown in the chat
   * and waited on until the person answers, ELICITATION_TIMEOUT_MS passes or the turn stops (both
   * cancel). The call's deadline stands still meanwhile; the turn's wall time does not.
   */
  async input(ask: ElicitationAsk): Promise<ElicitationReply> {
    const { init } = this;
    const call = this.current;
    const callId = ask.asker.kind === 'chat' ? ask.asker.callId : undefined;
    if (
      !call ||
      call.invocationId !== ask.invocationId ||
      call.callId !== callId ||
      ask.ownerId !== this.ownerId ||
      this.stop
    )
      throw new AppError('conflict', `chat ${this.sessionId} has no call ${ask.invocationId} in flight`);
    const what = {
      ownerId: this.ownerId,
      target: { sessionId: this.sessionId, callId: call.callId },
      label: init.session.title,
      invocationId: ask.invocationId,
      tool: ask.tool,
      server: ask.server,
      request: ask.request,
    };
    const shown = (r: InputRequest) => ({
      callId: call.callId,
      tool: ask.tool,
      ...shownRequest(ask, r),
    });
    call.asked++;
    if (call.asked > MAX_INPUTS_PER_CALL) {
      const reason = `this call already asked for input ${MAX_INPUTS_PER_CALL} times; declined`;
      const r = await init.inputWaits.declined(what, reason);
      await init.writer.emit('input_requested', shown(r));
      await init.writer.emit('input_answered', {
        callId: call.callId,
        elicitationId: r.id,
        action: 'decline',
        by: 'platform',
        reason,
      });
      return { action: 'decline' };
    }
    const resume = call.deadline.pause();
    try {
      const { request, settled } = await init.inputWaits.ask(what, {
        signal: this.abort.signal,
        stopReason: () =>
          `the turn stopped: ${this.stop?.kind === 'budget' ? this.stop.message : (this.stop?.reason ?? 'cancelled')}`,
        announce: (r) => init.writer.emit('input_requested', shown(r)),
      });
      await init.writer
        .emit('input_answered', {
          callId: call.callId,
          elicitationId: request.id,
          action: settled.reply.action,
          ...(settled.reply.content ? { content: settled.reply.content } : {}),
          by: settled.by,
          ...(settled.reason ? { reason: settled.reason } : {}),
        })
        .catch(() => undefined);
      return settled.reply;
    } finally {
      resume();
    }
  }

  /** The replica stops: the turn ends as failed (unavailable), in-flight calls are stopped. */
  abandon(reason: string): void {
    this.halt({ kind: 'abandoned', reason });
  }

  private waitingFor(callId: string): Waiting {
    const w = this.waiting;
    if (!w || w.callId !== callId)
      throw new AppError(
        'conflict',
        w
          ? `call ${callId} is not waiting for approval; ${w.callId} is`
          : `no call of this chat is waiting for approval (the turn is ${this.status})`,
      );
    return w;
  }

  private halt(stop: Stop): void {
    if (this.stop) return;
    this.stop = stop;
    this.abort.abort(new Stopped(stop));
    this.waiting?.fail(new Stopped(stop));
    this.waiting = undefined;
    if (this.invocation) this.init.bus.emit(Events.toolCancel, { invocationId: this.invocation });
  }

  private throwIfStopped(): void {
    if (this.stop) throw new Stopped(this.stop);
  }

  // ---- the loop ---------------------------------------------------------------------------

  private async converse(content: string): Promise<void> {
    const { init } = this;
    const { messages, calls } = await init.log.history(this.ownerId, this.sessionId);
    const extra = await init.context
      .contextFor({
        ownerId: this.ownerId,
        sessionId: this.sessionId,
        agentId: init.session.agentId,
        content,
        ctx: init.ctx,
      })
      .catch((err: Error) => {
        init.logger.warn({ sessionId: this.sessionId, err: err.message }, 'chat context provider failed');
        return { lines: [], memories: [] };
      });
    if (extra.memories.length) await init.writer.emit('memory_injected', { memories: [...extra.memories] });
    const system = [init.systemPrompt, ...extra.lines].join('\n\n');
    const history = conversation(system, messages, calls);
    const model = this.tools.tools.length ? init.model.bindTools!(this.tools.definitions()) : init.model;
    for (;;) {
      this.throwIfStopped();
      const reply = await this.answer(model, history);
      const answer = textOf(reply.content);
      const asked = (reply.tool_calls ?? []).map((c) => ({
        callId: this.callIdFor(c.id, calls),
        name: c.name,
        args: (c.args ?? {}) as Record<string, unknown>,
      }));
      const assistant = await init.log.addMessage(this.ownerId, this.sessionId, {
        role: 'assistant',
        content: answer,
        callIds: asked.map((c) => c.callId),
        usage: this.usage(),
      });
      if (!asked.length) {
        await init.writer.emit(
          'message_complete',
          { messageId: assistant.id, content: answer, usage: this.usage() },
          { status: 'completed', release: true },
        );
        this.status = 'completed';
        return;
      }
      history.push(
        new AIMessage({
          content: answer,
          tool_calls: asked.map((c) => ({ id: c.callId, name: c.name, args: c.args, type: 'tool_call' })),
        }),
      );
      for (const c of asked) {
        const text = await this.call({ callId: c.callId, tool: c.name, arguments: c.args }, assistant.id);
        history.push(new ToolMessage({ tool_call_id: c.callId, content: text }));
      }
      await this.settled();
    }
  }

  /** One model call, its tokens streamed; counts its tokens against the budget. */
  private async answer(model: TurnModelRunnable, history: readonly BaseMessage[]): Promise<AIMessageChunk> {
    let full: AIMessageChunk | undefined;
    try {
      const stream = await model.stream([...history], { signal: this.abort.signal });
      for await (const chunk of stream) {
        this.init.writer.token(textOf(chunk.content));
        full = full ? full.concat(chunk) : chunk;
      }
    } catch (err) {
      this.throwIfStopped();
      throw new AppError('unavailable', `the model failed: ${(err as Error).message}`);
    }
    this.throwIfStopped();
    if (!full) throw new AppError('unavailable', 'the model answered nothing');
    this.tokens += full.usage_metadata?.total_tokens ?? estimateTokens(history, full);
    if (this.tokens > this.init.limits.maxTokens)
      throw new Stopped({
        kind: 'budget',
        limit: 'maxTokens',
        message: `the turn used ${this.tokens} model tokens, over its limit of ${this.init.limits.maxTokens}`,
      });
    return full;
  }

  /** A call id unique in the session (the model's own, unless missing or already used). */
  private callIdFor(id: string | undefined, seen: ReadonlyMap<string, unknown>): string {
    const base = id && /^[\x21-\x7e]{1,150}$/.test(id) ? id : `call_${randomUUID().slice(0, 12)}`;
    return seen.has(base) ? `${base}_${randomUUID().slice(0, 8)}` : base;
  }

  /**
   * One tool call: recorded, gated (and maybe confirmed by the person), invoked, recorded again.
   * Resolves with what the model reads: the result, the failure, or the refusal with its reason.
   */
  private async call(req: ChatToolCallRequest, messageId: string): Promise<string> {
    const { init } = this;
    const tool = this.tools.resolve(req.tool);
    const name = tool?.name ?? req.tool;
    this.toolCalls++;
    if (this.toolCalls > init.limits.maxToolCalls)
      throw new Stopped({
        kind: 'budget',
        limit: 'maxToolCalls',
        message: `the model asked for more than ${init.limits.maxToolCalls} tool calls in one turn`,
      });
    const shown = { callId: req.callId, tool: name, arguments: req.arguments };
    // The gate decides before anything is written, so the call's row and its event go out once.
    const verdict = tool
      ? init.gate(toolCallOf(tool, req.arguments), req.callId, tool, this.mode)
      : undefined;
    const decision = verdict instanceof Promise ? await verdict : verdict;
    this.throwIfStopped();
    // The call's row and its event are one write.
    const effect = tool ? { effect: tool.effect } : {};
    const recorded = init.writer.emit('tool_call', { ...shown, ...effect }, undefined, {
      newCalls: [
        {
          ...shown,
          messageId,
          ...effect,
          ...(decision
            ? {
                decision,
                status:
                  decision.decision === 'allow'
                    ? 'running'
                    : decision.decision === 'ask'
                      ? 'awaiting_approval'
                      : 'pending',
              }
            : {}),
        },
      ],
    });
    // A read tool changes nothing, so it may run while its call is being recorded; any other tool
    // runs only once the record is durable (a crash never leaves an effect the history does not show).
    if (tool && decision?.decision === 'allow' && tool.effect === 'read')
      return this.invoke(req.callId, tool, req.arguments, decision, false, recorded);
    await recorded;
    if (!tool || !decision)
      return this.failed(req.callId, name, {
        code: 'not_found',
        message: `no tool named ${req.tool} is offered in this chat`,
      });
    if (decision.decision === 'deny') return this.refused(req.callId, name, decision, decision.reason);
    if (decision.decision === 'allow')
      return this.invoke(req.callId, tool, req.arguments, decision, false, recorded);
    const answer = await this.confirm(req, tool, decision);
    if (!answer.approved)
      return this.refused(req.callId, name, decision, `denied by the person: ${answer.reason}`);
    const args = answer.arguments ?? req.arguments;
    const edited = answer.arguments ? { editedArguments: args } : {};
    // Every page following the session closes the card, showing the edits the call runs with.
    await init.writer.emit(
      'approved',
      { callId: req.callId, ...edited },
      { status: 'running' },
      { callPatches: [{ callId: req.callId, status: 'running', ...edited }] },
    );
    return this.invoke(req.callId, tool, args, decision, true, recorded);
  }

  /** Parks the turn at the confirmation card until the person answers (or the turn stops). */
  private async confirm(
    req: ChatToolCallRequest,
    tool: ToolDescriptor,
    decision: PermissionDecision,
  ): Promise<Verdict> {
    const { init } = this;
    // The card exists before it is announced: an answer may come as soon as the event is out.
    const answered = new Promise<Verdict>((settle, fail) => {
      this.waiting = { callId: req.callId, tool, settle, fail };
    });
    answered.catch(() => undefined);
    this.status = 'awaiting_approval';
    await init.writer.emit(
      'approval_requested',
      { ...req, tool: tool.name, effect: tool.effect, reason: decision.reason },
      { status: 'awaiting_approval' },
    );
    const verdict = await answered;
    this.status = 'running';
    return verdict;
  }

  private async invoke(
    callId: string,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    decision: PermissionDecision,
    confirmed: boolean,
    /** The call's record: its outcome is written after it. */
    recorded: Promise<unknown>,
  ): Promise<string> {
    const { init } = this;
    // Not an unhandled rejection while the tool runs; awaited below.
    recorded.catch(() => undefined);
    this.throwIfStopped();
    const left = Math.max(1, Math.floor(init.limits.maxWallMs - (this.now() - this.started)));
    const timeoutMs = Math.min(init.toolTimeoutMs, left);
    const invocationId = `chat:${randomUUID()}`;
    this.invocation = invocationId;
    const begun = this.now();
    let result: ToolResult;
    // Time spent waiting for the person's input does not count against the call: its deadline is
    // kept here, and the request's own timeout only backs it up (see StepRunner.invoke).
    const { deadline, expired: silent } = expiringDeadline(
      timeoutMs + 5_000,
      () =>
        new AppError(
          'unavailable',
          `service tool-registry did not answer ${Rpc.registry.invoke.subject} within ${timeoutMs + 5_000} ms`,
        ),
    );
    this.current = { invocationId, callId, deadline, asked: 0 };
    try {
      const local = init.scoped?.get(tool.name);
      result = await abortable(
        local
          ? local.call(args, callId).then(scopedResult)
          : Promise.race([
              init.bus.call(
                Rpc.registry.invoke,
                {
                  tool: tool.name,
                  arguments: args,
                  invocationId,
                  timeoutMs,
                  // A workflow tool's nested run cannot ask anyone: it runs with the session's mode.
                  ...(tool.source === 'workflow' ? { permissionMode: this.mode } : {}),
                  asker: { kind: 'chat', sessionId: this.sessionId, callId },
                },
                {
                  ctx: init.ctx,
                  timeoutMs: timeoutMs + 5_000 + MAX_INPUTS_PER_CALL * init.inputWaits.timeoutMs,
                },
              ),
              silent,
            ]),
        this.abort.signal,
      );
    } catch (err) {
      await recorded;
      this.throwIfStopped();
      const error: ChatError =
        err instanceof AppError
          ? { code: err.code, message: err.message }
          : { code: 'internal', message: (err as Error).message };
      return this.failed(callId, tool.name, error, this.now() - begun, args);
    } finally {
      deadline.clear();
      this.current = undefined;
      this.invocation = undefined;
    }
    const durationMs = Math.round((this.now() - begun) * 100) / 100;
    const text = resultForModel(result, init.resultLimit);
    if (result.isError) {
      await recorded;
      return this.failed(
        callId,
        tool.name,
        { code: 'tool_failed', message: text.slice(0, 2_000) },
        durationMs,
        args,
      );
    }
    const kept = capResult(resultValue(result), init.resultLimit);
    // Not waited for here: the next call starts while this outcome (the call's row, the tool
    // message the model reads, the event) is written, in order after the call's record.
    this.settle(
      init.writer.emit(
        'tool_result',
        { callId, tool: tool.name, result: kept.value, durationMs },
        undefined,
        {
          callPatches: [{ callId, status: 'completed', result: kept.value, durationMs }],
          toolMessages: [{ callId, content: text }],
        },
      ),
    );
    init.observe('post_tool_use', {
      sessionId: this.sessionId,
      stepId: callId,
      call: { tool: tool.name, effect: tool.effect, arguments: args },
      result: kept.value,
      ...(confirmed ? { permission: decision } : {}),
    });
    return text;
  }

  private async failed(
    callId: string,
    tool: string,
    error: ChatError,
    durationMs?: number,
    args?: Record<string, unknown>,
  ): Promise<string> {
    const ms = durationMs === undefined ? {} : { durationMs: Math.round(durationMs * 100) / 100 };
    const text = `error (${error.code}): ${error.message}`;
    await this.init.writer.emit('tool_result', { callId, tool, error, ...ms }, undefined, {
      callPatches: [{ callId, status: 'failed', error, ...ms }],
      toolMessages: [{ callId, content: text }],
    });
    if (args)
      this.init.observe('post_tool_use_failure', {
        sessionId: this.sessionId,
        stepId: callId,
        call: { tool, arguments: args },
        error: error.message,
      });
    return text;
  }

  private async refused(
    callId: string,
    tool: string,
    decision: PermissionDecision,
    reason: string,
  ): Promise<string> {
    const error: ChatError = { code: 'forbidden', message: reason };
    const text = `refused: ${reason}. Do not repeat this call; find another way or tell the person.`;
    await this.init.writer.emit('tool_result', { callId, tool, denied: true, error }, undefined, {
      callPatches: [{ callId, status: 'denied', decision, error }],
      toolMessages: [{ callId, content: text }],
    });
    return text;
  }

  private settle(writes: Promise<unknown>): void {
    writes.catch(() => undefined);
    this.settling.push(writes);
  }

  /** Every write of the calls so far is durable (or the first failure rejects). */
  private async settled(): Promise<void> {
    await Promise.all(this.settling.splice(0));
  }

  private usage(): BudgetUsage {
    return {
      tokens: this.tokens,
      toolCalls: this.toolCalls,
      wallMs: Math.round(this.now() - this.started),
    };
  }

  /** Records how the turn ended when it did not complete. */
  private async ended(err: unknown): Promise<void> {
    const { init } = this;
    const stop = err instanceof Stopped ? err.stop : this.stop;
    // The outcomes already known are recorded before the open calls are closed.
    await this.settled().catch(() => undefined);
    try {
      if (stop?.kind === 'cancelled') {
        this.status = 'cancelled';
        await init.log.closeOpenCalls(this.ownerId, this.sessionId, 'cancelled');
        await init.writer.emit('cancelled', { message: stop.reason }, { status: 'cancelled', release: true });
        return;
      }
      const failure: { code: AppError['code']; message: string; details?: Record<string, unknown> } =
        stop?.kind === 'budget'
          ? {
              code: 'budget_exceeded',
              message: stop.message,
              details: { limit: stop.limit, usage: this.usage() },
            }
          : stop?.kind === 'abandoned'
            ? { code: 'unavailable', message: stop.reason }
            : err instanceof AppError
              ? { code: err.code, message: err.message }
              : { code: 'internal', message: 'the chat turn failed unexpectedly' };
      if (!stop && !(err instanceof AppError))
        init.logger.error({ sessionId: this.sessionId, err }, 'chat turn failed');
      this.status = 'failed';
      await init.log.closeOpenCalls(this.ownerId, this.sessionId, 'cancelled');
      await init.writer.emit('error', failure, { status: 'failed', release: true });
    } catch (writeErr) {
      init.logger.error(
        { sessionId: this.sessionId, err: (writeErr as Error).message },
        'could not record the end of a chat turn',
      );
    }
  }
}

/** Rejects with the signal's reason once it aborts; else settles like `p`. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** When a provider reports no usage: about four characters a token, prompt and answer. */
function estimateTokens(history: readonly BaseMessage[], reply: AIMessageChunk): number {
  let chars = textOf(reply.content).length + JSON.stringify(reply.tool_calls ?? []).length;
  for (const m of history) chars += textOf(m.content).length;
  return Math.ceil(chars / 4);
}

/** A turn-scoped tool's answer as a registry result: its value as one JSON block. */
function scopedResult(value: unknown): ToolResult {
  return { content: [{ type: 'json', json: value ?? null }], isError: false, truncated: false, value };
}
