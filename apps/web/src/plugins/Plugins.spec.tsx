import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import { PERMISSIONS, type Plugin, type PluginHooksEntry } from '@switchyard/contracts';
import { AuthProvider } from '../api/auth';
import { tokenStore } from '../api/client';
import { I18nProvider } from '../i18n/i18n';
import { reply } from '../testing/reply';
import { Plugins } from './Plugins';

/**
 * The Plugins page against a fake server: installs (a path, an upload as gzip, refusals by path and
 * 409 clashes), enable/disable, uninstall after asking, grants, write-only secrets, hook trust with
 * the file's digest. The real-server path is the browser test (apps/web/e2e/plugins.e2e-spec.ts).
 */

interface Sent {
  method: string;
  path: string;
  body: unknown;
  type: string | undefined;
}

const problem = (status: number, code: string, detail: string, errors?: unknown[]) =>
  reply(status, {
    type: 'about:blank',
    title: code,
    status,
    detail,
    code,
    correlationId: 'c1',
    ...(errors ? { errors } : {}),
  });

const DIGEST = 'ab'.repeat(32);

function office(over: Partial<Plugin> = {}): Plugin {
  return {
    id: 'office',
    version: '1.0.0',
    name: 'Office pack',
    description: 'Excel workbooks and batch e-mail',
    enabled: false,
    permissions: { network: true, files: true },
    grants: { network: false, files: false },
    tools: [
      { name: 'excel_execute', effect: 'write', idempotent: true, requiresApproval: false, flowNode: true },
      { name: 'confirm_send', effect: 'external', idempotent: true, requiresApproval: true, flowNode: true },
    ],
    flowNodes: [
      { tool: 'excel_execute', label: 'Split a workbook', help: '', outputs: {}, examples: [] },
      { tool: 'confirm_send', label: 'Send a staged batch', help: '', outputs: {}, examples: [] },
    ],
    settings: [
      { key: 'accounts', label: 'Sending accounts', secret: false, required: true, set: true, value: '[]' },
      { key: 'passwords', label: 'SMTP passwords', secret: true, required: false, set: true },
    ],
    hooks: true,
    server: { state: 'disabled', missingTools: [] },
    sandbox: { posture: 'sandboxed' },
    installedAt: '2026-12-03T10:00:00.000Z',
    updatedAt: '2026-12-03T10:00:00.000Z',
    ...over,
  };
}

const hooksEntry = (over: Partial<PluginHooksEntry> = {}): PluginHooksEntry => ({
  id: 'office',
  name: 'Office pack',
  version: '1.0.0',
  enabled: false,
  trusted: false,
  trustedAt: null,
  digest: DIGEST,
  trustedDigest: null,
  changed: false,
  active: false,
  hooks: [
    {
      name: 'plugin/office/audit',
      event: 'post_tool_use',
      matchers: ['Tool(excel_*)'],
      type: 'command',
      command: './audit.sh',
      timeoutSeconds: 10,
      failClosed: false,
      cwd: '',
    },
  ],
  issues: [],
  ignored: [],
  ...over,
});

