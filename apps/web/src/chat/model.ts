import type {
  BudgetUsage,
  ChatError,
  ChatEvent,
  ChatSessionDetail,
  ChatToolCallStatus,
  ChatTurnStatus,
  PermissionDecision,
  ToolEffect,
} from '@switchyard/contracts';
import { pendingOfEvent, pendingOfRequest, type PendingInput } from '../elicitation/model';

/**
 * What the chat page draws, folded from a session's stored detail and then from its turn's events.
 * Pure and immutable: every change gives a new view (React compares by reference); an event the
 * view already holds (sequence at or below `lastSeq`, a replay after a reconnect) gives the same view.
 */
export interface ChatView {
  readonly sessionId: string;
  /** The newest event folded in: a resumed stream starts after it. */
  readonly lastSeq: number;
  readonly status: ChatTurnStatus;
  readonly items: readonly ChatItem[];
  readonly calls: ReadonlyMap<string, CallView>;
  /** How the latest turn ended when it did not complete. */
  readonly ended?: TurnEnd;
}

export type ChatItem = UserItem | AssistantItem | MemoryItem;

export interface UserItem {
  readonly kind: 'user';
  /** Unknown until the server stores the message (`turn_started`). */
  readonly id?: string;
  readonly content: string;
}

export interface AssistantItem {
  readonly kind: 'assistant';
  readonly id?: string;
  readonly content: string;
  /** The calls this message asked for, in order. */
  readonly callIds: readonly string[];
  /** Tokens are still arriving. */
  readonly streaming: boolean;
  /** What the turn had spent when this message ended. */
  readonly usage?: BudgetUsage;
}

export interface MemoryItem {
  readonly kind: 'memory';
  readonly memories: ReadonlyArray<{ readonly id: string; readonly text: string; readonly score: number }>;
}

export interface CallView {
  readonly callId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly status: ChatToolCallStatus;
  readonly effect?: ToolEffect;
  /** Why the gate asks (a pending confirmation card). */
  readonly reason?: string;
  readonly decision?: PermissionDecision;
  readonly editedArguments?: Record<string, unknown>;
  readonly result?: unknown;
  readonly error?: ChatError;
  readonly durationMs?: number;
  /** Its MCP server asks the person for input; the call waits for the answer. */
  readonly input?: PendingInput;
}

export type TurnEnd =
  | { readonly kind: 'cancelled'; readonly message: string }
  | { readonly kind: 'error'; readonly error: ChatError };

/** What the page itself knows before the server says it: a message sent, a card answered. */
export type LocalAction =
  | { readonly type: 'local_send'; readonly content: string }
  | { readonly type: 'local_send_failed' }
  | { readonly type: 'local_decided'; readonly callId: string; readonly approved: boolean };

export const IN_PROGRESS: ReadonlySet<ChatTurnStatus> = new Set(['running', 'awaiting_approval']);
const UNFINISHED: ReadonlySet<ChatToolCallStatus> = new Set(['pending', 'awaiting_approval', 'running']);

export function emptyView(sessionId: string): ChatView {
  return { sessionId, lastSeq: 0, status: 'idle', items: [], calls: new Map() };
}

/** The stored conversation: user and assistant messages in order, each call with its outcome. */
export function viewOf(detail: ChatSessionDetail): ChatView {
  const calls = new Map<string, CallView>();
  for (const c of detail.toolCalls) {
    calls.set(c.callId, {
      callId: c.callId,
      tool: c.tool,
      arguments: c.arguments,
      status: c.status,
      ...(c.effect ? { effect: c.effect } : {}),
      ...(c.decision ? { decision: c.decision, reason: c.decision.reason } : {}),
      ...(c.editedArguments ? { editedArguments: c.editedArguments } : {}),
      ...(c.result !== undefined ? { result: c.result } : {}),
      ...(c.error ? { error: c.error } : {}),
      ...(c.durationMs !== undefined ? { durationMs: c.durationMs } : {}),
    });
  }
  // The requests still waiting (the table's word: they are not in the stored calls).
  for (const r of detail.inputRequests ?? []) {
    const c = r.callId ? calls.get(r.callId) : undefined;
    if (c) calls.set(c.callId, { ...c, input: pendingOfRequest(r) });
  }
  const items: ChatItem[] = [];
  const placed = new Set<string>();
  for (const m of [...detail.messages].sort((a, b) => a.seq - b.seq)) {
    if (m.role === 'user') items.push({ kind: 'user', id: m.id, content: m.content });
    if (m.role !== 'assistant') continue;
    // The message's own list first, then calls that name it but it does not list.
    const ids = [
      ...(m.callIds ?? []),
      ...detail.toolCalls.filter((c) => c.messageId === m.id).map((c) => c.callId),
    ].filter((id) => calls.has(id) && !placed.has(id) && placed.add(id));
    items.push({
      kind: 'assistant',
      id: m.id,
      content: m.content,
      callIds: ids,
      streaming: false,
      ...(m.usage ? { usage: m.usage } : {}),
    });
  }
  const orphans = detail.toolCalls.map((c) => c.callId).filter((id) => !placed.has(id));
  if (orphans.length) {
    items.push({
      kind: 'assistant',
      content: '',
      callIds: orphans,
      streaming: IN_PROGRESS.has(detail.status),
    });
  }
  return {
    sessionId: detail.id,
    lastSeq: detail.lastEventId,
    status: detail.status,
    items,
    calls,
  };
}

