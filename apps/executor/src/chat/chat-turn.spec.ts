import { randomUUID } from 'node:crypto';
import { AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import {
  AppError,
  chatEventsSubject,
  Events,
  Rpc,
  type ChatEvent,
  type ChatEventBody,
  type ChatMessage,
  type ChatSession,
  type ChatToolCall,
  type PermissionDecision,
  type ToolDescriptor,
} from '@switchyard/contracts';
import {
  mergeRowChanges,
  type ChatRowChanges,
  type ChatSessionUpdate,
  type NewChatMessage,
} from '@switchyard/server-db-runs';
import { InMemoryBus, waitFor } from '@switchyard/testing';
import { NoChatContext } from './chat-context';
import { ChatTurn, type TurnLimits, type TurnLog, type TurnModel } from './chat-turn';
import { ChatWriter, type ChatLog } from './chat-writer';

const OWNER = randomUUID();
const REPLICA = 'replica-1';

/** The chat tables in memory: what the repository keeps, for one session. */
class MemoryChat implements TurnLog, ChatLog {
  readonly events: ChatEvent[] = [];
  readonly messages: ChatMessage[] = [];
  readonly calls = new Map<string, ChatToolCall>();
  status = 'running';
  /** Held writes: each append waits for this (to see what piles up meanwhile). */
  gate: Promise<void> = Promise.resolve();

  async append(
    owner: string,
    sessionId: string,
    events: readonly ChatEventBody[],
    _replica: string,
    update?: ChatSessionUpdate,
    rows: ReadonlyArray<ChatRowChanges | undefined> = [],
  ): Promise<ChatEvent[]> {
    await this.gate;
    if (update?.status) this.status = update.status;
    const changes = mergeRowChanges(rows);
    for (const c of changes?.newCalls ?? [])
      this.calls.set(c.callId, { status: 'pending', ...c } as ChatToolCall);
    for (const { callId, ...patch } of changes?.callPatches ?? []) {
      const c = this.calls.get(callId);
      if (c) this.calls.set(callId, { ...c, ...patch } as ChatToolCall);
    }
    for (const m of changes?.toolMessages ?? [])
      await this.addMessage(owner, sessionId, { role: 'tool', content: m.content, callId: m.callId });
    const stored = events.map(
      (e, i) =>
        ({ ...e, sessionId, seq: this.events.length + i + 1, at: new Date().toISOString() }) as ChatEvent,
    );
    this.events.push(...stored);
    return stored;
  }

  async addMessage(_owner: string, _id: string, m: NewChatMessage): Promise<ChatMessage> {
    const message: ChatMessage = {
      id: randomUUID(),
      seq: this.messages.length + 1,
      role: m.role,
      content: m.content,
      ...(m.callIds ? { callIds: [...m.callIds] } : {}),
      ...(m.callId ? { callId: m.callId } : {}),
      createdAt: new Date().toISOString(),
    };
    this.messages.push(message);
    return Promise.resolve(message);
  }

  async closeOpenCalls(_owner: string, _id: string, status: ChatToolCall['status']): Promise<void> {
    for (const [id, c] of this.calls)
      if (['pending', 'awaiting_approval', 'running'].includes(c.status))
        this.calls.set(id, { ...c, status });
    return Promise.resolve();
  }

  async history() {
    return Promise.resolve({ messages: [...this.messages], calls: new Map(this.calls) });
  }

  of(type: string) {
    return this.events.filter((e) => e.type === type);
  }
}

type Script = { content?: string; calls?: Array<{ name: string; args: Record<string, unknown> }> };

/** A model that answers from a script, streamed a few characters at a time; records what it was sent. */
class ScriptedModel implements TurnModel {
  readonly seen: BaseMessage[][] = [];
  boundTools: string[] = [];

  constructor(private readonly script: Array<Script | ((seen: BaseMessage[]) => Script)>) {}

  bindTools(tools: Array<{ function: { name: string } }>): TurnModel {
    this.boundTools = tools.map((t) => t.function.name);
    return this;
  }

  stream(messages: BaseMessage[]): Promise<AsyncIterable<AIMessageChunk>> {
    this.seen.push(messages);
    const next = this.script.shift();
    if (!next) return Promise.reject(new Error('the script ran out'));
    const s = typeof next === 'function' ? next(messages) : next;
    async function* chunks() {
      const text = s.content ?? '';
      for (let i = 0; i < text.length; i += 3) yield new AIMessageChunk({ content: text.slice(i, i + 3) });
      yield new AIMessageChunk({
        content: '',
        tool_call_chunks: (s.calls ?? []).map((c, index) => ({
          id: `call_${index}_${randomUUID().slice(0, 4)}`,
          name: c.name,
          args: JSON.stringify(c.args),
          index,
          type: 'tool_call_chunk' as const,
        })),
      });
    }
    return Promise.resolve(chunks());
  }
}

const tool = (name: string, effect: ToolDescriptor['effect'] = 'read'): ToolDescriptor => ({
  name,
  description: name,
  inputSchema: { type: 'object', properties: { ms: { type: 'integer' }, value: {} }, required: ['ms'] },
  effect,
  idempotent: true,
  source: 'builtin',
});

const limits: TurnLimits = { maxToolCalls: 25, maxTokens: 1_000_000, maxWallMs: 60_000 };

function setup(opts: {
  script: ConstructorParameters<typeof ScriptedModel>[0];
  gate?: (tool: string, mode: string) => PermissionDecision;
  limits?: Partial<TurnLimits>;
}) {
  const bus = new InMemoryBus();
  const log = new MemoryChat();
  const model = new ScriptedModel(opts.script);
  const invoked: Array<{ tool: string; arguments: Record<string, unknown> }> = [];
  const cancelled: string[] = [];
  const inFlight = new Map<string, () => void>();
  bus.on(Events.toolCancel, ({ invocationId }) => {
    cancelled.push(invocationId);
    inFlight.get(invocationId)?.();
  });
  bus.answer(Rpc.registry.invoke, (req) => {
    invoked.push({ tool: req.tool, arguments: req.arguments });
    const ms = Number(req.arguments['ms'] ?? 0);
    if (ms === 0)
      return {
        content: [{ type: 'json' as const, json: req.arguments['value'] ?? null }],
        isError: false,
        truncated: false,
      };
    return new Promise((_, reject) =>
      inFlight.set(req.invocationId ?? '', () => reject(new AppError('unavailable', 'stopped'))),
    );
  });
  const session: ChatSession = {
    id: randomUUID(),
    ownerId: OWNER,
    agentId: null,
    permissionMode: 'ask',
    title: '',
    budget: null,
    status: 'running',
    createdAt: '',
    updatedAt: '',
  };
  let closed = false;
  const turn = new ChatTurn({
    session,
    ctx: { correlationId: 'c', ownerId: OWNER },
    model,
    systemPrompt: 'be brief',
    tools: [tool('wait'), tool('write_note', 'write')],
    limits: { ...limits, ...opts.limits },
    log,
    writer: new ChatWriter(log, bus, OWNER, session.id, REPLICA),
    replica: REPLICA,
    bus,
    logger: { warn: () => undefined, error: () => undefined, info: () => undefined } as never,
    context: new NoChatContext(),
    toolTimeoutMs: 10_000,
    resultLimit: 10_000,
    gate: (call, _callId, _tool, mode) =>
      opts.gate?.(call.tool, mode) ?? { decision: 'allow', reason: 'allowed' },
    observe: () => undefined,
    inputWaits: {
      timeoutMs: 60_000,
      ask: () => Promise.reject(new Error('this test asks nobody')),
      declined: () => Promise.reject(new Error('this test asks nobody')),
    },
    onClosed: () => (closed = true),
  });
  const run = async (content: string) => {
    const message = await log.addMessage(OWNER, session.id, { role: 'user', content });
    await turn.begin(message);
    const done = turn.run(content);
    return { done };
  };
  return { bus, log, model, turn, run, invoked, cancelled, isClosed: () => closed, session };
}

describe('ChatTurn', () => {
  it('runs the calls the model asks for, feeds results back, and completes with what it spent', async () => {
    const t = setup({
      script: [
        { content: 'Let me wait.', calls: [{ name: 'wait', args: { ms: 0, value: 'ok' } }] },
        { content: 'Done: ok' },
      ],
    });
    const { done } = await t.run('wait please');
    await done;
    expect(t.log.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['turn_started', 'token', 'tool_call', 'tool_result', 'message_complete']),
    );
    expect(t.log.events.map((e) => e.seq)).toEqual(t.log.events.map((_, i) => i + 1));
    expect(t.log.of('tool_result')[0]?.data).toMatchObject({ tool: 'wait', result: 'ok' });
    expect(t.log.events.at(-1)).toMatchObject({
      type: 'message_complete',
      data: { content: 'Done: ok', usage: { toolCalls: 1 } },
    });
    expect(t.model.boundTools).toEqual(['wait', 'write_note']);
    // The second model call read the result.
    expect(t.model.seen[1]?.at(-1)?.content).toBe('"ok"');
    expect(t.log.status).toBe('completed');
    expect(t.log.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(t.isClosed()).toBe(true);
    // Published after being stored, in order.
    const published = t.bus.traffic.events.filter((e) => e.subject === chatEventsSubject(t.session.id));
    expect(published.map((e) => (e.payload as ChatEvent).seq)).toEqual(t.log.events.map((e) => e.seq));
  });

  it('merges tokens that arrive while a write is in flight', async () => {
    const t = setup({ script: [{ content: 'a'.repeat(60) }] });
    let release!: () => void;
    const message = await t.log.addMessage(OWNER, t.session.id, { role: 'user', content: 'talk' });
    await t.turn.begin(message);
    // The first token's write is held until the whole answer has streamed.
    t.log.gate = new Promise((r) => (release = r));
    const done = t.turn.run('talk');
    await waitFor(() => t.log.messages.some((m) => m.role === 'assistant'));
    release();
    await done;
    const tokens = t.log.of('token');
    expect(tokens.map((e) => (e.data as { text: string }).text).join('')).toBe('a'.repeat(60));
    // 20 chunks of 3 characters: the first alone, the other 19 in one event.
    expect(tokens).toHaveLength(2);
  });

  it('returns a denial to the model with its reason, and runs nothing', async () => {
    const t = setup({
      script: [{ calls: [{ name: 'wait', args: { ms: 0 } }] }, { content: 'ok, I will not' }],
      gate: () => ({ decision: 'deny', reason: 'rule Tool(wait) says no' }),
    });
    await (
      await t.run('wait')
    ).done;
    expect(t.invoked).toEqual([]);
    expect(t.log.of('tool_result')[0]?.data).toMatchObject({
      denied: true,
      error: { code: 'forbidden', message: 'rule Tool(wait) says no' },
    });
    expect(String(t.model.seen[1]?.at(-1)?.content)).toContain('rule Tool(wait) says no');
  });

  it('waits at a card, refuses edits that do not fit, runs the approved edit', async () => {
    const t = setup({
      script: [{ calls: [{ name: 'write_note', args: { ms: 0, value: 'draft' } }] }, { content: 'written' }],
      gate: (name) =>
        name === 'write_note' ? { decision: 'ask', reason: 'a write' } : { decision: 'allow', reason: '' },
    });
    const { done } = await t.run('note it');
    const card = await waitFor(() => t.log.of('approval_requested')[0]);
    expect(t.log.status).toBe('awaiting_approval');
    const callId = (card.data as { callId: string }).callId;
    expect(() => t.turn.approve('another', undefined)).toThrow(/not waiting/);
    expect(() => t.turn.approve(callId, { ms: 'now' })).toThrow(/ms/);
    expect(t.turn.approve(callId, { ms: 0, value: 'final' })).toEqual({ accepted: true, status: 'running' });
    await done;
    expect(t.invoked).toEqual([{ tool: 'write_note', arguments: { ms: 0, value: 'final' } }]);
    expect(t.log.calls.get(callId)).toMatchObject({
      status: 'completed',
      editedArguments: { ms: 0, value: 'final' },
    });
  });

  it('a new permission mode applies from the next call of the turn in progress', async () => {
    const modes: string[] = [];
    const t = setup({
      script: [
        { calls: [{ name: 'write_note', args: { ms: 0 } }] },
        { calls: [{ name: 'write_note', args: { ms: 0 } }] },
        { content: 'done' },
      ],
      gate: (_tool, mode) => {
        modes.push(mode);
        return mode === 'ask' ? { decision: 'ask', reason: 'ask mode' } : { decision: 'allow', reason: mode };
      },
    });
    const { done } = await t.run('two notes');
    const card = await waitFor(() => t.log.of('approval_requested')[0]);
    t.turn.setMode('full-access');
    t.turn.approve((card.data as { callId: string }).callId, undefined);
    await done;
    expect(modes).toEqual(['ask', 'full-access']);
    expect(t.log.of('approval_requested')).toHaveLength(1);
    expect(t.invoked).toHaveLength(2);
  });

  it('cancel stops the call in flight, tells the registry, and ends cancelled', async () => {
    const t = setup({ script: [{ calls: [{ name: 'wait', args: { ms: 600_000 } }] }] });
    const { done } = await t.run('wait long');
    await waitFor(() => t.invoked.length > 0);
    expect(t.turn.cancel('cancelled by the person')).toEqual({ accepted: true, status: 'cancelled' });
    await done;
    expect(t.log.events.at(-1)).toMatchObject({
      type: 'cancelled',
      data: { message: 'cancelled by the person' },
    });
    await waitFor(() => t.cancelled.length > 0);
    expect(t.cancelled[0]).toMatch(/^chat:/);
    expect([...t.log.calls.values()][0]?.status).toBe('cancelled');
  });

  it('ends with budget_exceeded naming the limit when the model asks for too many calls', async () => {
    const t = setup({
      script: [
        {
          calls: [
            { name: 'wait', args: { ms: 0 } },
            { name: 'wait', args: { ms: 0 } },
          ],
        },
      ],
      limits: { maxToolCalls: 1 },
    });
    await (
      await t.run('two')
    ).done;
    expect(t.invoked).toHaveLength(1);
    expect(t.log.events.at(-1)).toMatchObject({
      type: 'error',
      data: { code: 'budget_exceeded', details: { limit: 'maxToolCalls' } },
    });
  });

  it('a model failure ends the turn with an error event, never a throw', async () => {
    const t = setup({ script: [] });
    await (
      await t.run('hello')
    ).done;
    expect(t.log.events.at(-1)).toMatchObject({ type: 'error', data: { code: 'unavailable' } });
    expect(t.log.status).toBe('failed');
  });
});
