import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { PERMISSIONS, type Problem, type Workflow } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { VersionsDrawer } from './VersionsDrawer';
import { reply } from '../testing/reply';

/** The versions drawer against a mocked fetch: restore asks before replacing edits; 409s are said. */

const ID = '00000000-0000-4000-8000-0000000000f1';
const OWNER = '00000000-0000-4000-8000-000000000001';

const workflow = (over: Partial<Workflow> = {}): Workflow =>
  ({
    id: ID,
    ownerId: OWNER,
    name: 'Invoices',
    description: '',
    revision: 7,
    publishedVersion: 2,
    tool: `run_workflow_${ID}`,
    createdAt: '2026-12-01T10:00:00.000Z',
    updatedAt: '2026-12-03T10:00:00.000Z',
    inputSchema: { type: 'object', properties: {} },
    plan: { steps: [] },
    graph: null,
    lastRun: null,
    ...over,
  }) as Workflow;

const conflict: Problem = {
  type: 'https://switchyard.dev/problems/conflict',
  title: 'Conflict',
  status: 409,
  detail: 'revision 7 is stale; the current revision is 8',
  code: 'conflict',
  correlationId: 'c-1',
};

function serve(restoreStatus = 200) {
  const posts: { path: string; body: unknown }[] = [];
  globalThis.fetch = jest.fn((url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    if (url === '/api/me')
      return Promise.resolve(
        reply(200, {
          owner: { id: OWNER, name: 'ada', role: 'user', createdAt: '' },
          permissions: PERMISSIONS,
          tokenId: '00000000-0000-4000-8000-000000000002',
        }),
      );
    if (url === `/api/workflows/${ID}/versions`)
      return Promise.resolve(
        reply(200, {
          items: [2, 1].map((version) => ({
            workflowId: ID,
            version,
            name: `Invoices v${version}`,
            description: '',
            createdAt: '2026-12-02T10:00:00.000Z',
          })),
        }),
      );
    if (method === 'POST') {
      posts.push({ path: url, body });
      if (url.endsWith('/restore'))
        return Promise.resolve(
          restoreStatus === 200 ? reply(200, workflow({ revision: 8 })) : reply(409, conflict),
        );
      if (url.endsWith('/unpublish'))
        return Promise.resolve(reply(200, workflow({ revision: 8, publishedVersion: null, tool: null })));
    }
    return Promise.resolve(reply(404, { detail: `no mock for ${method} ${url}` }));
  }) as unknown as typeof fetch;
  return posts;
}

function renderDrawer(dirty: boolean) {
  const calls = { onRestored: jest.fn(), onUnpublished: jest.fn(), onClose: jest.fn() };
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <MemoryRouter>
          <AuthProvider>
            <VersionsDrawer workflow={workflow()} dirty={dirty} {...calls} />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
  return calls;
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('lists the versions newest first and marks the published one', async () => {
  serve();
  renderDrawer(false);
  const list = await screen.findByRole('list', { name: 'Versions' });
  const rows = within(list).getAllByRole('listitem');
  expect(rows.map((r) => r.getAttribute('data-version'))).toEqual(['2', '1']);
  expect(rows[0]?.textContent).toContain('published');
  expect(rows[1]?.textContent).not.toContain('published');
  expect(screen.getByText('The catalog runs version 2.')).toBeTruthy();
});

test('clean draft: restore posts the revision it is based on and hands back the new draft', async () => {
  const posts = serve();
  const calls = renderDrawer(false);
  fireEvent.click(await screen.findByRole('button', { name: 'Restore version 1 into the draft' }));
  await waitFor(() => expect(calls.onRestored).toHaveBeenCalledTimes(1));
  expect(calls.onRestored.mock.calls[0]?.[0]).toMatchObject({ revision: 8 });
  expect(posts).toEqual([{ path: `/api/workflows/${ID}/versions/1/restore`, body: { revision: 7 } }]);
});

test('unsaved edits: restore asks first; cancelling sends nothing', async () => {
  const posts = serve();
  const calls = renderDrawer(true);
  fireEvent.click(await screen.findByRole('button', { name: 'Restore version 1 into the draft' }));
  const ask = screen.getByRole('dialog', { name: 'Replace your unsaved edits?' });
  fireEvent.click(within(ask).getByRole('button', { name: 'Cancel' }));
  expect(posts).toEqual([]);
  fireEvent.click(screen.getByRole('button', { name: 'Restore version 1 into the draft' }));
  fireEvent.click(screen.getByRole('button', { name: 'Discard my edits and restore' }));
  await waitFor(() => expect(calls.onRestored).toHaveBeenCalledTimes(1));
  expect(posts).toHaveLength(1);
});

test('a 409 on restore shows the server’s sentence and changes nothing', async () => {
  serve(409);
  const calls = renderDrawer(false);
  fireEvent.click(await screen.findByRole('button', { name: 'Restore version 2 into the draft' }));
  expect(await screen.findByText('revision 7 is stale; the current revision is 8')).toBeTruthy();
  expect(calls.onRestored).not.toHaveBeenCalled();
});

test('unpublish asks, then posts the revision', async () => {
  const posts = serve();
  const calls = renderDrawer(false);
  await screen.findByRole('list', { name: 'Versions' });
  fireEvent.click(screen.getByRole('button', { name: 'Unpublish' }));
  const ask = screen.getByRole('dialog', { name: 'Unpublish this flow?' });
  expect(posts).toEqual([]);
  fireEvent.click(within(ask).getByRole('button', { name: 'Unpublish' }));
  await waitFor(() => expect(calls.onUnpublished).toHaveBeenCalledTimes(1));
  expect(posts).toEqual([{ path: `/api/workflows/${ID}/unpublish`, body: { revision: 7 } }]);
  expect(calls.onRestored).not.toHaveBeenCalled();
});
