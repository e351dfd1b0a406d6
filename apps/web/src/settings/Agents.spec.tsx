import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import type { Agent } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { Agents } from './Agents';
import { meReply, reply, stubFetch } from '../testing/reply';

/**
 * The agents page's plugin choice against a stubbed server: plugins are read from the caller's
 * catalog (any user may read it), a chosen plugin is saved by id, and a plugin the agent names that is
 * no longer in the catalog stays listed and says why it gives nothing. The real path (a plugin's tools
 * in the agent's tool set) is test/e2e/plugins.e2e-spec.ts.
 */

const agent: Agent = {
  id: 7,
  name: 'clerk',
  description: '',
  systemPrompt: '',
  modelSettings: {},
  mcpToolIds: [],
  pluginIds: ['old-pack'],
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
};

const tool = (name: string, plugin?: string) => ({
  name,
  description: name,
  inputSchema: { type: 'object' },
  effect: 'read',
  idempotent: true,
  source: plugin ? 'plugin' : 'builtin',
  ...(plugin ? { plugin } : {}),
});

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('lists the catalog’s plugins, saves the chosen ones by id, and keeps one that is gone', async () => {
  const sent = stubFetch((req) => {
    if (req.path === '/api/me') return meReply('00000000-0000-4000-8000-0000000000aa');
    if (req.path === '/api/agents' && req.method === 'GET')
      return reply(200, { items: [agent], total: 1, pageNum: 1, pageSize: 20 });
    if (req.path === '/mcp/tool/options') return reply(200, { items: [] });
    if (req.path === '/api/agent/tools')
      return reply(200, [tool('read_file'), tool('excel_execute', 'office'), tool('confirm_send', 'office')]);
    if (req.path === '/api/agents/7' && req.method === 'PUT')
      return reply(200, { ...agent, ...(req.body as object) });
    return undefined;
  });
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={['/settings/agents']}>
          <AuthProvider>
            <Agents />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
  const row = await screen.findByText('clerk');
  expect(within(row.closest('tr') as HTMLElement).getByText('1 plugins')).toBeTruthy();
  fireEvent.click(within(row.closest('tr') as HTMLElement).getByRole('button', { name: 'Edit' }));
  const office = await screen.findByRole('checkbox', { name: /office/ });
  expect((office as HTMLInputElement).checked).toBe(false);
  expect(screen.getByText('2 tools')).toBeTruthy();
  const gone = screen.getByRole('checkbox', { name: /old-pack/ });
  expect((gone as HTMLInputElement).checked).toBe(true);
  expect(screen.getByText(/disabled or not answering/)).toBeTruthy();

  fireEvent.click(office);
  fireEvent.click(gone);
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));
  await waitFor(() => expect(sent.filter((r) => r.method === 'PUT')).toHaveLength(1));
  expect(sent.find((r) => r.method === 'PUT')?.body).toMatchObject({ pluginIds: ['office'] });
});
