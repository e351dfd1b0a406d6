import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes, useLocation, useParams } from 'react-router';
import { PERMISSIONS, type WorkflowSummary, type WorkflowTemplate } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import FlowsPage, { FLOWS_PAGE_SIZE } from './FlowsPage';
import { reply } from '../testing/reply';

/** The library page against a mocked fetch: what it asks the server for, and what it shows. */

const OWNER = '00000000-0000-4000-8000-000000000001';
const NOW = Date.now();

function flow(n: number, over: Partial<WorkflowSummary> & { lastRun?: unknown } = {}): WorkflowSummary {
  return {
    id: `00000000-0000-4000-8000-0000000001${String(n).padStart(2, '0')}`,
    ownerId: OWNER,
    name: `Flow ${n}`,
    description: `does thing ${n}`,
    revision: 3,
    publishedVersion: null,
    tool: null,
    createdAt: new Date(NOW - 86_400_000).toISOString(),
    updatedAt: new Date(NOW - 5 * 60_000).toISOString(),
    lastRun: null,
    ...over,
  } as WorkflowSummary;
}

const template: WorkflowTemplate = {
  id: 'summarise-file',
  name: 'Summarise a file',
  description: 'Reads a file and writes a summary',
  category: 'documents',
  inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  graph: {
    nodes: [
      { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} },
      { id: 'read', type: 'tool', position: { x: 200, y: 0 }, data: { tool: 'read_file' } },
      { id: 'sum', type: 'tool', position: { x: 400, y: 0 }, data: { tool: 'summarise' } },
      { id: 'n1', type: 'note', position: { x: 0, y: 200 }, data: { text: 'hi' } },
    ],
    edges: [{ id: 'e1', source: 'read', target: 'sum' }],
  },
};

interface Sent {
  method: string;
  path: string;
  query: URLSearchParams;
  body: unknown;
}

/** A fake server holding `flows`: the list filters by q and pages; copy, delete and templates work. */
function serve(initial: WorkflowSummary[]) {
  let flows = [...initial];
  const sent: Sent[] = [];
  globalThis.fetch = jest.fn((url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const [path = '', qs = ''] = url.split('?');
    const query = new URLSearchParams(qs);
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method, path, query, body });
    if (path === '/api/me')
      return Promise.resolve(
        reply(200, {
          owner: { id: OWNER, name: 'ada', role: 'user', createdAt: '' },
          permissions: PERMISSIONS,
          tokenId: '00000000-0000-4000-8000-000000000002',
        }),
      );
    if (path === '/api/workflows' && method === 'GET') {
      const q = (query.get('q') ?? '').toLowerCase();
      const pageNum = Number(query.get('pageNum') ?? 1);
      const pageSize = Number(query.get('pageSize') ?? 20);
      const hits = flows.filter((f) => `${f.name} ${f.description}`.toLowerCase().includes(q));
      return Promise.resolve(
        reply(200, {
          items: hits.slice((pageNum - 1) * pageSize, pageNum * pageSize),
          total: hits.length,
          pageNum,
          pageSize,
        }),
      );
    }
    if (path === '/api/workflows/templates') return Promise.resolve(reply(200, { items: [template] }));
    if (path === `/api/workflows/templates/${template.id}/instantiate` && method === 'POST')
      return Promise.resolve(reply(201, { ...flow(99, { name: template.name }), plan: { steps: [] } }));
    const copy = /^\/api\/workflows\/([^/]+)\/copy$/.exec(path);
    if (copy && method === 'POST') {
      const original = flows.find((f) => f.id === copy[1]);
      const made = flow(50, { name: `${original?.name ?? ''} (copy)` });
      flows = [...flows, made];
      return Promise.resolve(reply(201, { ...made, inputSchema: {}, plan: { steps: [] }, graph: null }));
    }
    const one = /^\/api\/workflows\/([^/]+)$/.exec(path);
    if (one && method === 'DELETE') {
      const gone = flows.find((f) => f.id === one[1]);
      flows = flows.filter((f) => f.id !== one[1]);
      return Promise.resolve(reply(200, { ...gone, inputSchema: {}, plan: { steps: [] }, graph: null }));
    }
    return Promise.resolve(reply(404, { detail: `no mock for ${method} ${path}` }));
  }) as unknown as typeof fetch;
  return {
    sent,
    lists: () => sent.filter((s) => s.method === 'GET' && s.path === '/api/workflows'),
  };
}

