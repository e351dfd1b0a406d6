import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import type { ChatSession, ChatSessionDetail } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { meReply, reply, stubFetch } from '../testing/reply';
import { ev, FakeStream } from '../testing/sse';
import ChatPage from './ChatPage';
import { CHAT_PAGE_SIZE } from '../chat/SessionList';

/** The chat page against a fake server whose turn streams are fed frame by frame by each test. */

const OWNER = '00000000-0000-4000-8000-000000000001';
const USER_MSG = '00000000-0000-4000-8000-0000000000aa';
const sessionId = (n: number) => `00000000-0000-4000-8000-0000000c${String(n).padStart(4, '0')}`;

function session(n: number, over: Partial<ChatSession> = {}): ChatSession {
  return {
    id: sessionId(n),
    ownerId: OWNER,
    agentId: null,
    permissionMode: 'ask',
    title: `Chat ${n}`,
    budget: null,
    status: 'completed',
    createdAt: new Date(Date.now() - n * 60_000).toISOString(),
    updatedAt: new Date(Date.now() - n * 60_000).toISOString(),
    ...over,
  };
}

/**
 * A fake server: sessions (list with q and cursor paging, create, get, patch, delete), agents, and
 * the turn routes. Each POST of a message or GET of a stream takes the next FakeStream the test
 * queued, or is refused with `refuseNext`.
 */
function serve(initial: ChatSession[], details: Record<string, Partial<ChatSessionDetail>> = {}) {
  let sessions = [...initial];
  const streams: FakeStream[] = [];
  const refusals: Array<{ status: number; body: Record<string, unknown> }> = [];
  const sent = stubFetch(({ method, path, query, body }) => {
    if (path === '/api/me') return meReply(OWNER);
    if (path === '/api/agents')
      return reply(200, {
        items: [
          {
            id: 7,
            name: 'Librarian',
            description: '',
            systemPrompt: 'You file things.',
            modelSettings: {},
            mcpToolIds: [],
            createdAt: '',
            updatedAt: '',
          },
        ],
        total: 1,
        pageNum: 1,
        pageSize: 200,
      });
    if (path === '/api/chat/sessions' && method === 'GET') {
      const q = (query.get('q') ?? '').toLowerCase();
      const limit = Number(query.get('limit') ?? 30);
      const from = Number(query.get('cursor') ?? 0);
      const hits = sessions.filter((s) => s.title.toLowerCase().includes(q));
      const items = hits.slice(from, from + limit);
      return reply(200, { items, nextCursor: from + limit < hits.length ? String(from + limit) : null });
    }
    if (path === '/api/chat/sessions' && method === 'POST') {
      const b = body as { agentId?: number; permissionMode: ChatSession['permissionMode'] };
      const made = session(99, {
        title: 'New chat',
        status: 'idle',
        agentId: b.agentId ?? null,
        permissionMode: b.permissionMode,
        updatedAt: new Date().toISOString(),
      });
      sessions = [made, ...sessions];
      return reply(201, made);
    }
    const one = /^\/api\/chat\/sessions\/([^/]+)$/.exec(path);
    if (one) {
      const s = sessions.find((x) => x.id === one[1]);
      if (!s) return reply(404, { code: 'not_found', detail: 'no such chat' });
      if (method === 'GET')
        return reply(200, { ...s, messages: [], toolCalls: [], lastEventId: 0, ...(details[s.id] ?? {}) });
      if (method === 'PATCH') {
        const next = { ...s, ...(body as Partial<ChatSession>) };
        sessions = sessions.map((x) => (x.id === s.id ? next : x));
        return reply(200, next);
      }
      if (method === 'DELETE') {
        sessions = sessions.filter((x) => x.id !== s.id);
        return reply(200, s);
      }
    }
    if (/^\/api\/chat\/sessions\/[^/]+\/(messages|stream)$/.exec(path)) {
      const refusal = method === 'POST' ? refusals.shift() : undefined;
      if (refusal) return reply(refusal.status, refusal.body);
      const stream = streams.shift();
      if (!stream) return reply(500, { code: 'internal', detail: 'no stream queued' });
      return stream.response();
    }
    if (/\/(approve|deny|cancel)$/.exec(path) && method === 'POST')
      return reply(200, { accepted: true, status: 'running' });
    return undefined;
  });
  return {
    sent,
    /** Queues the body of the next turn POST or stream GET. */
    stream(): FakeStream {
      const s = new FakeStream();
      streams.push(s);
      return s;
    },
    refuseNext(status: number, body: Record<string, unknown>) {
      refusals.push({
        status,
        body: { type: 'about:blank', title: '', status, correlationId: 'c', ...body },
      });
    },
    posts: (suffix: string) => sent.filter((s) => s.method === 'POST' && s.path.endsWith(suffix)),
  };
}

