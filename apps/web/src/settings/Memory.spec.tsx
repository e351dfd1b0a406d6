import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { PERMISSIONS, type Memory as MemoryItem } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { Memory } from './Memory';
import { reply } from '../testing/reply';

/**
 * The memory settings page against a mocked fetch: the switch sends the setting and shows what the
 * server kept, the list pages by cursor and searches by text, a delete asks first and then goes out
 * once. The real-server path is the e2e suite (test/e2e/memory.e2e-spec.ts).
 */

interface Sent {
  method: string;
  url: string;
  body: unknown;
}

const fact = (n: number): MemoryItem => ({
  id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  text: `fact number ${n}`,
  createdAt: '2026-12-01T10:00:00.000Z',
  lastUsedAt: n === 1 ? '2026-12-02T10:00:00.000Z' : null,
});

/** A fake server holding `facts`; GET /api/memories pages them two at a time by an index cursor. */
function serve(
  initial: { enabled: boolean; facts: MemoryItem[] },
  permissions: readonly string[] = PERMISSIONS,
) {
  const sent: Sent[] = [];
  let enabled = initial.enabled;
  let facts = [...initial.facts];
  const fetchMock = jest.fn((input: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method, url: input, body });
    const url = new URL(input, 'http://localhost');
    const path = url.pathname;
    if (path === '/api/me')
      return Promise.resolve(
        reply(200, {
          owner: { id: '00000000-0000-4000-8000-0000000000aa', name: 'ada', role: 'user', createdAt: '' },
          permissions,
          tokenId: '00000000-0000-4000-8000-0000000000bb',
        }),
      );
    if (path === '/api/settings/memory' && method === 'GET') return Promise.resolve(reply(200, { enabled }));
    if (path === '/api/settings/memory' && method === 'PUT') {
      enabled = (body as { enabled: boolean }).enabled;
      return Promise.resolve(reply(200, { enabled }));
    }
    if (path === '/api/memories' && method === 'GET') {
      const q = url.searchParams.get('q');
      const matching = facts.filter((f) => !q || f.text.includes(q));
      const from = Number(url.searchParams.get('cursor') ?? '0');
      const items = matching.slice(from, from + 2);
      const next = from + 2 < matching.length ? String(from + 2) : null;
      return Promise.resolve(reply(200, { items, nextCursor: next, total: matching.length }));
    }
    const del = /^\/api\/memories\/(.+)$/.exec(path);
    if (del && method === 'DELETE') {
      const gone = facts.find((f) => f.id === del[1]);
      facts = facts.filter((f) => f.id !== del[1]);
      return Promise.resolve(gone ? reply(200, gone) : reply(404, { code: 'not_found', detail: 'gone' }));
    }
    return Promise.resolve(reply(404, { detail: `no mock for ${method} ${path}` }));
  });
  globalThis.fetch = fetchMock as unknown as typeof fetch;
  return {
    sent,
    of: (method: string, prefix: string) =>
      sent.filter((s) => s.method === method && s.url.startsWith(prefix)),
  };
}

