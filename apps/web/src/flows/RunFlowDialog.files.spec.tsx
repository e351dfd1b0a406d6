import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { RunFlowDialog } from './RunFlowDialog';
import { reply, stubFetch, type SentRequest } from '../testing/reply';

/** The run dialog's file picker, automatic folder and live dropdown, against a stubbed server. */

const FLOW = '00000000-0000-4000-8000-0000000000f2';
const FILE = '00000000-0000-4000-8000-0000000000aa';

const schema = {
  type: 'object',
  required: ['book', 'out', 'account'],
  properties: {
    book: { type: 'string', format: 'switchyard-file', title: 'Workbook' },
    out: { type: 'string', 'x-switchyard-auto': 'shared-directory', title: 'Output folder' },
    account: { type: 'string', title: 'Account', 'x-switchyard-enum': { tool: 'email_accounts_list' } },
  },
};

function renderDialog() {
  const onStarted = jest.fn();
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <RunFlowDialog
          workflow={{ id: FLOW, inputSchema: schema, name: 'Split' }}
          onStarted={onStarted}
          onClose={jest.fn()}
        />
      </I18nProvider>
    </QueryClientProvider>,
  );
  return { onStarted };
}

const start = () => screen.getByRole('button', { name: 'Start' });

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('uploads the picked file, fills the dropdown from its list tool, and starts with the grant', async () => {
  let uploadBody: unknown;
  const sent: SentRequest[] = stubFetch((req) => {
    if (req.path === `/api/workflows/${FLOW}/inputs/account/options`)
      return reply(200, {
        items: [
          { value: 'a1', label: 'alice@example.com' },
          { value: 'a2', label: 'bob@example.com' },
        ],
      });
    if (req.path === '/api/files' && req.method === 'POST')
      return reply(201, {
        id: FILE,
        name: req.query.get('name'),
        contentType: 'text/csv',
        size: 3,
        sha256: 'a'.repeat(64),
        createdAt: '',
      });
    if (req.path === `/api/workflows/${FLOW}/run`) return reply(200, { runId: 'run-7' });
    return undefined;
  });
  const realFetch = globalThis.fetch;
  globalThis.fetch = ((url: string, init?: RequestInit) => {
    if (url.startsWith('/api/files')) uploadBody = init?.body;
    return realFetch(url, init);
  }) as typeof fetch;
  const { onStarted } = renderDialog();

  // The folder is made by the run: a note, no control.
  expect(screen.getByTestId('auto-out').textContent).toMatch(/fresh folder/);
  expect(screen.queryByLabelText('Output folder')).toBeNull();
  expect(screen.getByTestId('missing-inputs').textContent).toBe('Fill in before starting: Workbook, Account');

  // Choices load from the list tool.
  const account = (await screen.findByRole('option', { name: 'bob@example.com' })).closest(
    'select',
  ) as HTMLSelectElement;
  fireEvent.change(account, { target: { value: JSON.stringify('a2') } });

  const picked = new File(['a,b'], 'q3.csv', { type: 'text/csv' });
  fireEvent.change(screen.getByLabelText('Workbook'), { target: { files: [picked] } });
  expect((await screen.findByTestId('uploaded-file')).textContent).toBe('Uploaded q3.csv (3 bytes)');
  expect(uploadBody).toBe(picked);
  const upload = sent.find((r) => r.path === '/api/files');
  expect(upload?.query.get('name')).toBe('q3.csv');

  expect(start().hasAttribute('disabled')).toBe(false);
  fireEvent.click(start());
  await waitFor(() => expect(onStarted).toHaveBeenCalledWith('run-7'));
  expect(sent.find((r) => r.path === `/api/workflows/${FLOW}/run`)?.body).toEqual({
    inputs: { book: '@file:book', out: '@file:out', account: 'a2' },
    files: [{ name: 'book', refs: [FILE] }],
    permissionMode: 'ask',
    planApproval: false,
  });
});

test('an empty list says so, and a failed list says why and offers a retry', async () => {
  let fail = true;
  stubFetch((req) => {
    if (req.path.endsWith('/inputs/account/options'))
      return fail
        ? reply(403, {
            type: 'x',
            title: 'Forbidden',
            status: 403,
            detail: 'email_accounts_list is not a read tool',
            code: 'forbidden',
            correlationId: 'c',
          })
        : reply(200, { items: [] });
    return undefined;
  });
  renderDialog();
  expect(await screen.findByRole('option', { name: 'Choices could not be loaded' })).toBeTruthy();
  expect(screen.getByText(/not a read tool/)).toBeTruthy();
  fail = false;
  fireEvent.click(screen.getByRole('button', { name: 'Try again' }));
  expect(await screen.findByRole('option', { name: 'No choices available' })).toBeTruthy();
});

test('a refused upload (too large) is said under the picker and nothing is granted', async () => {
  stubFetch((req) => {
    if (req.path.endsWith('/options')) return reply(200, { items: [] });
    if (req.path === '/api/files')
      return reply(413, {
        type: 'x',
        title: 'Payload Too Large',
        status: 413,
        detail: 'a file may have at most 26214400 bytes',
        code: 'payload_too_large',
        correlationId: 'c',
      });
    return undefined;
  });
  renderDialog();
  fireEvent.change(screen.getByLabelText('Workbook'), {
    target: { files: [new File(['x'], 'big.bin')] },
  });
  expect(await screen.findByText(/at most 26214400 bytes/)).toBeTruthy();
  expect(screen.queryByTestId('uploaded-file')).toBeNull();
  expect(screen.getByTestId('missing-inputs').textContent).toContain('Workbook');
});
