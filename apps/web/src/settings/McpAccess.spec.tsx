import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import {
  PERMISSIONS,
  ROLE_PERMISSIONS,
  type McpAccess as Access,
  type WorkflowSummary,
} from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { reply, stubFetch, type SentRequest } from '../testing/reply';
import { McpAccess } from './McpAccess';

/**
 * The MCP access page against a fake server: a user changes the mode and picks workflows (the switch
 * is the admin's), the empty state without published workflows, an admin turning another owner's
 * access off by ?owner=, and the client snippets with this origin's endpoint.
 */

const ME = '00000000-0000-4000-8000-0000000000aa';

function workflow(id: string, name: string, published: boolean): WorkflowSummary {
  return {
    id,
    ownerId: ME,
    name,
    description: `${name} does things`,
    revision: 1,
    publishedVersion: published ? 1 : null,
    tool: published ? `run_workflow_${id}` : null,
    createdAt: '2026-12-01T10:00:00.000Z',
    updatedAt: '2026-12-01T10:00:00.000Z',
    lastRun: null,
  };
}
const W1 = workflow('00000000-0000-4000-8000-000000000001', 'Weekly report', true);
const W2 = workflow('00000000-0000-4000-8000-000000000002', 'Invoice check', true);
const DRAFT = workflow('00000000-0000-4000-8000-000000000003', 'Scratch', false);

function serve(opts: { role: 'user' | 'admin'; workflows: WorkflowSummary[]; access?: Partial<Access> }) {
  const stored = new Map<string, Access>();
  const accessOf = (owner: string): Access =>
    stored.get(owner) ?? {
      owner,
      enabled: true,
      permissionMode: 'ask',
      exposedWorkflows: 'all',
      updatedAt: null,
      ...(owner === 'ada' ? opts.access : {}),
    };
  const sent = stubFetch((req: SentRequest) => {
    if (req.path === '/api/me')
      return reply(200, {
        owner: { id: ME, name: 'ada', role: opts.role, createdAt: '' },
        permissions: opts.role === 'admin' ? PERMISSIONS : [...ROLE_PERMISSIONS.user],
        tokenId: '00000000-0000-4000-8000-0000000000bb',
      });
    if (req.path === '/api/workflows')
      return reply(200, { items: opts.workflows, total: opts.workflows.length, pageNum: 1, pageSize: 200 });
    if (req.path === '/api/settings/mcp') {
      const owner = req.query.get('owner') ?? 'ada';
      if (req.method === 'GET') return reply(200, accessOf(owner));
      const next = {
        ...accessOf(owner),
        ...(req.body as Partial<Access>),
        updatedAt: '2026-12-03T12:00:00.000Z',
      };
      stored.set(owner, next);
      return reply(200, next);
    }
    return undefined;
  });
  return sent;
}

function Where() {
  const l = useLocation();
  return <output data-testid="where">{`${l.pathname}${l.search}`}</output>;
}