function renderPage(lang: 'en' | 'zh' = 'en') {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang={lang}>
        <MemoryRouter initialEntries={['/settings/memory']}>
          <AuthProvider>
            <Memory />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('off by default: the switch says what memory does, the empty state says how to start, and turning it on saves it', async () => {
  const server = serve({ enabled: false, facts: [] });
  renderPage();
  const toggle = await screen.findByRole('switch', { name: 'Memory (experimental)' });
  await waitFor(() => expect((toggle as HTMLInputElement).disabled).toBe(false));
  expect((toggle as HTMLInputElement).checked).toBe(false);
  expect(screen.getByText(/halves every 7 days/)).toBeTruthy();
  expect(await screen.findByText(/Turn memory on above/)).toBeTruthy();

  fireEvent.click(toggle);
  // On from the click, before the server answers.
  expect((toggle as HTMLInputElement).checked).toBe(true);
  await waitFor(() => expect(server.of('PUT', '/api/settings/memory')).toHaveLength(1));
  expect(server.of('PUT', '/api/settings/memory')[0]?.body).toEqual({ enabled: true });
  await waitFor(() => expect((toggle as HTMLInputElement).disabled).toBe(false));
  expect((toggle as HTMLInputElement).checked).toBe(true);
});

test('a refused change puts the switch back and says why', async () => {
  serve({ enabled: false, facts: [] });
  const fetchOk = globalThis.fetch;
  globalThis.fetch = ((input: string, init?: RequestInit) =>
    init?.method === 'PUT'
      ? Promise.resolve(reply(403, { code: 'forbidden', detail: 'memory is managed by your admin' }))
      : fetchOk(input, init)) as typeof fetch;
  renderPage();
  const toggle = (await screen.findByRole('switch', { name: 'Memory (experimental)' })) as HTMLInputElement;
  await waitFor(() => expect(toggle.disabled).toBe(false));
  fireEvent.click(toggle);
  expect(toggle.checked).toBe(true);
  expect(await screen.findByText(/memory is managed by your admin/)).toBeTruthy();
  await waitFor(() => expect(toggle.checked).toBe(false));
});

test('lists memories newest first by page, searches by text, and deletes one only after confirming', async () => {
  const server = serve({ enabled: true, facts: [fact(1), fact(2), fact(3)] });
  renderPage();
  const table = await screen.findByRole('table', { name: 'Memories' });
  expect(within(table).getAllByRole('row')).toHaveLength(3); // header + 2
  expect(screen.getByText('3 memories kept (at most 1,000)')).toBeTruthy();
  fireEvent.click(screen.getByRole('button', { name: 'Load more' }));
  expect(await screen.findByText('fact number 3')).toBeTruthy();
  expect(server.of('GET', '/api/memories').at(-1)?.url).toBe('/api/memories?limit=50&cursor=2');

  // Delete asks first: cancelling sends nothing.
  fireEvent.click(screen.getByRole('button', { name: 'Delete memory “fact number 2”' }));
  const dialog = await screen.findByRole('dialog');
  expect(within(dialog).getByText(/The agent will no longer know: “fact number 2”/)).toBeTruthy();
  fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
  expect(server.of('DELETE', '/api/memories/')).toHaveLength(0);

  fireEvent.click(screen.getByRole('button', { name: 'Delete memory “fact number 2”' }));
  fireEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Delete' }));
  await waitFor(() => expect(screen.queryByText('fact number 2')).toBeNull());
  expect(server.of('DELETE', '/api/memories/').map((s) => s.url)).toEqual([`/api/memories/${fact(2).id}`]);

  fireEvent.change(screen.getByRole('searchbox', { name: 'Search memories' }), {
    target: { value: 'number 3' },
  });
  fireEvent.click(screen.getByRole('button', { name: 'Search' }));
  expect(await screen.findByText('fact number 3')).toBeTruthy();
  expect(screen.queryByText('fact number 1')).toBeNull();
  expect(server.of('GET', '/api/memories').at(-1)?.url).toBe('/api/memories?limit=50&q=number+3');

  fireEvent.change(screen.getByRole('searchbox', { name: 'Search memories' }), { target: { value: 'nope' } });
  fireEvent.click(screen.getByRole('button', { name: 'Search' }));
  expect(await screen.findByText('No memory contains this text.')).toBeTruthy();
});

test('without the edit permission the switch is read-only and nothing can be deleted; the page speaks Chinese', async () => {
  serve(
    { enabled: true, facts: [fact(1)] },
    PERMISSIONS.filter((p) => p !== 'settings:memory:edit'),
  );
  renderPage('zh');
  const toggle = await screen.findByRole('switch', { name: '记忆（实验性）' });
  await screen.findByText('fact number 1');
  expect((toggle as HTMLInputElement).disabled).toBe(true);
  expect(screen.queryByRole('button', { name: /删除/ })).toBeNull();
  expect(screen.getByText(/每过 7 天权重减半/)).toBeTruthy();
});
