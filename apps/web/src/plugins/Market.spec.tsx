import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { PERMISSIONS, type MarketEntry, type MarketSource } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { reply, stubFetch, type SentRequest } from '../testing/reply';
import { Market } from './Market';

/**
 * The Market tab against a fake server: no source says what to do, a source is added, entries are
 * searched with malformed ones reported by path, one is inspected and imported with a declared
 * header, a clash is shown. The real-server path is the browser test and test/e2e/market.e2e-spec.ts.
 */

const problem = (status: number, code: string, detail: string) =>
  reply(status, { type: 'about:blank', title: code, status, detail, code, correlationId: 'c1' });

const SOURCE: MarketSource = {
  id: '00000000-0000-4000-8000-000000000010',
  name: 'ours',
  url: null,
  path: 'servers.json',
  createdAt: '2026-12-03T10:00:00.000Z',
};
const WEATHER: MarketEntry = {
  source: 'ours',
  name: 'io.github.acme/weather',
  title: 'Weather',
  description: 'Forecasts',
  version: '1.2.0',
  kinds: ['REMOTE'],
};
const NOTES: MarketEntry = {
  source: 'ours',
  name: 'io.github.acme/notes',
  title: null,
  description: 'Notes',
  version: '0.1.0',
  kinds: ['LOCAL'],
};

function serve(opts: { sources: MarketSource[]; importAnswer?: () => unknown }) {
  let sources = [...opts.sources];
  return stubFetch((req: SentRequest) => {
    if (req.path === '/api/me')
      return reply(200, {
        owner: { id: '00000000-0000-4000-8000-0000000000aa', name: 'root', role: 'admin', createdAt: '' },
        permissions: PERMISSIONS,
        tokenId: '00000000-0000-4000-8000-0000000000bb',
      });
    if (req.path === '/api/market/sources' && req.method === 'GET') return reply(200, { items: sources });
    if (req.path === '/api/market/sources' && req.method === 'POST') {
      const made = { ...SOURCE, ...(req.body as object), path: null };
      sources = [...sources, made as MarketSource];
      return reply(201, made);
    }
    if (req.path === '/api/market/entries') {
      const q = req.query.get('q') ?? '';
      const items = [WEATHER, NOTES].filter((e) => e.name.includes(q) || e.description.includes(q));
      return reply(200, {
        items,
        problems: [{ source: 'ours', path: 'servers[2].server.version', message: 'Invalid input' }],
      });
    }
    if (req.path === `/api/market/entries/ours/${encodeURIComponent(WEATHER.name)}`)
      return reply(200, {
        ...WEATHER,
        server: {
          name: WEATHER.name,
          version: '1.2.0',
          description: 'Forecasts',
          remotes: [
            {
              type: 'streamable-http',
              url: 'https://weather.example.com/mcp',
              headers: [{ name: 'X-Api-Key', isRequired: true, isSecret: true, description: 'your key' }],
            },
          ],
        },
      });
    if (req.path === '/api/market/import')
      return (
        opts.importAnswer?.() ??
        reply(201, {
          record: { id: 7, name: (req.body as { as: { name: string } }).as.name },
          kind: 'REMOTE',
          config: { baseUrl: 'https://weather.example.com/mcp', headers: { 'X-Api-Key': '***' } },
        })
      );
    return undefined;
  });
}

function renderPage(lang: 'en' | 'zh' = 'en') {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang={lang}>
        <MemoryRouter initialEntries={['/plugins/market']}>
          <AuthProvider>
            <Market />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('no source: says how to configure one; adding a URL source sends it and lists its entries', async () => {
  const sent = serve({ sources: [] });
  renderPage();
  expect(await screen.findByText(/No market source is configured/)).toBeTruthy();
  expect(sent.some((r) => r.path === '/api/market/entries')).toBe(false);
  fireEvent.change(screen.getByLabelText('Name'), { target: { value: 'official' } });
  fireEvent.change(screen.getByLabelText('URL'), {
    target: { value: 'https://registry.example.com/v0/servers' },
  });
  fireEvent.click(screen.getByRole('button', { name: 'Add source' }));
  await waitFor(() =>
    expect(sent.find((r) => r.method === 'POST' && r.path === '/api/market/sources')?.body).toEqual({
      name: 'official',
      url: 'https://registry.example.com/v0/servers',
    }),
  );
  expect(await screen.findByRole('table', { name: 'Entries' })).toBeTruthy();
});

test('lists entries with what they import as, reports a malformed one by path, and searches', async () => {
  const sent = serve({ sources: [SOURCE] });
  renderPage();
  const table = await screen.findByRole('table', { name: 'Entries' });
  expect(within(table).getByText('Weather')).toBeTruthy();
  expect(within(table).getByText('REMOTE')).toBeTruthy();
  expect(within(table).getByText('LOCAL')).toBeTruthy();
  expect(screen.getByText('Entries or sources that could not be read: 1')).toBeTruthy();
  expect(screen.getByText('servers[2].server.version')).toBeTruthy();
  fireEvent.change(screen.getByLabelText('Search name, title or description'), {
    target: { value: 'notes' },
  });
  await waitFor(() =>
    expect(sent.some((r) => r.path === '/api/market/entries' && r.query.get('q') === 'notes')).toBe(true),
  );
  await waitFor(() => expect(within(table).queryByText('Weather')).toBeNull());
});

test('inspects an entry and imports it as REMOTE with its declared header; the record is said to be untested', async () => {
  const sent = serve({ sources: [SOURCE] });
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: `Inspect ${WEATHER.name}` }));
  const dialog = await screen.findByRole('dialog');
  expect(await within(dialog).findByText('https://weather.example.com/mcp')).toBeTruthy();
  expect((within(dialog).getByLabelText('Record name') as HTMLInputElement).value).toBe('weather');
  const key = within(dialog).getByLabelText('X-Api-Key') as HTMLInputElement;
  expect(key.type).toBe('password');
  fireEvent.change(key, { target: { value: 'k-123' } });
  fireEvent.click(within(dialog).getByRole('button', { name: 'Import as REMOTE' }));
  expect(await within(dialog).findByText('Imported as weather (REMOTE).')).toBeTruthy();
  expect(within(dialog).getByText(/It is untested/)).toBeTruthy();
  expect(sent.find((r) => r.path === '/api/market/import')?.body).toEqual({
    source: 'ours',
    name: WEATHER.name,
    as: { name: 'weather', kind: 'REMOTE', headers: { 'X-Api-Key': 'k-123' } },
  });
});

test('an import refused (the record name exists) keeps the form and says why', async () => {
  serve({
    sources: [SOURCE],
    importAnswer: () => problem(409, 'conflict', 'a tool record named weather already exists'),
  });
  renderPage();
  fireEvent.click(await screen.findByRole('button', { name: `Inspect ${WEATHER.name}` }));
  const dialog = await screen.findByRole('dialog');
  await within(dialog).findByText('https://weather.example.com/mcp');
  fireEvent.click(within(dialog).getByRole('button', { name: 'Import as REMOTE' }));
  expect(await within(dialog).findByText('a tool record named weather already exists')).toBeTruthy();
  expect(within(dialog).getByText('Nothing was imported')).toBeTruthy();
  expect(within(dialog).getByRole('button', { name: 'Import as REMOTE' })).toBeTruthy();
});

test('in Chinese, with no source', async () => {
  serve({ sources: [] });
  renderPage('zh');
  expect(await screen.findByText(/尚未配置市场来源/)).toBeTruthy();
});
