import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { RunDetail } from '@switchyard/contracts';
import { FakeLlmServer, Platform, TcpProxy, waitFor, type Stack } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

const EVERYTHING = join(
  __dirname,
  '..',
  '..',
  '..',
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);

type Step = Record<string, unknown>;
const wait = (id: string, ms: number, value: unknown, dependsOn: string[] = []): Step => ({
  id,
  tool: 'wait',
  description: `wait ${ms} ms`,
  arguments: { ms, value },
  dependsOn,
});

/**
 * The console in a real browser (Debian's Chromium) against the whole platform started as
 * `npm start` runs it: five services as processes, the gateway serving the built client with its
 * Content-Security-Policy. Each test leaves a screenshot under test-results/screenshots.
 */
// A browser, five services and an MCP child on a busy 2-core machine: generous bounds, never speed.
jest.setTimeout(120_000);

describe('web console (browser)', () => {
  let platform: Platform;
  let stack: Stack;
  let admin: string;
  let llm: FakeLlmServer;
  let browser: Browser;
  let context: BrowserContext;
  let workspace: string;
  let alice: string;
  let base: string;
  /** The browser reaches the gateway through this proxy, so a test can cut its connections. */
  let network: TcpProxy;
  const problems: PageProblems[] = [];

  const call = (method: string, path: string, token: string, body?: unknown) =>
    platform.call(method, path, token, body);
  const startRun = (body: Record<string, unknown>, token = alice): Promise<string> =>
    platform.startRun(body, token);
  const detail = async (runId: string, token = alice) =>
    RunDetail.parse((await call('GET', `/api/agent/runs/${runId}`, token)).json);

  /** A signed-in page (the token goes in through the sign-in form, as a person types it). */
  const signedIn = async (token = alice, path = '/runs'): Promise<Page> => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    await signIn(page, `${base}${path}`, token);
    return page;
  };
  const nodeStatuses = (page: Page) =>
    page
      .locator('.dag-node')
      .evaluateAll((nodes) =>
        Object.fromEntries(nodes.map((n) => [n.getAttribute('data-step-id'), n.getAttribute('data-status')])),
      );
  /** The DAG (drawn by a chunk loaded on demand) comes to show these statuses. */
  const expectNodes = async (page: Page, expected: Record<string, string>) => {
    const shows = async () => JSON.stringify(await nodeStatuses(page)) === JSON.stringify(expected);
    await waitFor(shows, 60_000).catch(() => undefined); // the assertion below says what differs
    expect(await nodeStatuses(page)).toEqual(expected);
  };

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-web-')));
    platform = await Platform.start('web', {
      WORKSPACE_DIR: workspace,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
      // Short, so a killed replica's runs are found soon; long enough that a busy machine's
      // event-loop stalls do not lapse a live replica's lease.
      RUN_LEASE_MS: '5000',
      RUN_SWEEP_MS: '300',
      // One background task at a time, so a second one waits in the queue.
      TASK_RUNNING_LIMIT: '1',
      MCP_HANDSHAKE_TIMEOUT_MS: '30000',
    });
    ({ stack, admin } = platform);
    const gateway = new URL(platform.url);
    network = await TcpProxy.start(gateway.hostname, Number(gateway.port));
    base = network.url;
    alice = await platform.token('alice');
    browser = await launchChromium();
  });

  beforeEach(async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(60_000);
  });

  afterEach(async () => {
    await context?.close();
    // No page may have thrown or been refused by the Content-Security-Policy.
    const seen = problems.splice(0).flatMap((p) => p.errors);
    expect(seen).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await network?.close();
    await platform?.stop();
    await llm?.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('signs in with a token, refusing a wrong one with a clear page', async () => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    const res = await page.goto(`${base}/runs`);
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.getByLabel('API token').fill('not-a-real-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expectText(page, 'This token was not accepted');
    await screenshot(page, 'sign-in-refused');
    await page.getByLabel('API token').fill(alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Runs' }).waitFor();
    await expectText(page, 'alice');
    await screenshot(page, 'runs-empty');
  });

  it('starts a supplied plan from the dialog and watches every node go done', async () => {
    const page = await signedIn();
    await page.getByRole('button', { name: 'New run' }).first().click();
    await page.getByRole('tab', { name: 'From a plan' }).click();
    const plan = {
      steps: [wait('a', 200, 1), wait('b', 200, 2), wait('c', 100, '{{node.a.result}}', ['a', 'b'])],
    };
    await page.locator('#plan-json').fill(JSON.stringify(plan, null, 2));
    // Under the page's CSP the browser cannot compile tool schemas: it says so instead of passing.
    await page.getByTestId('plan-unchecked').waitFor();
    await page.getByLabel('Ask me to approve the plan first').uncheck();
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    await page.getByTestId('run-result').waitFor();
    await expectNodes(page, { a: 'completed', b: 'completed', c: 'completed' });
    await screenshot(page, 'run-completed');
    // The server ends the stream after the run's last event; the page lets it rest there instead
    // of reconnecting over and over.
    const state = page.getByTestId('stream-state');
    await page.locator('[data-testid="stream-state"].closed').waitFor({ state: 'attached' });
    await page.waitForTimeout(1_500); // longer than the first reconnect delay (500 ms)
    expect(await state.getAttribute('class')).toBe('stream-state closed');
    // The page is a deep link: reloading it draws the same finished run.
    await page.reload();
    await page.getByTestId('run-result').waitFor();
    await expectNodes(page, { a: 'completed', b: 'completed', c: 'completed' });
  });

  it('starts a run from a goal: the plan streams in as the model writes it, then waits at the gate', async () => {
    const plan = { steps: [wait('one', 0, 'drafted'), wait('two', 0, 'too', ['one'])] };
    const content = JSON.stringify(plan);
    llm.enqueue({ content, chunkSize: 8, chunkDelayMs: 40 });
    const page = await signedIn();
    await page.getByRole('button', { name: 'New run' }).first().click();
    await page.getByLabel('What should be done?').fill('wait twice, in order');
    await page.getByRole('button', { name: 'Start', exact: true }).click();
    await page.waitForURL(/\/runs\/[0-9a-f-]{36}$/);
    const gate = page.getByTestId('plan-gate');
    await gate.waitFor();
    await expectNodes(page, { one: 'queued', two: 'queued' });
    // Each step shows what the rules would decide for it: what the evaluate endpoint answers.
    for (const step of plan.steps) {
      const asked = await call('POST', '/api/agent/permissions/evaluate', alice, {
        tool: step.tool,
        arguments: step.arguments,
        permissionMode: 'ask',
      });
      await expectText(gate.locator(`tr[data-step-id="${step.id}"] .badge`), String(asked.json['decision']));
    }
    // Every token the model streamed is in the log, folded into plan_token lines.
    expect(await page.locator('.event-log li[data-type="plan_token"]').count()).toBeGreaterThan(0);
    await screenshot(page, 'goal-plan-gate');
    await gate.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByTestId('run-result').waitFor();
    await expectText(page.getByTestId('run-result'), 'too');
  });

  it('works on a narrow window', async () => {
    const runId = await startRun({
      goal: 'narrow',
      workflow: { steps: [wait('a', 0, 1), wait('b', 0, 2, ['a'])] },
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    await waitFor(async () => (await detail(runId)).status === 'completed', 60_000);
    const { page, problems: p } = await openPage(context, { width: 390, height: 844 });
    problems.push(p);
    await page.goto(`${base}/runs/${runId}`);
    await page.getByLabel('API token').fill(alice);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('run-result').waitFor();
    // Nothing is wider than the window: no sideways scrolling.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    // The links keep to one row of the top bar (it scrolls sideways), below the brand and the tools.
    const rows = await page
      .locator('.mainnav a')
      .evaluateAll((links) => new Set(links.map((a) => Math.round(a.getBoundingClientRect().top))).size);
    expect(rows).toBe(1);
    const brand = await page.locator('.topbar .brand').boundingBox();
    const nav = await page.locator('.mainnav').boundingBox();
    if (!brand || !nav) throw new Error('no box for the brand or the links');
    expect(nav.y).toBeGreaterThanOrEqual(brand.y + brand.height);
    // The plan top to bottom, both cards whole inside the canvas (left to right, b was cut off).
    await page.locator('[data-testid="dag"][data-direction="TB"]').waitFor();
    const canvas = await page.getByTestId('dag').boundingBox();
    for (const id of ['a', 'b']) {
      const card = await page.locator(`.dag-node[data-step-id="${id}"]`).boundingBox();
      if (!canvas || !card) throw new Error(`no box for the canvas or card ${id}`);
      expect(card.x).toBeGreaterThanOrEqual(canvas.x);
      expect(card.x + card.width).toBeLessThanOrEqual(canvas.x + canvas.width);
      expect(card.y + card.height).toBeLessThanOrEqual(canvas.y + canvas.height);
    }
    await screenshot(page, 'run-narrow');
    // The page's own link is scrolled into view, even the last one.
    await page.goto(`${base}/settings`);
    const settings = page.locator('.mainnav a.active');
    await expectText(settings, 'Settings');
    await waitFor(async () => {
      const link = await settings.boundingBox();
      const row = await page.locator('.mainnav').boundingBox();
      return !!link && !!row && link.x >= row.x && link.x + link.width <= row.x + row.width + 1;
    }, 10_000);
    await page.getByTestId('why-tester').waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'settings-narrow');
  });

  it('approves a plan after editing it', async () => {
    const runId = await startRun({
      goal: 'edit me',
      workflow: { steps: [wait('only', 0, 'before')] },
      config: { permissionMode: 'full-access' },
    });
    const page = await signedIn(alice, `/runs/${runId}`);
    await page.getByTestId('plan-gate').waitFor();
    await page.getByRole('button', { name: 'Edit plan' }).click();
    const editor = page.locator('#plan-json');
    const text = await editor.inputValue();
    await editor.fill(text.replace('"before"', '"after"'));
    await page.getByRole('button', { name: 'Approve edited plan' }).click();
    await page.getByTestId('run-result').waitFor();
    await expectText(page.getByTestId('run-result'), 'after');
    await screenshot(page, 'plan-edited-approved');
    expect((await detail(runId)).status).toBe('completed');
  });

  it('releases a step gate from the inbox, whose count shows in the header', async () => {
    const runId = await startRun({
      goal: 'gated step',
      workflow: { steps: [wait('gated', 0, 'released')] },
      config: { planApproval: false, stepApproval: 'all', permissionMode: 'full-access' },
    });
    await waitFor(async () => (await detail(runId)).status === 'awaiting_step_approval', 60_000);
    const page = await signedIn(alice, '/inbox');
    await page.getByTestId('inbox-count').waitFor();
    const item = page.locator(`[data-testid="inbox-item"][data-run-id="${runId}"]`);
    await item.waitFor();
    await screenshot(page, 'inbox-step-gate');
    await item.getByRole('button', { name: 'Release step' }).click();
    await waitFor(async () => (await detail(runId)).status === 'completed', 60_000);
    await item.waitFor({ state: 'detached' });
  });

  it('cancels a run at its plan gate', async () => {
    const runId = await startRun({ goal: 'cancel me', workflow: { steps: [wait('x', 0, 1)] } });
    const page = await signedIn(alice, `/runs/${runId}`);
    await page.getByTestId('plan-gate').getByRole('button', { name: 'Cancel run' }).click();
    await page.locator('.page-header .badge', { hasText: 'cancelled' }).waitFor();
    await screenshot(page, 'run-cancelled');
    expect((await detail(runId)).status).toBe('cancelled');
  });

  it('resumes an interrupted run without running its finished steps again', async () => {
    const runId = await startRun({
      goal: 'survive a crash',
      workflow: { steps: [wait('first', 0, 1), wait('long', 10_000, 2, ['first'])] },
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    await waitFor(
      async () => (await detail(runId)).executions.some((x) => x.stepId === 'long' && x.status === 'running'),
      60_000,
    );
    await stack.restartAll('executor', 'SIGKILL');
    // The lease (15 s) runs out, then the new replica's sweep marks the run: a bound for a busy
    // machine, as in the chaos suite, not a speed the test asserts.
    await waitFor(async () => (await detail(runId)).status === 'interrupted', 150_000, 200);
    const page = await signedIn(alice, `/runs/${runId}`);
    await page.getByRole('button', { name: 'Resume' }).click();
    // A resumed run shows its plan again, the finished step marked done, before going on.
    const gate = page.getByTestId('plan-gate');
    await gate.waitFor();
    await expectNodes(page, { first: 'completed', long: 'queued' });
    await screenshot(page, 'run-resumed-gate');
    await gate.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.getByTestId('run-result').waitFor();
    await screenshot(page, 'run-resumed');
    const d = await detail(runId);
    expect(d.status).toBe('completed');
    expect(d.events.filter((e) => e.type === 'step_start' && e.data.stepId === 'first')).toHaveLength(1);
  });

  it('keeps the live log whole across a network drop: the stream resumes with no line twice', async () => {
    const steps = Array.from({ length: 8 }, (_, i) => wait(`s${i}`, 400, i, i ? [`s${i - 1}`] : []));
    const runId = await startRun({
      goal: 'a long sequence',
      workflow: { steps },
      // Held at the plan until the page is live, so a slow page load cannot miss the whole run.
      config: { planApproval: true, permissionMode: 'full-access' },
    });
    const page = await signedIn(alice, `/runs/${runId}`);
    await page.locator('[data-testid="stream-state"]', { hasText: 'Live' }).waitFor();
    await page.getByTestId('plan-gate').getByRole('button', { name: 'Approve', exact: true }).click();
    await page.locator('.event-log li[data-type="step_complete"]').first().waitFor();
    expect(network.drop()).toBeGreaterThan(0); // the stream (and anything else open) is cut mid-run
    await page.getByTestId('run-result').waitFor();
    const seqs = await page
      .locator('[data-testid="event-log"] li')
      .evaluateAll((items) => items.map((li) => Number(li.getAttribute('data-seq'))));
    const stored = (await detail(runId)).events.map((e) => e.seq);
    expect(seqs).toEqual(stored); // every event once, in order
    await screenshot(page, 'stream-resumed');
  });

  it('adds a LOCAL MCP server, tests it, and finds its tools in the catalog', async () => {
    const page = await signedIn(admin, '/tools');
    await page.getByRole('button', { name: 'Add server' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('everything');
    await dialog.getByLabel('Command (an executable, no shell syntax)').fill(process.execPath);
    await dialog.getByLabel('Arguments (one per line)').fill(`${EVERYTHING}\nstdio`);
    await dialog.getByRole('button', { name: 'Save' }).click();
    const row = page.locator('[data-record-name="everything"]');
    await row.waitFor();
    await row.getByRole('button', { name: 'Test' }).click();
    const result = page.getByTestId('test-result');
    await result.getByText(/Connected: \d+ tools/).waitFor();
    await expectText(result, 'echo');
    await screenshot(page, 'tools-record-tested');
    await page.goto(`${base}/tools/catalog`);
    await page.locator('[data-tool="mcp__everything__echo"]').waitFor();
    await screenshot(page, 'tools-catalog');
  });

  it("marks a bad rule line with the server's reason and saves nothing", async () => {
    const page = await signedIn(alice, '/settings/rules');
    const allow = page.getByLabel('Allow', { exact: false }).first();
    await allow.fill('Tool(read_*)\nCommand()');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('allow-line-2').waitFor();
    // Only the bad line is marked; the good one is not saved either.
    expect(await page.getByTestId('allow-line-1').count()).toBe(0);
    await expectText(page, 'Nothing was saved');
    await screenshot(page, 'rules-bad-line');
    const saved = await call('GET', '/api/settings/permissions', alice);
    expect(JSON.stringify(saved.json)).not.toContain('Tool(read_*)');
  });

  it('kills a queued background task', async () => {
    const created = await call('POST', '/api/workflows', alice, {
      name: 'long wait',
      plan: { steps: [{ id: 'w', tool: 'wait', arguments: { ms: 20_000, value: 1 } }] },
    });
    const workflowId = created.json['id'] as string;
    expect((await call('POST', `/api/workflows/${workflowId}/publish`, alice, { revision: 1 })).status).toBe(
      200,
    );
    const submit = async () =>
      (await call('POST', '/api/agent/tasks', alice, { workflowId, permissionMode: 'full-access' })).json[
        'id'
      ] as string;
    const running = await submit();
    const queued = await submit();
    const page = await signedIn(alice, '/tasks');
    const row = page.locator(`[data-task-id="${queued}"]`);
    await row.waitFor();
    expect(await row.getAttribute('data-state')).toBe('queued');
    await screenshot(page, 'tasks-queued');
    await row.getByRole('button', { name: 'Kill' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Kill' }).click();
    await page.locator(`[data-task-id="${queued}"][data-state="cancelled"]`).waitFor();
    await call('POST', `/api/agent/tasks/${running}/kill`, alice);
  });

  it('shows a user token no admin menu', async () => {
    const page = await signedIn(alice, '/tools');
    await page.locator('[data-tool]').first().waitFor(); // a user lands on the catalog
    expect(await page.getByRole('button', { name: 'Add server' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'MCP servers' }).count()).toBe(0);
    await screenshot(page, 'user-tools');
    const adminPage = await signedIn(admin, '/tools');
    await adminPage.getByRole('link', { name: 'MCP servers' }).waitFor();
  });

  it('switches to Chinese and to the light theme', async () => {
    const page = await signedIn(alice, '/runs');
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '运行' }).waitFor();
    await page.getByRole('button', { name: '切换主题' }).click();
    expect(await page.evaluate('document.documentElement.dataset.theme')).toBe('light');
    await screenshot(page, 'runs-zh-light');
  });

  it('answers an unknown path with a not-found page', async () => {
    const page = await signedIn(alice, '/no/such/page');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await screenshot(page, 'not-found');
  });
});

async function expectText(where: Page | ReturnType<Page['locator']>, text: string): Promise<void> {
  await where.getByText(text, { exact: false }).first().waitFor();
}
