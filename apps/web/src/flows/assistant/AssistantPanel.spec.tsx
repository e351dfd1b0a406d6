import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createMemoryRouter, RouterProvider } from 'react-router';
import type { ChatSession, FlowProposal, Workflow } from '@switchyard/contracts';
import { proposeFlowEdit } from '@switchyard/plan';
import { AuthProvider } from '../../api/auth';
import { tokenStore } from '../../api/client';
import { I18nProvider } from '../../i18n/i18n';
import { meReply, reply, stubFetch } from '../../testing/reply';
import { ev, FakeStream } from '../../testing/sse';
import { WAIT_TOOL } from '../../testing/tools';
import FlowEditorPage from '../FlowEditorPage';

/** The builder's docked assistant against a fake server whose turns are fed frame by frame. */

const uuid = (tail: string) => `00000000-0000-4000-8000-${tail.padStart(12, '0')}`;
const [OWNER, WF, SESSION, RUN, MSG] = ['1', 'f1', 'c0001', 'e1', 'aa'].map(uuid) as [
  string,
  string,
  string,
  string,
  string,
];
const TOOLS = [WAIT_TOOL];

const GRAPH = {
  nodes: [
    { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
    { id: 'a', type: 'tool', position: { x: 320, y: 0 }, data: { tool: 'wait', arguments: { ms: 0 } } },
  ],
  edges: [{ id: 'e-start-a', source: 'start', target: 'a' }],
};
const INPUTS = { type: 'object', properties: {} };

const STORED = { ownerId: OWNER, description: '', publishedVersion: null, tool: null, lastRun: null };

function workflow(revision: number, graph: unknown = GRAPH): Workflow {
  const plan = { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0 }, dependsOn: [], description: '' }] };
  return {
    ...STORED,
    id: WF,
    name: 'Greeter',
    revision,
    createdAt: '',
    updatedAt: '',
    inputSchema: INPUTS,
    plan,
    graph,
  };
}

function proposal(): FlowProposal {
  const made = proposeFlowEdit(
    { graph: GRAPH, inputSchema: INPUTS, revision: 2 },
    {
      mode: 'edit',
      summary: 'wait once more after a',
      ops: [
        { op: 'add_node', node: { id: 'b', type: 'tool', data: { tool: 'wait', arguments: { ms: 5 } } } },
        { op: 'add_edge', source: 'a', target: 'b' },
      ],
    },
    TOOLS,
  );
  if (!made.ok) throw new Error(JSON.stringify(made.issues));
  return made.proposal;
}

/** The builder's routes (the caller, the catalog, one workflow) and the chat routes of one session. */
function serve() {
  const streams: FakeStream[] = [];
  let current = workflow(2);
  let session: ChatSession | undefined;
  const sent = stubFetch(({ method, path, body }) => {
    const chat = `/api/chat/sessions/${SESSION}`;
    if (path === '/api/me') return meReply(OWNER);
    if (path === '/api/agent/tools') return reply(200, TOOLS);
    if (path === '/api/agents') return reply(200, { items: [], total: 0, pageNum: 1, pageSize: 200 });
    if (path === `/api/workflows/${WF}` && method === 'GET') return reply(200, current);
    if (path === '/api/chat/sessions' && method === 'POST') {
      const { title, permissionMode } = body as Pick<ChatSession, 'title' | 'permissionMode'>;
      const [createdAt, updatedAt, status] = ['', '', 'idle' as const];
      session = {
        id: SESSION,
        ownerId: OWNER,
        agentId: null,
        permissionMode,
        title,
        budget: null,
        status,
        createdAt,
        updatedAt,
      };
      return reply(201, session);
    }
    if (path === chat && method === 'GET' && session)
      return reply(200, { ...session, messages: [], toolCalls: [], lastEventId: 0 });
    if (path === `${chat}/messages` && method === 'POST') return streams.shift()?.response();
    return undefined;
  });
  return {
    sent,
    /** Queues the body of the next message's turn. */
    turn(): FakeStream {
      streams.push(new FakeStream());
      return streams[streams.length - 1] as FakeStream;
    },
    /** The server now holds this revision (the assistant saved it). */
    saved(revision: number, graph: unknown) {
      current = workflow(revision, graph);
    },
    posts: (path: string) => sent.filter((s) => s.method === 'POST' && s.path === path),
  };
}

function renderBuilder() {
  // The builder's leave guard needs a data router.
  const router = createMemoryRouter(
    [
      {
        path: '/flows/:flowId',
        element: (
          <AuthProvider>
            <FlowEditorPage />
          </AuthProvider>
        ),
      },
    ],
    { initialEntries: [`/flows/${WF}`] },
  );
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <RouterProvider router={router} />
      </I18nProvider>
    </QueryClientProvider>,
  );
}

function ask(text: string) {
  const panel = screen.getByTestId('assistant-panel');
  const box = within(panel).getByRole('textbox', { name: 'Message' });
  fireEvent.change(box, { target: { value: text } });
  fireEvent.keyDown(box, { key: 'Enter' });
}

