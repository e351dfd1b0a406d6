import type { ChatEvent, ChatEventBody, ChatSessionDetail } from '@switchyard/contracts';
import {
  applyAll,
  applyChat,
  awaitingCalls,
  emptyView,
  viewOf,
  type AssistantItem,
  type ChatView,
} from './model';

const SESSION = '00000000-0000-4000-8000-00000000c0de';
const USER_MSG = '00000000-0000-4000-8000-000000000011';
const ANSWER = '00000000-0000-4000-8000-000000000012';

/** A stored event with its sequence number. */
function ev(seq: number, body: ChatEventBody): ChatEvent {
  return {
    ...body,
    sessionId: SESSION,
    seq,
    at: new Date(1_700_000_000_000 + seq).toISOString(),
  } as ChatEvent;
}
const started = (seq: number, content = 'hello') =>
  ev(seq, { type: 'turn_started', data: { messageId: USER_MSG, content } });
const token = (seq: number, text: string) => ev(seq, { type: 'token', data: { text } });

function texts(view: ChatView): string[] {
  return view.items.map((i) =>
    i.kind === 'memory' ? `memory:${i.memories.length}` : `${i.kind}:${i.content}`,
  );
}
function lastAssistant(view: ChatView): AssistantItem {
  const a = view.items.filter((i): i is AssistantItem => i.kind === 'assistant');
  const last = a[a.length - 1];
  if (!last) throw new Error('no assistant message');
  return last;
}

test('tokens accumulate into the answer being written; message_complete ends it with the stored text and usage', () => {
  let v = applyAll(emptyView(SESSION), [started(1), token(2, 'Hel'), token(3, 'lo, '), token(4, 'Ada')]);
  expect(v.status).toBe('running');
  expect(texts(v)).toEqual(['user:hello', 'assistant:Hello, Ada']);
  expect(lastAssistant(v).streaming).toBe(true);
  v = applyChat(
    v,
    ev(5, {
      type: 'message_complete',
      data: { messageId: ANSWER, content: 'Hello, Ada!', usage: { tokens: 12, toolCalls: 0, wallMs: 40 } },
    }),
  );
  expect(v.status).toBe('completed');
  expect(v.lastSeq).toBe(5);
  expect(lastAssistant(v)).toEqual({
    kind: 'assistant',
    id: ANSWER,
    content: 'Hello, Ada!',
    callIds: [],
    streaming: false,
    usage: { tokens: 12, toolCalls: 0, wallMs: 40 },
  });
});

test('replayed frames (sequence at or below the last one folded) change nothing, so a resumed stream shows each token once', () => {
  const v = applyAll(emptyView(SESSION), [started(1), token(2, 'a'), token(3, 'b')]);
  // The resumed stream starts again at 2: those frames are the same view, the new one is folded.
  expect(applyChat(v, token(2, 'a'))).toBe(v);
  expect(applyChat(v, token(3, 'b'))).toBe(v);
  const resumed = applyAll(v, [token(2, 'a'), token(3, 'b'), token(4, 'c')]);
  expect(lastAssistant(resumed).content).toBe('abc');
  expect(resumed.lastSeq).toBe(4);
});

test('a tool call folds under the message that asked for it with its result; text after it is the next message', () => {
  const v = applyAll(emptyView(SESSION), [
    started(1, 'list my files'),
    token(2, 'Let me look.'),
    ev(3, {
      type: 'tool_call',
      data: { callId: 'c1', tool: 'list_directory', arguments: { path: '.' }, effect: 'read' },
    }),
    ev(4, { type: 'tool_result', data: { callId: 'c1', result: { files: ['a.txt'] }, durationMs: 7 } }),
    token(5, 'You have a.txt.'),
  ]);
  expect(texts(v)).toEqual(['user:list my files', 'assistant:Let me look.', 'assistant:You have a.txt.']);
  const asking = v.items[1] as AssistantItem;
  expect(asking.callIds).toEqual(['c1']);
  expect(asking.streaming).toBe(false);
  expect(v.calls.get('c1')).toEqual({
    callId: 'c1',
    tool: 'list_directory',
    arguments: { path: '.' },
    effect: 'read',
    status: 'completed',
    result: { files: ['a.txt'] },
    durationMs: 7,
  });
  expect(v.status).toBe('running');
});