/** A fake server holding `plugins`; `answer` may take a request first (a refusal, say). */
function serve(
  initial: Plugin[],
  opts: {
    hooks?: PluginHooksEntry[];
    answer?: (s: Sent) => unknown;
    sandbox?: Plugin['sandbox'];
  } = {},
) {
  const sent: Sent[] = [];
  let plugins = [...initial];
  let hooks = [...(opts.hooks ?? [])];
  globalThis.fetch = jest.fn((url: string, init?: RequestInit) => {
    const method = init?.method ?? 'GET';
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const s: Sent = {
      method,
      path: url.split('?')[0] as string,
      body: typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : init?.body,
      type: headers['content-type'],
    };
    sent.push(s);
    const own = opts.answer?.(s);
    if (own) return Promise.resolve(own);
    const one = /^\/api\/plugins\/([a-z0-9-]+)(?:\/(\w+))?$/.exec(s.path);
    if (s.path === '/api/me')
      return Promise.resolve(
        reply(200, {
          owner: { id: '00000000-0000-4000-8000-0000000000aa', name: 'root', role: 'admin', createdAt: '' },
          permissions: PERMISSIONS,
          tokenId: '00000000-0000-4000-8000-0000000000bb',
        }),
      );
    if (s.path === '/api/plugins' && method === 'GET')
      return Promise.resolve(
        reply(200, { items: plugins, sandbox: opts.sandbox ?? { posture: 'sandboxed' } }),
      );
    if (s.path === '/api/plugin-hooks') return Promise.resolve(reply(200, { items: hooks }));
    const trust = /^\/api\/plugin-hooks\/([a-z0-9-]+)\/(trust|untrust)$/.exec(s.path);
    if (trust) {
      const on = trust[2] === 'trust';
      hooks = hooks.map((h) =>
        h.id === trust[1]
          ? {
              ...h,
              trusted: on,
              trustedDigest: on ? h.digest : null,
              trustedAt: on ? '2026-12-03T11:00:00.000Z' : null,
            }
          : h,
      );
      return Promise.resolve(
        reply(
          200,
          hooks.find((h) => h.id === trust[1]),
        ),
      );
    }
    if ((s.path === '/api/plugins' || s.path === '/api/plugins/upload') && method === 'POST') {
      const made = office({ id: 'fresh', name: 'Fresh plugin', hooks: false });
      plugins = [...plugins, made];
      return Promise.resolve(reply(201, made));
    }
    if (one) {
      const [, id, verb] = one;
      const p = plugins.find((x) => x.id === id) as Plugin;
      let next = p;
      if (verb === 'enable') next = { ...p, enabled: true, server: { state: 'running', missingTools: [] } };
      if (verb === 'disable')
        next = { ...p, enabled: false, server: { state: 'disabled', missingTools: [] } };
      if (verb === 'grants') next = { ...p, grants: { ...p.grants, ...(s.body as object) } };
      if (method === 'DELETE') {
        plugins = plugins.filter((x) => x.id !== id);
        return Promise.resolve(reply(200, { id, version: p.version }));
      }
      plugins = plugins.map((x) => (x.id === id ? next : x));
      return Promise.resolve(reply(200, next));
    }
    return Promise.resolve(problem(404, 'not_found', `no mock for ${method} ${s.path}`));
  }) as unknown as typeof fetch;
  return {
    sent,
    of: (method: string, path: string) => sent.filter((x) => x.method === method && x.path === path),
  };
}

function renderPage(lang: 'en' | 'zh' = 'en') {
  const queries = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queries}>
      <I18nProvider lang={lang}>
        <MemoryRouter initialEntries={['/plugins']}>
          <AuthProvider>
            <Plugins />
          </AuthProvider>
        </MemoryRouter>
      </I18nProvider>
    </QueryClientProvider>,
  );
}

beforeEach(() => tokenStore.set('sy_test'));
afterEach(() => sessionStorage.clear());

test('nothing installed: the empty state says how to start, and the sandbox posture is shown', async () => {
  serve([]);
  renderPage();
  expect(await screen.findByText(/No plugin is installed yet/)).toBeTruthy();
  expect(screen.getByText(/Plugin servers run inside bubblewrap/)).toBeTruthy();
});

test('an unsandboxed host says so, with the reason and how to restore the sandbox', async () => {
  serve([], { sandbox: { posture: 'unsandboxed', reason: 'PLUGIN_SANDBOX=none' } });
  renderPage();
  expect(await screen.findByText('Plugin servers run unsandboxed')).toBeTruthy();
  expect(screen.getByText('PLUGIN_SANDBOX=none')).toBeTruthy();
});

test('installs from a server path; a bad manifest is shown by path, a clash with its 409 sentence', async () => {
  let refusal = 0;
  const server = serve([], {
    answer: (s) => {
      if (s.method !== 'POST' || s.path !== '/api/plugins') return undefined;
      refusal++;
      if (refusal === 1)
        return problem(400, 'validation_failed', 'the bundle is not valid; nothing was installed', [
          {
            path: 'tools.bad_tool.effect',
            message: 'Invalid option: expected one of "read"|"write"|"external"',
          },
        ]);
      if (refusal === 2)
        return problem(409, 'conflict', 'tool excel_execute is already provided by plugin office');
      return undefined;
    },
  });
  renderPage();
  const path = await screen.findByLabelText('Bundle folder or .tgz on the server');
  fireEvent.change(path, { target: { value: '/srv/bad' } });
  fireEvent.click(screen.getByRole('button', { name: 'Install' }));
  const bad = await screen.findByRole('alert');
  expect(within(bad).getByText('Nothing was installed')).toBeTruthy();
  expect(within(bad).getByText('tools.bad_tool.effect')).toBeTruthy();
  expect(server.of('POST', '/api/plugins')[0]?.body).toEqual({ path: '/srv/bad' });

  fireEvent.click(screen.getByRole('button', { name: 'Install' }));
  expect(await screen.findByText('tool excel_execute is already provided by plugin office')).toBeTruthy();

  fireEvent.click(screen.getByRole('button', { name: 'Install' }));
  expect(
    await screen.findByText(/Installed Fresh plugin 1.0.0. It is disabled until you enable it./),
  ).toBeTruthy();
  expect(await screen.findByRole('heading', { name: 'Fresh plugin' })).toBeTruthy();
});