beforeAll(() => {
  // What @xyflow/react measures with; jsdom has neither.
  globalThis.ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  } as unknown as typeof ResizeObserver;
  (globalThis as { DOMMatrixReadOnly?: unknown }).DOMMatrixReadOnly ??= class {
    m22 = 1;
  };
  // The builder times its checks as a user-timing measure, which jsdom does not record.
  performance.measure ??= (() => undefined) as unknown as typeof performance.measure;
});
beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('a message carries the canvas; a proposal frame puts it under review on the page', async () => {
  const server = serve();
  const turn = server.turn();
  renderBuilder();

  const open = await screen.findByRole('button', { name: /Assistant/ });
  expect(screen.getByTestId('assistant-panel').hidden).toBe(true);
  fireEvent.click(open);
  expect(open.getAttribute('aria-expanded')).toBe('true');
  expect(screen.getByTestId('assistant-panel').hidden).toBe(false);

  ask('add a second wait after a');
  await waitFor(() => expect(server.posts(`/api/chat/sessions/${SESSION}/messages`)).toHaveLength(1));
  expect(server.posts('/api/chat/sessions')[0]?.body).toEqual({
    permissionMode: 'ask',
    title: 'Assistant: Greeter',
  });
  const body = server.posts(`/api/chat/sessions/${SESSION}/messages`)[0]?.body as {
    content: string;
    flow: { workflowId: string; revision: number; name: string; graph: typeof GRAPH; inputSchema: unknown };
  };
  expect(body.content).toBe('add a second wait after a');
  expect(body.flow).toMatchObject({ workflowId: WF, revision: 2, name: 'Greeter', inputSchema: INPUTS });
  expect(body.flow.graph.nodes.map((n) => n.id)).toEqual(['start', 'a']);
  expect(body.flow.graph.edges.map((e) => [e.source, e.target])).toEqual([['start', 'a']]);

  expect(screen.queryByTestId('proposal-bar')).toBeNull();
  const callId = 'call_1';
  const edit = proposal();
  turn.push(
    ev(SESSION, 1, { type: 'turn_started', data: { messageId: MSG, content: body.content } }),
    ev(SESSION, 2, {
      type: 'tool_call',
      data: { callId, tool: 'edit_current_flow', arguments: edit.request as Record<string, unknown> },
    }),
    ev(SESSION, 3, { type: 'flow_proposal', data: { callId, proposal: edit } }),
    ev(SESSION, 4, { type: 'tool_result', data: { callId, result: { proposed: true } } }),
    ev(SESSION, 5, { type: 'message_complete', data: { content: 'Proposed: review it on the canvas.' } }),
  );
  const bar = await screen.findByTestId('proposal-bar');
  expect(within(bar).getByText('wait once more after a')).toBeTruthy();
  expect(within(bar).getByText(/1 added · 0 changed · 0 removed/)).toBeTruthy();
  // The conversation shows the call as a row of its own.
  const row = await screen.findByRole('button', { name: /edit_current_flow/ });
  expect(row.closest('[data-status]')?.getAttribute('data-status')).toBe('completed');
  expect(await screen.findByText('Proposed: review it on the canvas.')).toBeTruthy();
});

test('a save by the assistant reloads the saved flow and shows the run it started', async () => {
  const server = serve();
  const turn = server.turn();
  renderBuilder();
  fireEvent.click(await screen.findByRole('button', { name: /Assistant/ }));
  expect((await screen.findByTestId('save-state')).textContent).toContain('revision 2');

  ask('run it');
  await waitFor(() => expect(server.posts(`/api/chat/sessions/${SESSION}/messages`)).toHaveLength(1));
  const gets = () => server.sent.filter((s) => s.method === 'GET' && s.path === `/api/workflows/${WF}`);
  const before = gets().length;
  const saved = {
    ...GRAPH,
    nodes: [...GRAPH.nodes, { id: 'b', type: 'tool', position: { x: 640, y: 0 }, data: { tool: 'wait' } }],
  };
  server.saved(3, saved);
  turn.push(
    ev(SESSION, 1, { type: 'turn_started', data: { messageId: MSG, content: 'run it' } }),
    ev(SESSION, 2, { type: 'tool_call', data: { callId: 'c2', tool: 'run_current_flow', arguments: {} } }),
    ev(SESSION, 3, {
      type: 'flow_saved',
      data: { callId: 'c2', workflowId: WF, revision: 3, runId: RUN },
    }),
  );
  await waitFor(() => expect(gets().length).toBe(before + 1));
  await waitFor(() => expect(screen.getByTestId('save-state').textContent).toContain('revision 3'));
  // The run dock follows the run the assistant started.
  await waitFor(() =>
    expect(server.sent.some((s) => s.method === 'GET' && s.path === `/api/agent/runs/${RUN}`)).toBe(true),
  );
  turn.push(ev(SESSION, 4, { type: 'message_complete', data: { content: 'Saved and started.' } }));
  expect(await screen.findByText('Saved and started.')).toBeTruthy();
});

test('Escape hides the panel and gives the focus back to its button; the session stays', async () => {
  serve();
  renderBuilder();
  const open = await screen.findByRole('button', { name: /Assistant/ });
  fireEvent.click(open);
  const panel = screen.getByTestId('assistant-panel');
  const box = within(panel).getByRole('textbox', { name: 'Message' });
  await waitFor(() => expect(document.activeElement).toBe(box));
  fireEvent.change(box, { target: { value: 'kept' } });
  fireEvent.keyDown(box, { key: 'Escape' });
  expect(panel.hidden).toBe(true);
  expect(document.activeElement).toBe(open);
  fireEvent.click(open);
  expect((within(panel).getByRole('textbox', { name: 'Message' }) as HTMLTextAreaElement).value).toBe('kept');
});