function FlowStub() {
  return <p>canvas of {useParams()['id']}</p>;
}

/** Where the page has navigated to, as the test reads it. */
const at = { pathname: '', search: '' };
function Where() {
  const location = useLocation();
  at.pathname = location.pathname;
  at.search = location.search;
  return null;
}

function renderPage(start = '/flows') {
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={[start]}>
          <AuthProvider>
            <Where />
            <Routes>
              <Route path="/flows" element={<FlowsPage />} />
              <Route path="/flows/:id" element={<FlowStub />} />
            </Routes>
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
  return at;
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('each saved flow is a card: name linking to its canvas, description, published or draft, updated, last run', async () => {
  const run = '00000000-0000-4000-8000-00000000aaaa';
  serve([
    flow(1, {
      publishedVersion: 2,
      tool: 'run_workflow_x',
      lastRun: { id: run, status: 'completed', createdAt: new Date(NOW - 3_600_000).toISOString() },
    }),
    flow(2, { description: '' }),
  ]);
  renderPage();
  const list = await screen.findByRole('list', { name: 'Flows' });
  const cards = within(list).getAllByRole('listitem');
  expect(cards).toHaveLength(2);

  const first = within(list).getByRole('listitem', { name: 'Flow 1' });
  expect(within(first).getByRole('link', { name: 'Flow 1' }).getAttribute('href')).toBe(
    `/flows/${flow(1).id}`,
  );
  expect(first.textContent).toContain('does thing 1');
  expect(first.textContent).toContain('Published v2');
  expect(first.textContent).toContain('5 minutes ago');
  const last = within(first).getByRole('link', { name: /^done/ });
  expect(last.getAttribute('href')).toBe(`/runs/${run}`);
  expect(last.textContent).toContain('1 hour ago');

  const second = within(list).getByRole('listitem', { name: 'Flow 2' });
  expect(second.textContent).toContain('Draft');
  expect(second.textContent).toContain('No description');
  expect(second.textContent).toContain('Never run');
  expect(within(second).getByRole('button', { name: 'Save a copy of Flow 2' })).toBeTruthy();
  expect(within(second).getByRole('button', { name: 'Delete Flow 2' })).toBeTruthy();
});

test('no flows: the empty state offers a new flow and the templates', async () => {
  serve([]);
  const router = renderPage();
  expect(await screen.findByText(/No flows yet/)).toBeTruthy();
  const empty = screen.getByRole('note');
  expect(within(empty).getByRole('link', { name: 'New flow' }).getAttribute('href')).toBe('/flows/new');
  fireEvent.click(within(empty).getByRole('button', { name: 'Browse templates' }));
  expect(await screen.findByRole('list', { name: 'Templates' })).toBeTruthy();
  expect(router.search).toBe('?view=templates');
});

test('search sends q once typing pauses, keeps it in the URL, and a reload starts from it', async () => {
  const server = serve([flow(1), flow(2, { name: 'Invoice mailer' })]);
  const router = renderPage();
  await screen.findByRole('listitem', { name: 'Flow 1' });
  fireEvent.change(screen.getByRole('searchbox', { name: /Search flows/ }), { target: { value: 'invoice' } });
  await waitFor(() => expect(router.search).toBe('?q=invoice'));
  await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Flow 1' })).toBeNull());
  expect(screen.getByRole('listitem', { name: 'Invoice mailer' })).toBeTruthy();
  const queries = server.lists().map((s) => s.query.get('q'));
  expect(queries[0]).toBeNull();
  expect(queries.at(-1)).toBe('invoice');
  // Intermediate keystrokes were not sent one by one.
  expect(queries.filter((q) => q !== null && q !== 'invoice')).toEqual([]);

  const again = serve([flow(1), flow(2, { name: 'Invoice mailer' })]);
  document.body.innerHTML = '';
  renderPage('/flows?q=invoice');
  expect((await screen.findByRole('searchbox', { name: /Search flows/ })) as HTMLInputElement).toHaveProperty(
    'value',
    'invoice',
  );
  await screen.findByRole('listitem', { name: 'Invoice mailer' });
  expect(again.lists()[0]?.query.get('q')).toBe('invoice');
});

test('a search that finds nothing says so', async () => {
  serve([flow(1)]);
  renderPage('/flows?q=zebra');
  expect(await screen.findByText('No flow matches “zebra”.')).toBeTruthy();
});

test('pages: next asks for page 2 and says where you are', async () => {
  const many = Array.from({ length: FLOWS_PAGE_SIZE + 3 }, (_, i) => flow(i + 1));
  const server = serve(many);
  const router = renderPage();
  await screen.findByRole('listitem', { name: 'Flow 1' });
  expect(screen.getByText('Page 1 of 2')).toBeTruthy();
  expect(screen.getByRole('button', { name: /Previous/ }).hasAttribute('disabled')).toBe(true);
  fireEvent.click(screen.getByRole('button', { name: /Next/ }));
  await screen.findByRole('listitem', { name: `Flow ${FLOWS_PAGE_SIZE + 1}` });
  expect(screen.getByText('Page 2 of 2')).toBeTruthy();
  expect(router.search).toBe('?page=2');
  expect(server.lists().at(-1)?.query.get('pageNum')).toBe('2');
  expect(screen.getAllByRole('listitem')).toHaveLength(3);
});

test('save a copy is one click; delete asks first and sends the revision', async () => {
  const server = serve([flow(1), flow(2)]);
  renderPage();
  const card = await screen.findByRole('listitem', { name: 'Flow 1' });
  fireEvent.click(within(card).getByRole('button', { name: 'Save a copy of Flow 1' }));
  expect(await screen.findByRole('listitem', { name: 'Flow 1 (copy)' })).toBeTruthy();
  expect(server.sent.filter((s) => s.method === 'POST').map((s) => s.path)).toEqual([
    `/api/workflows/${flow(1).id}/copy`,
  ]);

  fireEvent.click(
    within(screen.getByRole('listitem', { name: 'Flow 2' })).getByRole('button', { name: 'Delete Flow 2' }),
  );
  const dialog = screen.getByRole('dialog', { name: 'Delete “Flow 2”?' });
  expect(server.sent.filter((s) => s.method === 'DELETE')).toHaveLength(0);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
  await waitFor(() => expect(screen.queryByRole('listitem', { name: 'Flow 2' })).toBeNull());
  const deletes = server.sent.filter((s) => s.method === 'DELETE');
  expect(deletes.map((s) => `${s.path}?${s.query.toString()}`)).toEqual([
    `/api/workflows/${flow(2).id}?revision=3`,
  ]);
});

test('a template card shows its step count; "Use template" makes a draft and opens it', async () => {
  const server = serve([]);
  const router = renderPage('/flows?view=templates');
  const card = await screen.findByRole('listitem', { name: 'Summarise a file' });
  expect(card.textContent).toContain('Steps: 2');
  expect(card.textContent).toContain('Inputs: 1');
  fireEvent.click(within(card).getByRole('button', { name: 'Use template Summarise a file' }));
  expect(await screen.findByText(`canvas of ${flow(99).id}`)).toBeTruthy();
  expect(router.pathname).toBe(`/flows/${flow(99).id}`);
  expect(server.sent.find((s) => s.method === 'POST')?.path).toBe(
    `/api/workflows/templates/${template.id}/instantiate`,
  );
});

test('a page past the end (an old link, or its last flow deleted) shows the last page there is', async () => {
  serve(Array.from({ length: FLOWS_PAGE_SIZE + 1 }, (_, i) => flow(i + 1)));
  const where = renderPage('/flows?page=5');
  expect(await screen.findByRole('listitem', { name: `Flow ${FLOWS_PAGE_SIZE + 1}` })).toBeTruthy();
  expect(where.search).toBe('?page=2');
  expect(screen.queryByText(/No flows yet/)).toBeNull();
});