/** XMLHttpRequest as the upload sees it: records the request, reports progress, answers when told. */
class FakeXhr {
  static last: FakeXhr | undefined;
  readonly upload: {
    onprogress: ((e: { loaded: number; total: number; lengthComputable: boolean }) => void) | null;
  } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  status = 0;
  statusText = '';
  responseText = '';
  method = '';
  url = '';
  headers: Record<string, string> = {};
  body: Blob | undefined;
  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(k: string, v: string) {
    this.headers[k] = v;
  }
  getResponseHeader() {
    return 'application/json';
  }
  send(body: Blob) {
    this.body = body;
    FakeXhr.last = this;
  }
  progress(loaded: number) {
    const total = this.body?.size ?? 0;
    this.upload.onprogress?.({ loaded, total, lengthComputable: true });
  }
  answer(status: number, body: unknown) {
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.onload?.();
  }
}

test('uploads a picked .tgz as application/gzip with its progress, and refuses one over the limit before sending', async () => {
  serve([]);
  const realXhr = globalThis.XMLHttpRequest;
  globalThis.XMLHttpRequest = FakeXhr as unknown as typeof XMLHttpRequest;
  try {
    renderPage();
    const input = await screen.findByLabelText('Or upload a .tgz bundle');
    const tgz = new File([new Uint8Array(4096)], 'fresh.tgz', { type: '' });
    fireEvent.change(input, { target: { files: [tgz] } });
    await waitFor(() => expect(FakeXhr.last).toBeDefined());
    const xhr = FakeXhr.last as FakeXhr;
    expect([xhr.method, xhr.url, xhr.headers['content-type'], xhr.headers['x-switchyard-token']]).toEqual([
      'POST',
      '/api/plugins/upload',
      'application/gzip',
      'sy_test',
    ]);
    act(() => xhr.progress(1024));
    expect(await screen.findByText(/Uploading fresh.tgz: 1.0 KiB of 4.0 KiB/)).toBeTruthy();
    act(() => xhr.progress(4096));
    expect(await screen.findByText(/Uploaded fresh.tgz; checking and installing it/)).toBeTruthy();
    act(() => xhr.answer(201, office({ id: 'fresh', name: 'Fresh plugin', hooks: false })));
    expect(await screen.findByTestId('installed')).toBeTruthy();

    FakeXhr.last = undefined;
    const huge = new File(['x'], 'huge.tgz');
    Object.defineProperty(huge, 'size', { value: 60 * 1024 * 1024 });
    fireEvent.change(input, { target: { files: [huge] } });
    expect(await screen.findByText(/huge.tgz has 60.0 MiB; bundles of at most 50.0 MiB/)).toBeTruthy();
    expect(FakeXhr.last).toBeUndefined();

    // A refusal by path comes back like any other call's.
    const bad = new File([new Uint8Array(10)], 'bad.tgz');
    fireEvent.change(input, { target: { files: [bad] } });
    await waitFor(() => expect(FakeXhr.last).toBeDefined());
    act(() =>
      (FakeXhr.last as FakeXhr).answer(400, {
        type: 'about:blank',
        title: 'validation_failed',
        status: 400,
        detail: 'the bundle is not valid',
        code: 'validation_failed',
        correlationId: 'c2',
        errors: [{ path: 'id', message: 'lower-case letters' }],
      }),
    );
    const alert = await screen.findByRole('alert');
    expect(within(alert).getByText('Nothing was installed')).toBeTruthy();
    expect(within(alert).getByText('id')).toBeTruthy();
  } finally {
    globalThis.XMLHttpRequest = realXhr;
  }
});

test('a card shows tools with their flags and palette nodes; enable, and uninstall only after confirming', async () => {
  const server = serve([office()], { hooks: [hooksEntry()] });
  renderPage();
  const card = (await screen.findByRole('heading', { name: 'Office pack' })).closest('li') as HTMLElement;
  const tools = within(card).getByRole('table', { name: 'Tools of Office pack' });
  const send = within(tools).getByText('confirm_send').closest('tr') as HTMLElement;
  expect(within(send).getByText('external')).toBeTruthy();
  expect(within(send).getByText('retry-safe · asks before every call')).toBeTruthy();
  expect(within(send).getByText('Send a staged batch')).toBeTruthy();

  fireEvent.click(within(card).getByRole('button', { name: 'Enable Office pack' }));
  await waitFor(() => expect(server.of('POST', '/api/plugins/office/enable')).toHaveLength(1));
  expect(await within(card).findByText('running')).toBeTruthy();

  fireEvent.click(within(card).getByRole('button', { name: 'Uninstall Office pack' }));
  const dialog = await screen.findByRole('dialog');
  expect(within(dialog).getByText(/its bundle, settings and data folder are removed/)).toBeTruthy();
  expect(server.of('DELETE', '/api/plugins/office')).toHaveLength(0);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Uninstall' }));
  await waitFor(() => expect(server.of('DELETE', '/api/plugins/office')).toHaveLength(1));
  expect(await screen.findByText(/No plugin is installed yet/)).toBeTruthy();
});