const at = { pathname: '' };
function Where() {
  at.pathname = useLocation().pathname;
  return null;
}

function renderPage(start = '/chat') {
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={[start]}>
          <AuthProvider>
            <Where />
            <Routes>
              <Route path="/chat/:sessionId?" element={<ChatPage />} />
            </Routes>
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
  return at;
}

const log = () => screen.getByRole('list', { name: 'Conversation' });
const composer = () => screen.getByRole('textbox', { name: 'Message' });
async function send(text: string) {
  await waitFor(() => expect(composer()).toBeTruthy());
  fireEvent.change(composer(), { target: { value: text } });
  fireEvent.keyDown(composer(), { key: 'Enter' });
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('a new chat is created with the chosen agent and mode; its first message streams its answer token by token', async () => {
  const server = serve([]);
  const turn = server.stream();
  const where = renderPage('/chat');
  expect(await screen.findByText(/No chats yet/)).toBeTruthy();
  fireEvent.change(await screen.findByRole('combobox', { name: 'Agent' }), { target: { value: '7' } });
  await waitFor(() =>
    expect((screen.getByRole('combobox', { name: 'Agent' }) as HTMLSelectElement).value).toBe('7'),
  );
  fireEvent.change(screen.getByRole('combobox', { name: 'Permission mode' }), {
    target: { value: 'full-access' },
  });
  await send('Say hello');

  await waitFor(() => expect(where.pathname).toBe(`/chat/${sessionId(99)}`));
  expect(server.posts('/api/chat/sessions')[0]?.body).toEqual({ permissionMode: 'full-access', agentId: 7 });
  await waitFor(() => expect(server.posts('/messages')).toHaveLength(1));
  expect(server.posts('/messages')[0]?.body).toEqual({ content: 'Say hello' });
  // The message shows at once, before the server confirms it.
  expect(await within(log()).findByText('Say hello')).toBeTruthy();
  expect(await screen.findByText('Librarian')).toBeTruthy();

  const id = sessionId(99);
  act(() =>
    turn.push(ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'Say hello' } })),
  );
  act(() => turn.push(ev(id, 2, { type: 'token', data: { text: 'Hel' } })));
  await waitFor(() => expect(screen.getByTestId('chat-draft').textContent).toBe('Hel'));
  // A frame split across two network reads is parsed whole.
  act(() => turn.raw('event: token\nid: 3\ndata: {"type":"token","sessionId":"'));
  act(() => turn.raw(`${id}","seq":3,"at":"${new Date().toISOString()}","data":{"text":"lo!"}}\n\n`));
  await waitFor(() => expect(screen.getByTestId('chat-draft').textContent).toBe('Hello!'));
  expect(screen.getByRole('button', { name: 'Cancel turn' })).toBeTruthy();

  act(() => turn.push(ev(id, 4, { type: 'message_complete', data: { content: 'Hello!' } })));
  act(() => turn.end());
  await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel turn' })).toBeNull());
  expect(screen.queryByTestId('chat-draft')).toBeNull();
  expect(within(log()).getAllByText(/Hello!/)).toHaveLength(1);
  expect(within(log()).getAllByText('Say hello')).toHaveLength(1);
  // Screen readers hear that the answer is whole once, not every token.
  expect(await screen.findByText('The assistant has answered.')).toBeTruthy();
});