test('a call with no text before it opens an assistant message of its own; a failed call keeps its error', () => {
  const v = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, { type: 'tool_call', data: { callId: 'c1', tool: 'read_file', arguments: { filePath: 'x' } } }),
    ev(3, { type: 'tool_call', data: { callId: 'c2', tool: 'read_file', arguments: { filePath: 'y' } } }),
    ev(4, {
      type: 'tool_result',
      data: { callId: 'c1', error: { code: 'tool_failed', message: 'x: no such file' } },
    }),
  ]);
  expect(texts(v)).toEqual(['user:hello', 'assistant:']);
  expect(lastAssistant(v).callIds).toEqual(['c1', 'c2']);
  expect(v.calls.get('c1')?.status).toBe('failed');
  expect(v.calls.get('c1')?.error?.message).toBe('x: no such file');
  expect(v.calls.get('c2')?.status).toBe('running');
});

test('an approval pauses the turn on a card; answering it locally, then the result, goes on', () => {
  let v = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, {
      type: 'tool_call',
      data: { callId: 'w', tool: 'write_file', arguments: { filePath: 'a', content: '1' } },
    }),
    ev(3, {
      type: 'approval_requested',
      data: {
        callId: 'w',
        tool: 'write_file',
        arguments: { filePath: 'a', content: '1' },
        effect: 'write',
        reason: 'write tools ask in ask mode',
      },
    }),
  ]);
  expect(v.status).toBe('awaiting_approval');
  expect(awaitingCalls(v).map((c) => [c.callId, c.reason, c.effect])).toEqual([
    ['w', 'write tools ask in ask mode', 'write'],
  ]);
  v = applyChat(v, { type: 'local_decided', callId: 'w', approved: true });
  expect(v.calls.get('w')?.status).toBe('running');
  expect(v.status).toBe('running');
  v = applyChat(v, ev(4, { type: 'tool_result', data: { callId: 'w', result: 'wrote 1 byte' } }));
  expect(v.calls.get('w')?.status).toBe('completed');
  expect(awaitingCalls(v)).toEqual([]);
});

test('an approval answered in another tab closes the card here, with the edited arguments the call runs with', () => {
  let v = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, {
      type: 'approval_requested',
      data: { callId: 'w', tool: 'write_file', arguments: { filePath: 'a', content: '1' }, reason: 'asks' },
    }),
  ]);
  expect(v.status).toBe('awaiting_approval');
  v = applyChat(
    v,
    ev(3, { type: 'approved', data: { callId: 'w', editedArguments: { filePath: 'b', content: '2' } } }),
  );
  expect(v.calls.get('w')).toMatchObject({ status: 'running', editedArguments: { filePath: 'b' } });
  expect(v.status).toBe('running');
  expect(awaitingCalls(v)).toEqual([]);
});

test('a denied call shows as denied with the reason the model was told', () => {
  const v = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, {
      type: 'approval_requested',
      data: { callId: 'd', tool: 'delete_file', arguments: { filePath: 'a' }, reason: 'asks' },
    }),
    ev(3, {
      type: 'tool_result',
      data: { callId: 'd', denied: true, error: { code: 'forbidden', message: 'not that file' } },
    }),
  ]);
  expect(v.calls.get('d')).toMatchObject({ status: 'denied', error: { message: 'not that file' } });
  expect(v.status).toBe('running');
});

test('cancel ends the turn: the draft stops, unfinished calls are cancelled, the reason is kept', () => {
  const v = applyAll(emptyView(SESSION), [
    started(1),
    token(2, 'Waiting'),
    ev(3, { type: 'tool_call', data: { callId: 'long', tool: 'wait', arguments: { ms: 60_000 } } }),
    ev(4, { type: 'cancelled', data: { message: 'cancelled by you' } }),
  ]);
  expect(v.status).toBe('cancelled');
  expect(v.calls.get('long')?.status).toBe('cancelled');
  expect(lastAssistant(v).streaming).toBe(false);
  expect(v.ended).toEqual({ kind: 'cancelled', message: 'cancelled by you' });
});

test('an error ends the turn with its code and details (a crossed budget names its limit)', () => {
  const error = {
    code: 'budget_exceeded' as const,
    message: 'the turn made 3 tool calls; its limit is 3',
    details: { limit: 'maxToolCalls' },
  };
  const v = applyAll(emptyView(SESSION), [started(1), ev(2, { type: 'error', data: error })]);
  expect(v.status).toBe('failed');
  expect(v.ended).toEqual({ kind: 'error', error });
});