test('grants only what the manifest asks for; a secret setting is never shown, only replaced or cleared', async () => {
  const server = serve([office({ permissions: { network: true, files: false } })]);
  renderPage();
  await screen.findByRole('heading', { name: 'Office pack' });
  fireEvent.click(screen.getByText('Grants'));
  const network = screen.getByLabelText(/Network: open sockets/) as HTMLInputElement;
  expect(network.checked).toBe(false);
  expect(screen.queryByLabelText(/Run files/)).toBeNull();
  expect(screen.getByText(/not asked for by the manifest/)).toBeTruthy();
  fireEvent.click(network);
  await waitFor(() => expect(server.of('PUT', '/api/plugins/office/grants')).toHaveLength(1));
  expect(server.of('PUT', '/api/plugins/office/grants')[0]?.body).toEqual({ network: true });

  fireEvent.click(screen.getByText('Settings (2)'));
  const secret = screen.getByLabelText('SMTP passwords') as HTMLInputElement;
  expect(secret.type).toBe('password');
  expect(secret.value).toBe('');
  expect(secret.placeholder).toMatch(/the current one is never shown/);
  const save = screen.getByRole('button', { name: 'Save settings' }) as HTMLButtonElement;
  expect(save.disabled).toBe(true);
  fireEvent.change(screen.getByLabelText('Sending accounts'), { target: { value: '[{"id":"a"}]' } });
  fireEvent.click(screen.getByRole('button', { name: 'Clear passwords' }));
  fireEvent.click(save);
  await waitFor(() => expect(server.of('PUT', '/api/plugins/office/settings')).toHaveLength(1));
  expect(server.of('PUT', '/api/plugins/office/settings')[0]?.body).toEqual({
    values: { accounts: '[{"id":"a"}]', passwords: null },
  });
});

test('hooks: untrusted hooks say they never run, show the file digest, and are trusted only after confirming', async () => {
  const server = serve([office()], { hooks: [hooksEntry()] });
  renderPage();
  await screen.findByRole('heading', { name: 'Office pack' });
  expect(await screen.findByText('Not trusted: these hooks do not run.')).toBeTruthy();
  expect(screen.getByText(/They never run until you trust them/)).toBeTruthy();
  expect(screen.getByTestId('hooks-digest').textContent).toBe(DIGEST);
  expect(screen.getByText('./audit.sh')).toBeTruthy();

  fireEvent.click(screen.getByRole('button', { name: 'Trust the hooks of Office pack' }));
  const dialog = await screen.findByRole('dialog');
  expect(within(dialog).getByText(DIGEST)).toBeTruthy();
  expect(server.of('POST', '/api/plugin-hooks/office/trust')).toHaveLength(0);
  fireEvent.click(within(dialog).getByRole('button', { name: 'Trust hooks' }));
  await waitFor(() => expect(server.of('POST', '/api/plugin-hooks/office/trust')).toHaveLength(1));
  expect(await screen.findByRole('button', { name: 'Untrust the hooks of Office pack' })).toBeTruthy();
});

test('a hooks file with problems lists them by path and cannot be trusted; a changed file says it runs nothing', async () => {
  serve([office(), office({ id: 'drift', name: 'Drifter' })], {
    hooks: [
      hooksEntry({ issues: [{ path: 'audit.cwd', message: 'leads outside the bundle' }] }),
      hooksEntry({
        id: 'drift',
        name: 'Drifter',
        trusted: true,
        changed: true,
        trustedDigest: 'cd'.repeat(32),
      }),
    ],
  });
  renderPage();
  await screen.findByRole('heading', { name: 'Office pack' });
  expect(await screen.findByText('audit.cwd')).toBeTruthy();
  expect(
    (screen.getByRole('button', { name: 'Trust the hooks of Office pack' }) as HTMLButtonElement).disabled,
  ).toBe(true);
  expect(screen.getByText(/The file changed since it was trusted/)).toBeTruthy();
  expect(screen.getByText('cd'.repeat(32))).toBeTruthy();
});

test('in Chinese', async () => {
  serve([office()], { hooks: [hooksEntry()] });
  renderPage('zh');
  expect(await screen.findByRole('heading', { name: 'Office pack' })).toBeTruthy();
  expect(screen.getByRole('button', { name: '启用 Office pack' })).toBeTruthy();
  expect(await screen.findByText('未信任：这些钩子不会运行。')).toBeTruthy();
});