test('a tool call folds into a row; opened, it shows its arguments and result, long JSON behind "show all"', async () => {
  const server = serve([session(1)]);
  const turn = server.stream();
  renderPage(`/chat/${sessionId(1)}`);
  await send('list files');
  const id = sessionId(1);
  const big = { lines: Array.from({ length: 80 }, (_, i) => `line ${i} of a long listing`) };
  act(() =>
    turn.push(
      ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'list files' } }),
      ev(id, 2, {
        type: 'tool_call',
        data: { callId: 'c1', tool: 'list_directory', arguments: { path: 'docs' }, effect: 'read' },
      }),
    ),
  );
  const row = await screen.findByRole('button', { name: 'Tool call list_directory: running' });
  expect(row.getAttribute('aria-expanded')).toBe('false');
  act(() =>
    turn.push(ev(id, 3, { type: 'tool_result', data: { callId: 'c1', result: big, durationMs: 12 } })),
  );
  const done = await screen.findByRole('button', { name: 'Tool call list_directory: done' });
  fireEvent.click(done);
  expect(done.getAttribute('aria-expanded')).toBe('true');
  expect(screen.getByLabelText('Arguments').textContent).toContain('"path": "docs"');
  const result = screen.getByLabelText('Result');
  expect(result.textContent).not.toContain('line 79');
  fireEvent.click(screen.getByRole('button', { name: /^Show all/ }));
  expect(screen.getByLabelText('Result').textContent).toContain('line 79');
  act(() => turn.push(ev(id, 4, { type: 'message_complete', data: { content: 'Two files.' } })));
  expect(await within(log()).findByText('Two files.')).toBeTruthy();
});

test('a confirmation card checks the edited arguments as JSON and sends them; deny sends its reason', async () => {
  const server = serve([session(1)]);
  const turn = server.stream();
  renderPage(`/chat/${sessionId(1)}`);
  await send('write two files');
  const id = sessionId(1);
  const ask = (seq: number, callId: string, filePath: string) =>
    ev(id, seq, {
      type: 'approval_requested',
      data: {
        callId,
        tool: 'write_file',
        arguments: { filePath, content: 'x' },
        effect: 'write',
        reason: 'write_file changes the workspace: ask mode asks',
      },
    });
  act(() =>
    turn.push(
      ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'x' } }),
      ask(2, 'w1', 'a.txt'),
    ),
  );
  const card = await screen.findByTestId('approval-card');
  expect(within(card).getByText('write_file waits for your confirmation')).toBeTruthy();
  expect(within(card).getByText('write_file changes the workspace: ask mode asks')).toBeTruthy();
  expect(within(card).getByText('write')).toBeTruthy();
  const args = within(card).getByRole('textbox', { name: /Arguments/ });
  fireEvent.change(args, { target: { value: '{"filePath": "b.txt", ' } });
  expect(args.getAttribute('aria-invalid')).toBe('true');
  expect(within(card).getByRole('alert').textContent).toMatch(/Not valid JSON/);
  expect(
    (within(card).getByRole('button', { name: 'Approve with my edits' }) as HTMLButtonElement).disabled,
  ).toBe(true);
  fireEvent.change(args, { target: { value: '["not", "an object"]' } });
  expect(within(card).getByRole('alert').textContent).toBe('The arguments must be a JSON object.');
  fireEvent.change(args, { target: { value: '{"filePath": "b.txt", "content": "edited"}' } });
  fireEvent.click(within(card).getByRole('button', { name: 'Approve with my edits' }));
  await waitFor(() => expect(server.posts('/calls/w1/approve')).toHaveLength(1));
  expect(server.posts('/calls/w1/approve')[0]?.body).toEqual({
    arguments: { filePath: 'b.txt', content: 'edited' },
  });
  await waitFor(() => expect(screen.queryByTestId('approval-card')).toBeNull());

  act(() =>
    turn.push(
      ev(id, 3, { type: 'tool_result', data: { callId: 'w1', result: 'wrote 6 bytes' } }),
      ask(4, 'w2', 'c.txt'),
    ),
  );
  const second = await screen.findByTestId('approval-card');
  fireEvent.change(within(second).getByRole('textbox', { name: /the reason/ }), {
    target: { value: 'not that one' },
  });
  fireEvent.click(within(second).getByRole('button', { name: 'Deny' }));
  await waitFor(() => expect(server.posts('/calls/w2/deny')).toHaveLength(1));
  expect(server.posts('/calls/w2/deny')[0]?.body).toEqual({ reason: 'not that one' });
  act(() =>
    turn.push(
      ev(id, 5, {
        type: 'tool_result',
        data: { callId: 'w2', denied: true, error: { code: 'forbidden', message: 'not that one' } },
      }),
    ),
  );
  expect(await screen.findByRole('button', { name: 'Tool call write_file: denied' })).toBeTruthy();
  expect(screen.getByRole('button', { name: 'Tool call write_file: done' })).toBeTruthy();
});