test('a message sent shows at once; the stored one takes its place, or it goes when the server refused it', () => {
  let v = applyChat(emptyView(SESSION), { type: 'local_send', content: 'hello' });
  expect(texts(v)).toEqual(['user:hello']);
  expect(v.status).toBe('running');
  const accepted = applyChat(v, started(1));
  expect(texts(accepted)).toEqual(['user:hello']);
  expect(accepted.items[0]).toEqual({ kind: 'user', id: USER_MSG, content: 'hello' });
  v = applyChat(v, { type: 'local_send_failed' });
  expect(v.items).toEqual([]);
  expect(v.status).toBe('idle');
});

test('memories injected into the context show as their own line', () => {
  const v = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, { type: 'memory_injected', data: { memories: [{ id: 'm1', text: 'Ada likes tea', score: 0.9 }] } }),
    token(3, 'Tea?'),
  ]);
  expect(texts(v)).toEqual(['user:hello', 'memory:1', 'assistant:Tea?']);
});

test('the stored detail: messages in order, each call under its message with its outcome, tool messages folded away', () => {
  const detail: ChatSessionDetail = {
    id: SESSION,
    ownerId: '00000000-0000-4000-8000-000000000001',
    agentId: null,
    permissionMode: 'ask',
    title: 'files',
    budget: null,
    status: 'awaiting_approval',
    createdAt: '2026-12-03T10:00:00.000Z',
    updatedAt: '2026-12-03T10:00:00.000Z',
    lastEventId: 9,
    messages: [
      { id: ANSWER, seq: 2, role: 'assistant', content: 'Reading.', callIds: ['r'], createdAt: '' },
      { id: USER_MSG, seq: 1, role: 'user', content: 'read a', createdAt: '' },
      {
        id: '00000000-0000-4000-8000-000000000013',
        seq: 3,
        role: 'tool',
        content: '"A"',
        callId: 'r',
        createdAt: '',
      },
    ],
    toolCalls: [
      {
        callId: 'r',
        messageId: ANSWER,
        tool: 'read_file',
        arguments: { filePath: 'a' },
        status: 'completed',
        result: 'A',
      },
      {
        callId: 'w',
        messageId: ANSWER,
        tool: 'write_file',
        arguments: { filePath: 'b' },
        status: 'awaiting_approval',
        decision: { decision: 'ask', reason: 'write asks', rule: 'Tool(write_*)' },
      },
    ],
  };
  const v = viewOf(detail);
  expect(v.lastSeq).toBe(9);
  expect(v.status).toBe('awaiting_approval');
  expect(texts(v)).toEqual(['user:read a', 'assistant:Reading.']);
  expect(lastAssistant(v).callIds).toEqual(['r', 'w']);
  expect(awaitingCalls(v).map((c) => c.reason)).toEqual(['write asks']);
  // The live stream then goes on from the stored sequence.
  expect(applyChat(v, token(9, 'x'))).toBe(v);
  const next = applyAll(v, [
    ev(10, {
      type: 'tool_result',
      data: { callId: 'w', denied: true, error: { code: 'forbidden', message: 'no' } },
    }),
    token(11, 'Understood.'),
  ]);
  expect(texts(next)).toEqual(['user:read a', 'assistant:Reading.', 'assistant:Understood.']);
});

test("a call's input request shows on the call until it is answered or the turn ends", () => {
  const ID = '00000000-0000-4000-8000-0000000000e2';
  const base = applyAll(emptyView(SESSION), [
    started(1),
    ev(2, { type: 'tool_call', data: { callId: 'c1', tool: 'mcp__forms__ask', arguments: {} } }),
  ]);
  const asked = applyChat(
    base,
    ev(3, {
      type: 'input_requested',
      data: {
        callId: 'c1',
        tool: 'mcp__forms__ask',
        elicitationId: ID,
        server: 'forms',
        mode: 'url',
        message: 'Connect',
        url: 'https://provider.example/connect',
        expiresAt: '2026-12-03T00:10:00.000Z',
      },
    }),
  );
  expect(asked.calls.get('c1')?.input).toMatchObject({
    id: ID,
    mode: 'url',
    url: 'https://provider.example/connect',
  });
  const answered = applyChat(
    asked,
    ev(4, {
      type: 'input_answered',
      data: { callId: 'c1', elicitationId: ID, action: 'accept', by: 'person' },
    }),
  );
  expect(answered.calls.get('c1')?.input).toBeUndefined();
  const stopped = applyChat(asked, ev(4, { type: 'cancelled', data: { message: 'cancelled by the user' } }));
  expect(stopped.calls.get('c1')?.input).toBeUndefined();
  expect(stopped.calls.get('c1')?.status).toBe('cancelled');
});
