import { fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { Problem } from '@switchyard/contracts';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { RunFlowDialog } from './RunFlowDialog';
import { reply } from '../testing/reply';

/** The run dialog against a mocked fetch: what it refuses before sending, and what it sends. */

const FLOW = '00000000-0000-4000-8000-0000000000f1';

const schema = {
  type: 'object',
  required: ['customer', 'count', 'tier'],
  properties: {
    customer: { type: 'string', title: 'Customer name', examples: ['ACME'] },
    count: { type: 'integer', title: 'How many' },
    tier: { type: 'string', enum: ['gold', 'silver'] },
    urgent: { type: 'boolean', title: 'Urgent' },
    tags: { type: 'array', items: { type: 'string' } },
    note: { type: 'string' },
  },
};

interface Sent {
  method: string;
  url: string;
  body: unknown;
}

function serve(answer: (body: unknown) => { status: number; body: unknown }) {
  const sent: Sent[] = [];
  globalThis.fetch = jest.fn((url: string, init?: RequestInit) => {
    const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined;
    sent.push({ method: init?.method ?? 'GET', url, body });
    if (url === `/api/workflows/${FLOW}/run` && init?.method === 'POST') {
      const r = answer(body);
      return Promise.resolve(reply(r.status, r.body));
    }
    return Promise.resolve(reply(404, { detail: `no mock for ${url}` }));
  }) as unknown as typeof fetch;
  return sent;
}

function renderDialog(version?: number) {
  const onStarted = jest.fn();
  const onClose = jest.fn();
  render(
    <QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>
      <I18nProvider lang="en">
        <RunFlowDialog
          workflow={{ id: FLOW, inputSchema: schema, name: 'Invoices' }}
          {...(version !== undefined ? { version } : {})}
          onStarted={onStarted}
          onClose={onClose}
        />
      </I18nProvider>
    </QueryClientProvider>,
  );
  return { onStarted, onClose };
}

const start = () => screen.getByRole('button', { name: 'Start' });

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('Start stays blocked, naming every missing required input, until each is given', () => {
  const sent = serve(() => ({ status: 200, body: { runId: 'x' } }));
  renderDialog();
  expect(screen.getByRole('dialog', { name: 'Run “Invoices”' })).toBeTruthy();
  expect(start().hasAttribute('disabled')).toBe(true);
  expect(screen.getByTestId('missing-inputs').textContent).toBe(
    'Fill in before starting: Customer name, How many, tier',
  );
  // Labels come from `title` (the name when there is none); required ones are marked.
  expect(screen.getByLabelText('Customer name').getAttribute('aria-required')).toBe('true');
  expect(screen.getByLabelText('note').getAttribute('aria-required')).toBeNull();
  expect((screen.getByLabelText('Customer name') as HTMLInputElement).placeholder).toBe('ACME');

  fireEvent.change(screen.getByLabelText('Customer name'), { target: { value: 'ACME Ltd' } });
  fireEvent.change(screen.getByLabelText('How many'), { target: { value: '3' } });
  expect(screen.getByTestId('missing-inputs').textContent).toBe('Fill in before starting: tier');
  expect(start().hasAttribute('disabled')).toBe(true);

  // Clicking a disabled Start sends nothing.
  fireEvent.click(start());
  fireEvent.submit(start().closest('form') as HTMLFormElement);
  expect(sent).toHaveLength(0);

  // A number field holding text blocks too, with its own reason (not "required").
  fireEvent.change(screen.getByLabelText('tier'), { target: { value: '1' } });
  fireEvent.change(screen.getByLabelText('How many'), { target: { value: 'three' } });
  expect(screen.queryByTestId('missing-inputs')).toBeNull();
  expect(screen.getByText('Not a number')).toBeTruthy();
  expect(start().hasAttribute('disabled')).toBe(true);
  fireEvent.change(screen.getByLabelText('How many'), { target: { value: '3' } });
  expect(start().hasAttribute('disabled')).toBe(false);
});

test('filled in, Start posts the typed inputs, the mode and the version, and reports the run', async () => {
  const sent = serve(() => ({ status: 200, body: { runId: 'run-42' } }));
  const { onStarted } = renderDialog(2);
  expect(screen.getByText('Runs published version 2.')).toBeTruthy();
  fireEvent.change(screen.getByLabelText('Customer name'), { target: { value: 'ACME Ltd' } });
  fireEvent.change(screen.getByLabelText('How many'), { target: { value: ' 12 ' } });
  fireEvent.change(screen.getByLabelText('tier'), { target: { value: '1' } });
  fireEvent.click(screen.getByLabelText('Urgent'));
  fireEvent.change(screen.getByLabelText('tags'), { target: { value: '["a", "b"]' } });
  fireEvent.change(screen.getByLabelText('Permission mode'), { target: { value: 'approve-for-me' } });
  fireEvent.click(screen.getByLabelText('Pause for my approval of the plan before any step runs'));
  fireEvent.click(start());

  await waitFor(() => expect(onStarted).toHaveBeenCalledWith('run-42'));
  expect(sent).toHaveLength(1);
  expect(sent[0]?.method).toBe('POST');
  expect(sent[0]?.body).toEqual({
    inputs: { customer: 'ACME Ltd', count: 12, tier: 'silver', urgent: true, tags: ['a', 'b'] },
    permissionMode: 'approve-for-me',
    planApproval: true,
    version: 2,
  });
});

test('the server’s refusal lands under the field it names', async () => {
  const problem: Problem = {
    type: 'https://switchyard.dev/problems/validation_failed',
    title: 'Bad Request',
    status: 400,
    detail: 'inputs do not match the schema: inputs.customer: too long',
    code: 'validation_failed',
    correlationId: 'c-1',
    errors: [{ path: 'inputs.customer', message: 'at most 10 characters' }],
  };
  serve(() => ({ status: 400, body: problem }));
  const { onStarted } = renderDialog();
  fireEvent.change(screen.getByLabelText('Customer name'), { target: { value: 'A very long name' } });
  fireEvent.change(screen.getByLabelText('How many'), { target: { value: '1' } });
  fireEvent.change(screen.getByLabelText('tier'), { target: { value: '0' } });
  fireEvent.click(start());

  await screen.findByText('validation_failed');
  const under = screen.getAllByText('at most 10 characters').map((e) => e.closest('[data-input]'));
  expect(under.filter(Boolean).map((e) => e?.getAttribute('data-input'))).toEqual(['customer']);
  expect(screen.getByLabelText('Customer name').getAttribute('aria-invalid')).toBe('true');
  expect(screen.getByText('validation_failed')).toBeTruthy();
  expect(onStarted).not.toHaveBeenCalled();
});