test('Cancel posts the cancel; the cancelled frame ends the turn and its running call', async () => {
  const server = serve([session(1)]);
  const turn = server.stream();
  renderPage(`/chat/${sessionId(1)}`);
  await send('wait a minute');
  const id = sessionId(1);
  act(() =>
    turn.push(
      ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'wait a minute' } }),
      ev(id, 2, { type: 'tool_call', data: { callId: 'long', tool: 'wait', arguments: { ms: 60_000 } } }),
    ),
  );
  await screen.findByRole('button', { name: 'Tool call wait: running' });
  fireEvent.click(screen.getByRole('button', { name: 'Cancel turn' }));
  await waitFor(() => expect(server.posts('/cancel')).toHaveLength(1));
  act(() => turn.push(ev(id, 3, { type: 'cancelled', data: { message: 'Cancelled by the owner.' } })));
  expect((await screen.findByTestId('turn-cancelled')).textContent).toContain('Cancelled by the owner.');
  expect(screen.getByRole('button', { name: 'Tool call wait: cancelled' })).toBeTruthy();
  await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel turn' })).toBeNull());
  // The composer is free again.
  fireEvent.change(composer(), { target: { value: 'next' } });
  expect((screen.getByRole('button', { name: 'Send' }) as HTMLButtonElement).disabled).toBe(false);
});

test('a dropped connection resumes with GET …/stream after the last frame seen; replayed frames show once', async () => {
  const server = serve([session(1)]);
  const first = server.stream();
  const resumed = server.stream();
  renderPage(`/chat/${sessionId(1)}`);
  await send('count');
  const id = sessionId(1);
  act(() =>
    first.push(
      ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'count' } }),
      ev(id, 2, { type: 'token', data: { text: 'one ' } }),
      ev(id, 3, { type: 'token', data: { text: 'two ' } }),
    ),
  );
  await waitFor(() => expect(screen.getByTestId('chat-draft').textContent).toBe('one two '));
  act(() => first.fail());
  await waitFor(() => expect(server.sent.filter((s) => s.path.endsWith('/stream'))).toHaveLength(1));
  const get = server.sent.find((s) => s.path.endsWith('/stream'));
  expect(get?.method).toBe('GET');
  expect(get?.query.get('lastEventId')).toBe('3');
  // A server that replays from a little earlier: frames 2 and 3 must not be drawn again.
  act(() =>
    resumed.push(
      ev(id, 2, { type: 'token', data: { text: 'one ' } }),
      ev(id, 3, { type: 'token', data: { text: 'two ' } }),
      ev(id, 4, { type: 'token', data: { text: 'three' } }),
      ev(id, 5, { type: 'message_complete', data: { content: 'one two three' } }),
    ),
  );
  await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel turn' })).toBeNull());
  expect(within(log()).getAllByText('one two three')).toHaveLength(1);
  expect(server.posts('/messages')).toHaveLength(1);
});

