import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { MCP_OAUTH_MESSAGE, PERMISSIONS, type McpToolRecord } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { reply, stubFetch, type SentRequest } from '../testing/reply';
import { Records } from './Records';

/**
 * Connect on the records page against a fake server and a fake popup: the popup opened inside the
 * click and sent to the provider, the callback page's message (only from our own origin), a popup
 * closed early, a blocked popup, a refusal, Reconnect with its reason, client credentials at once.
 * The real popup, provider and callback are the browser test (apps/web/e2e/mcp-oauth.e2e-spec.ts).
 */

const AUTH_URL = 'https://auth.example/authorize?client_id=dyn-1&state=s1';

function record(over: Partial<McpToolRecord> = {}): McpToolRecord {
  return {
    id: 7,
    name: 'github',
    description: '',
    type: 'REMOTE',
    status: 'ENABLED',
    effect: null,
    idempotent: null,
    hasConfig: true,
    tested: false,
    changed: false,
    disabledUntil: null,
    oauth: {
      grant: 'authorization_code',
      state: 'not_connected',
      reason: null,
      connectedAt: null,
      connectedBy: null,
    },
    sampling: { enabled: false, maxTokens: 1024, dailyTokens: 100000 },
    createdAt: '2026-12-03T10:00:00.000Z',
    updatedAt: '2026-12-03T10:00:00.000Z',
    ...over,
  };
}

const CONNECTED: McpToolRecord['oauth'] = {
  grant: 'authorization_code',
  state: 'connected',
  reason: null,
  connectedAt: '2026-12-03T11:00:00.000Z',
  connectedBy: '00000000-0000-4000-8000-0000000000aa',
  connectedByName: 'root',
};

function serve(state: { record: McpToolRecord; connect: () => unknown }) {
  return stubFetch((req: SentRequest) => {
    if (req.path === '/api/me')
      return reply(200, {
        owner: { id: '00000000-0000-4000-8000-0000000000aa', name: 'root', role: 'admin', createdAt: '' },
        permissions: PERMISSIONS,
        tokenId: '00000000-0000-4000-8000-0000000000bb',
      });
    if (req.path === '/mcp/tool/list')
      return reply(200, { items: [state.record], total: 1, pageNum: 1, pageSize: 20 });
    if (req.path === `/mcp/tool/${state.record.id}` && req.method === 'GET') return reply(200, state.record);
    if (req.path === `/mcp/tool/${state.record.id}/connect`) return state.connect();
    if (req.path === `/mcp/tool/${state.record.id}/test`)
      return reply(200, { success: true, message: 'ok', toolCount: 2, tools: ['whoami', 'admin_action'] });
    return undefined;
  });
}

interface FakePopup {
  closed: boolean;
  close: () => void;
  location: { href: string };
  document: { title: string; body: { textContent: string } };
}

function stubPopup(blocked = false): { opened: Array<{ url: string; features: string }>; popup: FakePopup } {
  const popup: FakePopup = {
    closed: false,
    close() {
      this.closed = true;
    },
    location: { href: '' },
    document: { title: '', body: { textContent: '' } },
  };
  const opened: Array<{ url: string; features: string }> = [];
  window.open = ((url: string, _name: string, features: string) => {
    opened.push({ url, features });
    return blocked ? null : popup;
  }) as unknown as typeof window.open;
  return { opened, popup };
}

function renderPage() {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={['/tools']}>
          <AuthProvider>
            <Records />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

function post(data: unknown, origin = window.location.origin) {
  act(() => {
    window.dispatchEvent(new MessageEvent('message', { data, origin }));
  });
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('Connect opens the popup in the click, sends it to the provider, and the callback message shows Connected', async () => {
  const state = { record: record(), connect: () => reply(200, { authorizationUrl: AUTH_URL }) };
  const sent = serve(state);
  const { opened, popup } = stubPopup();
  renderPage();
  const row = (await screen.findByText('github')).closest('tr') as HTMLElement;
  within(row).getByText('Not connected');
  fireEvent.click(within(row).getByRole('button', { name: 'Connect github' }));
  // Opened at once (blank, sized), before the server answered.
  expect(opened).toHaveLength(1);
  expect(opened[0]?.url).toBe('about:blank');
  expect(opened[0]?.features).toMatch(/popup=yes,width=520,height=700/);
  expect(popup.document.body.textContent).toBe('Preparing the sign-in page…');
  await waitFor(() => expect(popup.location.href).toBe(AUTH_URL));
  const status = await screen.findByTestId('connect-status');
  within(status).getByText(/Waiting for the sign-in window/);
  expect(document.activeElement).toBe(within(status).getByRole('button', { name: 'Cancel' }));
  expect(within(row).getByRole('button', { name: 'Connect github' })).toHaveProperty('disabled', true);

  // A message from another origin, or not ours, changes nothing.
  post({ type: MCP_OAUTH_MESSAGE, ok: true, id: 7, name: 'github' }, 'https://evil.example');
  post({ type: 'other', ok: true });
  within(status).getByText(/Waiting for the sign-in window/);

  state.record = record({ oauth: CONNECTED });
  const listsBefore = sent.filter((r) => r.path === '/mcp/tool/list').length;
  post({ type: MCP_OAUTH_MESSAGE, ok: true, id: 7, name: 'github' });
  await screen.findByText('github is connected. Test it so its tools join the catalog.');
  await waitFor(() =>
    expect(sent.filter((r) => r.path === '/mcp/tool/list').length).toBeGreaterThan(listsBefore),
  );
  await within(row).findByText('by root · 03/12/2026, 11:00:00', { exact: false });
  expect(within(row).queryByRole('button', { name: 'Connect github' })).toBeNull();
  expect(popup.closed).toBe(true);
  fireEvent.click(screen.getByRole('button', { name: 'Test now' }));
  await screen.findByText('Connected: 2 tools');
  expect(sent.some((r) => r.path === '/mcp/tool/7/test' && r.method === 'POST')).toBe(true);
});

test('a popup closed before the callback: the record is read again, and nothing changed says so', async () => {
  serve({ record: record(), connect: () => reply(200, { authorizationUrl: AUTH_URL }) });
  const { popup } = stubPopup();
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: 'Connect github' }));
  await waitFor(() => expect(popup.location.href).toBe(AUTH_URL));
  popup.closed = true;
  await screen.findByText(/The sign-in window was closed before signing in finished/, undefined, {
    timeout: 5_000,
  });
  expect(screen.getByRole('button', { name: 'Connect github' })).toHaveProperty('disabled', false);
});