function renderPage(path = '/settings/mcp') {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={[path]}>
          <AuthProvider>
            <Routes>
              <Route
                path="/settings/mcp"
                element={
                  <>
                    <McpAccess />
                    <Where />
                  </>
                }
              />
            </Routes>
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('a user picks the mode and the workflows; the on/off switch is the admin’s', async () => {
  const sent = serve({ role: 'user', workflows: [W1, W2, DRAFT] });
  renderPage();
  const enabled = await screen.findByRole('switch', { name: 'MCP access on' });
  expect(enabled).toHaveProperty('checked', true);
  expect(enabled).toHaveProperty('disabled', true);
  screen.getByText(/Only an admin turns MCP access on or off/);
  expect(screen.queryByLabelText('Owner')).toBeNull();
  screen.getByText('Never changed: the defaults apply.');
  const save = screen.getByRole('button', { name: 'Save' });
  expect(save).toHaveProperty('disabled', true);

  fireEvent.change(screen.getByLabelText('Permission mode of the runs MCP clients start'), {
    target: { value: 'approve-for-me' },
  });
  fireEvent.click(screen.getByLabelText('Only the ones I choose'));
  screen.getByText('None chosen: MCP clients see no workflow tools.');
  // Only published workflows are offered.
  expect(screen.queryByText('Scratch')).toBeNull();
  fireEvent.click(screen.getByRole('checkbox', { name: /Invoice check/ }));
  screen.getByText('1 of 2 chosen');
  fireEvent.click(save);
  await screen.findByText('Saved.');
  const put = sent.find((r) => r.method === 'PUT');
  expect(put?.body).toEqual({ permissionMode: 'approve-for-me', exposedWorkflows: [W2.id] });
  expect(put?.query.get('owner')).toBeNull();
  expect(screen.getByRole('button', { name: 'Save' })).toHaveProperty('disabled', true);
  screen.getByText(/Last changed/);
});

test('no published workflow: the empty state says how to get one', async () => {
  serve({ role: 'user', workflows: [DRAFT] });
  renderPage();
  await screen.findByText(/You have no published workflow yet/);
  expect(screen.getByRole('link', { name: 'Open Flows' }).getAttribute('href')).toBe('/flows');
});

test('a workflow chosen earlier and unpublished since stays listed, and can be dropped', async () => {
  const sent = serve({
    role: 'user',
    workflows: [W1],
    access: { exposedWorkflows: [W1.id, DRAFT.id] },
  });
  renderPage();
  await screen.findByText(DRAFT.id);
  screen.getByText('1 of 1 chosen');
  fireEvent.click(screen.getByRole('checkbox', { name: new RegExp(DRAFT.id) }));
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));
  await screen.findByText('Saved.');
  expect(sent.find((r) => r.method === 'PUT')?.body).toMatchObject({ exposedWorkflows: [W1.id] });
});

test("an admin turns another owner's access off by name (deep link ?owner=)", async () => {
  const sent = serve({ role: 'admin', workflows: [W1] });
  renderPage();
  fireEvent.change(await screen.findByLabelText('Owner'), { target: { value: 'bob' } });
  fireEvent.click(screen.getByRole('button', { name: 'Show' }));
  await waitFor(() => expect(screen.getByTestId('where').textContent).toBe('/settings/mcp?owner=bob'));
  await screen.findByText('bob chooses the exposed workflows: all published.');
  const enabled = screen.getByRole('switch', { name: 'MCP access on · bob' });
  expect(enabled).toHaveProperty('disabled', false);
  fireEvent.click(enabled);
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));
  await screen.findByText('Saved.');
  const put = sent.find((r) => r.method === 'PUT');
  expect(put?.query.get('owner')).toBe('bob');
  expect(put?.body).toEqual({ permissionMode: 'ask', enabled: false });
  expect(screen.getByRole('switch', { name: 'MCP access on · bob' })).toHaveProperty('checked', false);
  fireEvent.click(screen.getByRole('button', { name: 'Mine' }));
  await waitFor(() => expect(screen.getByTestId('where').textContent).toBe('/settings/mcp'));
  await screen.findByRole('switch', { name: 'MCP access on' });
});

test('shows the endpoint and client snippets for this origin', async () => {
  serve({ role: 'user', workflows: [] });
  renderPage();
  const endpoint = `${window.location.origin}/mcp`;
  expect(((await screen.findByLabelText('Endpoint (Streamable HTTP)')) as HTMLInputElement).value).toBe(
    endpoint,
  );
  const desktop = screen.getByLabelText(/Claude Desktop/);
  expect(JSON.parse(desktop.textContent ?? '')).toEqual({
    mcpServers: {
      switchyard: {
        command: 'npx',
        args: ['-y', 'mcp-remote', endpoint, '--header', 'Authorization:${AUTH_HEADER}'],
        env: { AUTH_HEADER: 'Bearer sy_…' },
      },
    },
  });
  const http = screen.getByLabelText(/Clients that speak Streamable HTTP/);
  expect(JSON.parse(http.textContent ?? '')).toEqual({
    mcpServers: { switchyard: { type: 'http', url: endpoint, headers: { Authorization: 'Bearer sy_…' } } },
  });
  within(screen.getByText('Connect a client').closest('div') as HTMLElement).getByRole('link', {
    name: /Replace sy_… with one of your API tokens/,
  });
});