test('a refused message says why and gives the text back: 409 a turn in progress, model_not_configured its how-to', async () => {
  const server = serve([session(1)]);
  renderPage(`/chat/${sessionId(1)}`);
  server.refuseNext(409, { code: 'conflict', detail: 'a turn is already running in this session' });
  await send('hello?');
  const busy = await screen.findByRole('alert');
  expect(busy.textContent).toContain('A turn is already in progress in this chat');
  expect(busy.textContent).toContain('a turn is already running in this session');
  expect((composer() as HTMLTextAreaElement).value).toBe('hello?');
  expect(within(log()).queryByText('hello?')).toBeNull();

  const howTo = 'No model is configured: set LLM_PROVIDER, LLM_MODEL and LLM_BASE_URL (see docs/models.md).';
  server.refuseNext(422, { code: 'model_not_configured', detail: howTo });
  fireEvent.keyDown(composer(), { key: 'Enter' });
  await waitFor(() =>
    expect(screen.getByRole('alert').getAttribute('data-code')).toBe('model_not_configured'),
  );
  expect(screen.getByRole('alert').textContent).toContain(howTo);
});

test('a turn stopped by its budget names the limit it crossed', async () => {
  const server = serve([session(1)]);
  const turn = server.stream();
  renderPage(`/chat/${sessionId(1)}`);
  await send('loop');
  const id = sessionId(1);
  act(() =>
    turn.push(
      ev(id, 1, { type: 'turn_started', data: { messageId: USER_MSG, content: 'loop' } }),
      ev(id, 2, {
        type: 'error',
        data: {
          code: 'budget_exceeded',
          message: 'the turn made 5 tool calls; its limit is 5',
          details: { limit: 'maxToolCalls' },
        },
      }),
    ),
  );
  const note = await screen.findByTestId('turn-error');
  expect(note.getAttribute('data-code')).toBe('budget_exceeded');
  expect(note.textContent).toContain('It crossed its limit on tool calls.');
  expect(note.textContent).toContain('the turn made 5 tool calls; its limit is 5');
});

test('a deep link to a chat mid-turn draws what is stored, shows its card and follows the turn from the newest event', async () => {
  const id = sessionId(1);
  const server = serve([session(1, { status: 'awaiting_approval' })], {
    [id]: {
      lastEventId: 6,
      messages: [
        { id: USER_MSG, seq: 1, role: 'user', content: 'tidy up', createdAt: '' },
        {
          id: '00000000-0000-4000-8000-0000000000ab',
          seq: 2,
          role: 'assistant',
          content: 'Deleting old.txt.',
          callIds: ['d1'],
          createdAt: '',
        },
      ],
      toolCalls: [
        {
          callId: 'd1',
          messageId: '00000000-0000-4000-8000-0000000000ab',
          tool: 'delete_file',
          arguments: { filePath: 'old.txt' },
          status: 'awaiting_approval',
          effect: 'write',
          decision: { decision: 'ask', reason: 'deleting asks' },
        },
      ],
    },
  });
  const stream = server.stream();
  renderPage(`/chat/${id}`);
  expect(await screen.findByTestId('approval-card')).toBeTruthy();
  expect(screen.getByText('deleting asks')).toBeTruthy();
  await waitFor(() => expect(server.sent.filter((s) => s.path.endsWith('/stream'))).toHaveLength(1));
  expect(server.sent.find((s) => s.path.endsWith('/stream'))?.query.get('lastEventId')).toBe('6');
  act(() =>
    stream.push(
      ev(id, 7, {
        type: 'tool_result',
        data: { callId: 'd1', denied: true, error: { code: 'forbidden', message: 'denied elsewhere' } },
      }),
      ev(id, 8, { type: 'message_complete', data: { content: 'I left it.' } }),
    ),
  );
  expect(await within(log()).findByText('I left it.')).toBeTruthy();
  expect(screen.queryByTestId('approval-card')).toBeNull();
  expect(server.posts('/messages')).toHaveLength(0);
});

test('the mode of an open chat changes with PATCH', async () => {
  const server = serve([session(1)]);
  renderPage(`/chat/${sessionId(1)}`);
  fireEvent.change(await screen.findByRole('combobox', { name: 'Permission mode' }), {
    target: { value: 'approve-for-me' },
  });
  await waitFor(() => expect(screen.getByText(/applies from the next call/)).toBeTruthy());
  const patch = server.sent.find((s) => s.method === 'PATCH');
  expect(patch?.path).toBe(`/api/chat/sessions/${sessionId(1)}`);
  expect(patch?.body).toEqual({ permissionMode: 'approve-for-me' });
});