test('a popup closed without a message while the grant did arrive: Connected after all', async () => {
  const state = { record: record(), connect: () => reply(200, { authorizationUrl: AUTH_URL }) };
  serve(state);
  const { popup } = stubPopup();
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: 'Connect github' }));
  await waitFor(() => expect(popup.location.href).toBe(AUTH_URL));
  state.record = record({ oauth: CONNECTED });
  popup.closed = true;
  await screen.findByText('github is connected. Test it so its tools join the catalog.', undefined, {
    timeout: 5_000,
  });
});

test('a blocked popup offers the sign-in page as a link for a new tab; Cancel ends the wait', async () => {
  serve({ record: record(), connect: () => reply(200, { authorizationUrl: AUTH_URL }) });
  stubPopup(true);
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: 'Connect github' }));
  const link = await screen.findByRole('link', { name: 'Open the sign-in page in a new tab' });
  expect(link.getAttribute('href')).toBe(AUTH_URL);
  expect(link.getAttribute('target')).toBe('_blank');
  expect(link.getAttribute('rel')).toBe('noopener noreferrer');
  screen.getByText('Your browser blocked the sign-in window.');
  fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
  await screen.findByText(/The sign-in window was closed before signing in finished/);
});

test('a refusal from the callback shows its code and sentence', async () => {
  serve({ record: record(), connect: () => reply(200, { authorizationUrl: AUTH_URL }) });
  const { popup } = stubPopup();
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: 'Connect github' }));
  await waitFor(() => expect(popup.location.href).toBe(AUTH_URL));
  post({
    type: MCP_OAUTH_MESSAGE,
    ok: false,
    code: 'forbidden',
    detail: 'the provider did not grant access to github: access_denied <b>x</b>',
  });
  const note = await screen.findByRole('alert');
  within(note).getByText('Connect did not finish');
  within(note).getByText('forbidden');
  // Text, not markup.
  within(note).getByText('the provider did not grant access to github: access_denied <b>x</b>');
  expect(note.querySelector('b')).toBeNull();
});

test('Reconnect names the reason and the tools held out; a refused Connect closes the popup', async () => {
  serve({
    record: record({
      tested: true,
      oauth: {
        ...CONNECTED,
        state: 'reconnect',
        reason: 'the provider refused the refresh (invalid_grant): Reconnect',
      },
    }),
    connect: () =>
      reply(502, {
        type: 'about:blank',
        title: 'Tool failed',
        status: 502,
        detail: 'signing github in failed: fetch failed',
        code: 'tool_failed',
        correlationId: 'c1',
      }),
  });
  const { popup } = stubPopup();
  renderPage();
  const row = (await screen.findByText('github')).closest('tr') as HTMLElement;
  within(row).getByText('Reconnect needed');
  within(row).getByText('the provider refused the refresh (invalid_grant): Reconnect');
  within(row).getByText('Its tools are held out of the catalog until you reconnect.');
  fireEvent.click(within(row).getByRole('button', { name: 'Reconnect github' }));
  await screen.findByText('signing github in failed: fetch failed');
  expect(popup.closed).toBe(true);
});

test('client credentials connect at once: no popup, the list refreshes', async () => {
  const state = {
    record: record({ oauth: { ...CONNECTED, grant: 'client_credentials', state: 'not_connected' } }),
    connect: () => {
      state.record = record({ oauth: { ...CONNECTED, grant: 'client_credentials' } });
      return reply(200, { connected: true });
    },
  };
  serve(state);
  const { opened } = stubPopup();
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: 'Connect github' }));
  await screen.findByText('github is connected. Test it so its tools join the catalog.');
  expect(opened).toHaveLength(0);
  await screen.findByText('Connected');
});