/** Folds one event (or one of the page's own actions) into the view. */
export function applyChat(view: ChatView, action: ChatEvent | LocalAction): ChatView {
  switch (action.type) {
    case 'local_send':
      return {
        ...view,
        status: 'running',
        items: [...view.items, { kind: 'user', content: action.content }],
        ended: undefined,
      };
    case 'local_send_failed': {
      const last = view.items[view.items.length - 1];
      const items = last?.kind === 'user' && last.id === undefined ? view.items.slice(0, -1) : view.items;
      return { ...view, items, status: 'idle' };
    }
    case 'local_decided': {
      const call = view.calls.get(action.callId);
      if (!call || call.status !== 'awaiting_approval') return view;
      const next = withCall(view, { ...call, status: action.approved ? 'running' : 'denied' });
      return { ...next, status: awaitsApproval(next) ? 'awaiting_approval' : 'running' };
    }
    default:
      break;
  }
  const e = action;
  if (e.seq <= view.lastSeq) return view;
  const v: ChatView = { ...view, lastSeq: e.seq };
  switch (e.type) {
    case 'turn_started': {
      const items = [...v.items];
      const last = items[items.length - 1];
      if (last?.kind === 'user' && last.id === undefined)
        items[items.length - 1] = { ...last, id: e.data.messageId };
      else if (!items.some((i) => i.kind === 'user' && i.id === e.data.messageId))
        items.push({ kind: 'user', id: e.data.messageId, content: e.data.content });
      return { ...v, items, status: 'running', ended: undefined };
    }
    case 'memory_injected':
      return { ...v, items: [...v.items, { kind: 'memory', memories: e.data.memories }] };
    case 'token':
      return updateDraft(v, (d) => ({ ...d, content: d.content + e.data.text }), true);
    case 'tool_call': {
      const known = v.calls.get(e.data.callId);
      const next = known ? v : attach(v, e.data.callId);
      return withCall(next, {
        ...(known ?? {}),
        callId: e.data.callId,
        tool: e.data.tool,
        arguments: e.data.arguments,
        status: known?.status === 'awaiting_approval' ? known.status : 'running',
        ...(e.data.effect ? { effect: e.data.effect } : {}),
      });
    }
    case 'approval_requested': {
      const known = v.calls.get(e.data.callId);
      const next = known ? v : attach(v, e.data.callId);
      return {
        ...withCall(next, {
          ...(known ?? {}),
          callId: e.data.callId,
          tool: e.data.tool,
          arguments: e.data.arguments,
          status: 'awaiting_approval',
          reason: e.data.reason,
          ...(e.data.effect ? { effect: e.data.effect } : {}),
        }),
        status: 'awaiting_approval',
      };
    }
    case 'approved': {
      const call = v.calls.get(e.data.callId);
      if (!call) return v;
      const next = withCall(v, {
        ...call,
        status: call.status === 'awaiting_approval' ? 'running' : call.status,
        ...(e.data.editedArguments ? { editedArguments: e.data.editedArguments } : {}),
      });
      return { ...next, status: awaitsApproval(next) ? 'awaiting_approval' : 'running' };
    }
    case 'input_requested': {
      const call = v.calls.get(e.data.callId);
      return call ? withCall(v, { ...call, input: pendingOfEvent(e.data) }) : v;
    }
    case 'input_answered': {
      const call = v.calls.get(e.data.callId);
      if (!call || call.input?.id !== e.data.elicitationId) return v;
      const { input: _answered, ...rest } = call;
      return withCall(v, rest);
    }
    case 'tool_result': {
      const known = v.calls.get(e.data.callId);
      const next = known ? v : attach(v, e.data.callId);
      const status: ChatToolCallStatus = e.data.denied ? 'denied' : e.data.error ? 'failed' : 'completed';
      const { input: _done, ...before } = known ?? {
        callId: e.data.callId,
        tool: e.data.tool ?? '?',
        arguments: {},
      };
      const updated = withCall(next, {
        ...before,
        status,
        ...(e.data.result !== undefined ? { result: e.data.result } : {}),
        ...(e.data.error ? { error: e.data.error } : {}),
        ...(e.data.durationMs !== undefined ? { durationMs: e.data.durationMs } : {}),
      });
      return { ...updated, status: awaitsApproval(updated) ? 'awaiting_approval' : 'running' };
    }
    case 'message_complete': {
      const done = updateDraft(
        v,
        (d) => ({
          ...d,
          // The stored text is the truth (a token may have been missed); an empty one keeps the draft.
          content: e.data.content || d.content,
          streaming: false,
          ...(e.data.messageId ? { id: e.data.messageId } : {}),
          ...(e.data.usage ? { usage: e.data.usage } : {}),
        }),
        e.data.content !== '',
      );
      return { ...stopCalls(done, 'cancelled'), status: 'completed' };
    }
    case 'flow_proposal':
    case 'flow_saved':
      // The flow builder draws these on its canvas; the conversation shows the call's result.
      return v;
    case 'cancelled':
      return {
        ...stopCalls(endDraft(v), 'cancelled'),
        status: 'cancelled',
        ended: { kind: 'cancelled', message: e.data.message },
      };
    case 'error':
      return {
        ...stopCalls(endDraft(v), 'cancelled'),
        status: 'failed',
        ended: { kind: 'error', error: e.data },
      };
  }
}