test('the sessions list: newest first, search, "load more", delete after asking (leaving a chat that was open)', async () => {
  const many = Array.from({ length: CHAT_PAGE_SIZE + 2 }, (_, i) => session(i + 1));
  const server = serve(many);
  const where = renderPage(`/chat/${sessionId(1)}`);
  const list = await screen.findByRole('list', { name: 'Chats' });
  await waitFor(() => expect(within(list).getAllByRole('listitem')).toHaveLength(CHAT_PAGE_SIZE));
  expect(within(list).getAllByRole('listitem')[0]?.getAttribute('aria-label')).toBe('Chat 1');
  fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
  await waitFor(() => expect(within(list).getAllByRole('listitem')).toHaveLength(CHAT_PAGE_SIZE + 2));
  expect(
    server.sent.some(
      (s) => s.path === '/api/chat/sessions' && s.query.get('cursor') === String(CHAT_PAGE_SIZE),
    ),
  ).toBe(true);

  fireEvent.change(screen.getByRole('searchbox', { name: 'Search chats by title' }), {
    target: { value: 'Chat 3' },
  });
  await waitFor(() =>
    expect(within(screen.getByRole('list', { name: 'Chats' })).getAllByRole('listitem')).toHaveLength(4),
  );
  expect(server.sent.some((s) => s.query.get('q') === 'Chat 3')).toBe(true);
  fireEvent.change(screen.getByRole('searchbox', { name: 'Search chats by title' }), {
    target: { value: 'zzz' },
  });
  expect(await screen.findByText('No chat matches “zzz”.')).toBeTruthy();
  fireEvent.change(screen.getByRole('searchbox', { name: 'Search chats by title' }), {
    target: { value: '' },
  });

  const first = await screen.findByRole('listitem', { name: 'Chat 1' });
  fireEvent.click(within(first).getByRole('button', { name: 'Delete chat Chat 1' }));
  const dialog = screen.getByRole('dialog', { name: 'Delete “Chat 1”?' });
  expect(server.sent.some((s) => s.method === 'DELETE')).toBe(false);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
  await waitFor(() => expect(where.pathname).toBe('/chat'));
  expect(server.sent.find((s) => s.method === 'DELETE')?.path).toBe(`/api/chat/sessions/${sessionId(1)}`);
  await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Chat 1' })).toBeNull());
});

test('a 409 because a turn runs elsewhere (another tab) follows that turn here, Cancel included', async () => {
  const id = sessionId(1);
  const details: Record<string, Partial<ChatSessionDetail>> = {};
  const server = serve([session(1)], details);
  renderPage(`/chat/${id}`);
  await waitFor(() => expect(composer()).toBeTruthy());
  // Meanwhile another tab sent a message: the stored session now has a turn running.
  details[id] = {
    status: 'running',
    lastEventId: 4,
    messages: [{ id: USER_MSG, seq: 1, role: 'user', content: 'from the other tab', createdAt: '' }],
  };
  server.refuseNext(409, { code: 'conflict', detail: 'a turn is already running in this session' });
  const stream = server.stream();
  await send('me too');
  expect((await screen.findByRole('alert')).textContent).toContain('A turn is already in progress');
  await waitFor(() => expect(server.sent.filter((s) => s.path.endsWith('/stream'))).toHaveLength(1));
  expect(server.sent.find((s) => s.path.endsWith('/stream'))?.query.get('lastEventId')).toBe('4');
  expect(within(log()).getByText('from the other tab')).toBeTruthy();
  expect(await screen.findByRole('button', { name: 'Cancel turn' })).toBeTruthy();
  act(() =>
    stream.push(
      ev(id, 5, { type: 'token', data: { text: 'Answer for the other tab.' } }),
      ev(id, 6, { type: 'message_complete', data: { content: 'Answer for the other tab.' } }),
    ),
  );
  expect(await within(log()).findByText('Answer for the other tab.')).toBeTruthy();
  await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel turn' })).toBeNull());
  // The text that was refused is still in the composer, to send when the chat is free.
  expect((composer() as HTMLTextAreaElement).value).toBe('me too');
});
