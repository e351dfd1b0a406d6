import { useState } from 'react';
import { act, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, Link, RouterProvider, useNavigate } from 'react-router';
import { I18nProvider } from '../i18n/i18n';
import { useLeaveGuard } from './useLeaveGuard';

/** The leave guard in the app's kind of router (a data router): what it holds, and what it lets by. */

// jsdom has no Fetch API classes; the data router makes a Request for each navigation it runs.
if (typeof globalThis.Request === 'undefined') {
  class RequestStub {
    readonly url: string;
    readonly method: string;
    readonly signal: AbortSignal | undefined;
    constructor(url: string | URL, init?: { method?: string; signal?: AbortSignal }) {
      this.url = String(url);
      this.method = init?.method ?? 'GET';
      this.signal = init?.signal;
    }
  }
  Object.assign(globalThis, { Request: RequestStub });
}

function Editor() {
  const [dirty, setDirty] = useState(false);
  const { prompt, release } = useLeaveGuard(dirty);
  const navigate = useNavigate();
  return (
    <>
      <label>
        <input type="checkbox" checked={dirty} onChange={(e) => setDirty(e.target.checked)} />
        dirty
      </label>
      <Link to="/runs">away</Link>
      <Link to="/flows/a?panel=node">same page</Link>
      <button
        type="button"
        onClick={() => {
          release();
          setDirty(false);
          void navigate('/flows/b');
        }}
      >
        saved, go on
      </button>
      {prompt}
    </>
  );
}

function renderGuarded() {
  const router = createMemoryRouter(
    [
      { path: '/flows/:id', element: <Editor /> },
      { path: '/runs', element: <p>runs page</p> },
    ],
    { initialEntries: ['/flows/a'] },
  );
  render(
    <I18nProvider lang="en">
      <RouterProvider router={router} />
    </I18nProvider>,
  );
  return router;
}

function beforeUnloadPrevented(): boolean {
  const event = new Event('beforeunload', { cancelable: true });
  window.dispatchEvent(event);
  return event.defaultPrevented;
}

test('clean: leaving is not asked, and the browser is not told to prompt', async () => {
  const router = renderGuarded();
  expect(beforeUnloadPrevented()).toBe(false);
  fireEvent.click(screen.getByRole('link', { name: 'away' }));
  expect(await screen.findByText('runs page')).toBeTruthy();
  expect(router.state.location.pathname).toBe('/runs');
});

test('dirty: the browser prompts, and a link away waits for the person: Stay keeps the page', async () => {
  const router = renderGuarded();
  fireEvent.click(screen.getByLabelText('dirty'));
  expect(beforeUnloadPrevented()).toBe(true);

  fireEvent.click(screen.getByRole('link', { name: 'away' }));
  const dialog = await screen.findByRole('dialog', { name: 'Leave without saving?' });
  expect(router.state.location.pathname).toBe('/flows/a');
  fireEvent.click(screen.getByRole('button', { name: 'Stay' }));
  expect(screen.queryByRole('dialog')).toBeNull();
  expect(dialog.isConnected).toBe(false);
  expect(router.state.location.pathname).toBe('/flows/a');
  expect((screen.getByLabelText('dirty') as HTMLInputElement).checked).toBe(true);

  fireEvent.click(screen.getByRole('link', { name: 'away' }));
  fireEvent.click(await screen.findByRole('button', { name: 'Leave and discard' }));
  expect(await screen.findByText('runs page')).toBeTruthy();
  // The page is gone: the browser no longer prompts.
  expect(beforeUnloadPrevented()).toBe(false);
});

test('dirty: a change of query string only is not leaving', async () => {
  const router = renderGuarded();
  fireEvent.click(screen.getByLabelText('dirty'));
  await act(async () => {
    fireEvent.click(screen.getByRole('link', { name: 'same page' }));
    await Promise.resolve();
  });
  expect(router.state.location.search).toBe('?panel=node');
  expect(screen.queryByRole('dialog')).toBeNull();
});

test('release() lets the navigation right after a save through', async () => {
  const router = renderGuarded();
  fireEvent.click(screen.getByLabelText('dirty'));
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: 'saved, go on' }));
    await Promise.resolve();
  });
  expect(screen.queryByRole('dialog')).toBeNull();
  expect(router.state.location.pathname).toBe('/flows/b');
});