/** Folds events in order (the stream delivers them in bursts). */
export function applyAll(view: ChatView, actions: ReadonlyArray<ChatEvent | LocalAction>): ChatView {
  return actions.reduce(applyChat, view);
}

/** The calls waiting at a confirmation card, oldest first. */
export function awaitingCalls(view: ChatView): CallView[] {
  return [...view.calls.values()].filter((c) => c.status === 'awaiting_approval');
}

function awaitsApproval(view: ChatView): boolean {
  return awaitingCalls(view).length > 0;
}

function withCall(view: ChatView, call: CallView): ChatView {
  const calls = new Map(view.calls);
  calls.set(call.callId, call);
  return { ...view, calls };
}

/**
 * The assistant message now being written: the last item when it is an assistant message still
 * streaming that has asked for no call yet (text after calls belongs to the model's next message).
 */
function draftIndex(view: ChatView, forText: boolean): number {
  const i = view.items.length - 1;
  const last = view.items[i];
  if (last?.kind !== 'assistant' || !last.streaming) return -1;
  return forText && last.callIds.length ? -1 : i;
}

function updateDraft(
  view: ChatView,
  change: (draft: AssistantItem) => AssistantItem,
  createIfMissing: boolean,
): ChatView {
  const i = draftIndex(view, true);
  if (i >= 0) {
    const items = [...view.items];
    items[i] = change(items[i] as AssistantItem);
    return { ...view, items };
  }
  const last = view.items[view.items.length - 1];
  // The final message text repeats what a streaming message with calls already shows: end it.
  if (!createIfMissing) return endDraft(view);
  const fresh = change({ kind: 'assistant', content: '', callIds: [], streaming: true });
  const items = last?.kind === 'assistant' && last.streaming ? [...endDraft(view).items] : [...view.items];
  return { ...view, items: [...items, fresh] };
}

/** A call joins the message being written (or a new one when the model sent no text first). */
function attach(view: ChatView, callId: string): ChatView {
  const items = [...view.items];
  const i = draftIndex(view, false);
  if (i >= 0) {
    const d = items[i] as AssistantItem;
    items[i] = { ...d, callIds: [...d.callIds, callId] };
  } else {
    items.push({ kind: 'assistant', content: '', callIds: [callId], streaming: true });
  }
  return { ...view, items };
}

function endDraft(view: ChatView): ChatView {
  const i = draftIndex(view, false);
  if (i < 0) return view;
  const items = [...view.items];
  items[i] = { ...(items[i] as AssistantItem), streaming: false };
  return { ...view, items };
}

/** The turn is over: a call that never got its result did not finish. */
function stopCalls(view: ChatView, status: ChatToolCallStatus): ChatView {
  if (![...view.calls.values()].some((c) => UNFINISHED.has(c.status) || c.input)) return view;
  const calls = new Map(view.calls);
  for (const [id, c] of calls) {
    if (!UNFINISHED.has(c.status) && !c.input) continue;
    const { input: _gone, ...rest } = c;
    calls.set(id, UNFINISHED.has(c.status) ? { ...rest, status } : rest);
  }
  return { ...view, calls };
}
