import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { PERMISSIONS, type PermissionSettings, type Problem } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { RulesEditor } from './RulesEditor';
import { reply } from '../testing/reply';

/**
 * The rules editor against a mocked fetch (the unit-level boundary): what the server says about each
 * line reaches that line, and a save sends the lists once. The real-server path is the browser test.
 */

interface Sent {
  method: string;
  url: string;
  body: unknown;
}

const stored: PermissionSettings = {
  scope: 'owner',
  allow: ['Effect(read)'],
  ask: [],
  deny: ['Command(rm:*)'],
  updatedAt: '2026-12-01T10:00:00.000Z',
  global: { allow: [], ask: [], deny: [] },
};

function problem(errors: Problem['errors']): Problem {
  return {
    type: 'https://switchyard.dev/problems/validation_failed',
    title: 'Bad Request',
    status: 400,
    detail:
      '2 bad rules; nothing was saved: allow line 2: unknown matcher Nope(x); deny line 1: empty parentheses',
    code: 'validation_failed',
    correlationId: 'c-1',
    errors,
  };
}

/** A fake server: GET answers the stored rules; PUT answers `onPut(body)`. Every call is recorded. */
function serve(onPut: (body: unknown) => { status: number; body: unknown }) {
  const sent: Sent[] = [];
  const fetchMock = jest.fn((input: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method, url: input, body });
    const path = input.split('?')[0];
    if (path === '/api/me')
      return Promise.resolve(
        reply(200, {
          owner: { id: '00000000-0000-4000-8000-000000000001', name: 'ada', role: 'user', createdAt: '' },
          permissions: PERMISSIONS.filter((p) => !p.startsWith('mcp:tool:') || p === 'mcp:tool:list'),
          tokenId: '00000000-0000-4000-8000-000000000002',
        }),
      );
    if (path === '/api/settings/permissions' && method === 'GET') return Promise.resolve(reply(200, stored));
    if (path === '/api/settings/permissions' && method === 'PUT') {
      const r = onPut(body);
      return Promise.resolve(
        reply(r.status, r.body, r.status >= 400 ? 'application/problem+json' : 'application/json'),
      );
    }
    if (path === '/api/agent/tools') return Promise.resolve(reply(200, []));
    return Promise.resolve(reply(404, { detail: `no mock for ${method} ${path}` }));
  });
  globalThis.fetch = fetchMock as unknown as typeof fetch;
  return { sent, puts: () => sent.filter((s) => s.method === 'PUT') };
}

function renderEditor() {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang="en">
        <MemoryRouter initialEntries={['/settings/rules']}>
          <AuthProvider>
            <RulesEditor />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('a 400 marks each bad line with the server’s reason and nothing claims to be saved', async () => {
  const server = serve(() => ({
    status: 400,
    body: problem([
      { path: 'allow.1', message: 'line 2: unknown matcher Nope(x)' },
      { path: 'deny.0', message: 'line 1: empty parentheses' },
    ]),
  }));
  renderEditor();
  const allow = await screen.findByLabelText(/^Allow/);
  expect((allow as HTMLTextAreaElement).value).toBe('Effect(read)');
  fireEvent.change(allow, { target: { value: 'Effect(read)\nNope(x)\nTool(excel_*)' } });
  fireEvent.change(screen.getByLabelText(/^Deny/), { target: { value: 'Command()' } });
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));

  const line2 = await screen.findByTestId('allow-line-2');
  expect(line2.textContent).toContain('unknown matcher Nope(x)');
  expect(line2.textContent).toContain('Nope(x)');
  expect(line2.getAttribute('data-line')).toBe('2');
  expect(screen.getByTestId('deny-line-1').textContent).toContain('empty parentheses');
  // The gutter marks exactly the refused lines: line 2 of allow, line 1 of deny.
  const allowBox = allow.closest('.rule-list') as HTMLElement;
  const marked = [...allowBox.querySelectorAll('.gutter li.bad')].map((li) => li.textContent);
  expect(marked).toEqual(['2']);
  expect(allow.getAttribute('aria-invalid')).toBe('true');
  expect(screen.queryByTestId('allow-line-1')).toBeNull();
  // The server's sentence and code are shown; no success message.
  expect(screen.getByText('validation_failed')).toBeTruthy();
  expect(screen.queryByText('Rules saved.')).toBeNull();
  // One PUT carried the lines as typed, so its line numbers are the text area's.
  expect(server.puts()).toHaveLength(1);
  expect(server.puts()[0]?.body).toEqual({
    allow: ['Effect(read)', 'Nope(x)', 'Tool(excel_*)'],
    ask: [],
    deny: ['Command()'],
  });
});

test('a valid save sends the lists once and says so', async () => {
  const server = serve((body) => ({
    status: 200,
    body: { ...stored, ...(body as object), updatedAt: '2026-12-03T09:00:00.000Z' },
  }));
  renderEditor();
  const ask = await screen.findByLabelText(/^Ask/);
  fireEvent.change(ask, { target: { value: 'Tool(write_*)\n\n' } });
  fireEvent.click(screen.getByRole('button', { name: 'Save' }));

  expect(await screen.findByText('Rules saved.')).toBeTruthy();
  await waitFor(() => expect(server.puts()).toHaveLength(1));
  expect(server.puts()[0]?.url).toBe('/api/settings/permissions?scope=owner');
  expect(server.puts()[0]?.body).toEqual({
    allow: ['Effect(read)'],
    ask: ['Tool(write_*)'],
    deny: ['Command(rm:*)'],
  });
  expect(document.querySelectorAll('.gutter li.bad')).toHaveLength(0);
  expect(screen.queryByRole('alert')).toBeNull();
});
