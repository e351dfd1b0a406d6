import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Platform, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

type Graph = {
  nodes: { id: string; type: string; position?: { x: number; y: number }; data: Record<string, unknown> }[];
  edges: { id?: string; source: string; target: string }[];
};

const START = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
const waitNode = (id: string, x: number, y: number, value: unknown) => ({
  id,
  type: 'tool',
  position: { x, y },
  data: { tool: 'wait', arguments: { ms: 0, value } },
});

/**
 * The flow builder in a real browser (Debian's Chromium) against the whole platform: five services
 * as processes, the gateway serving the built client under its Content-Security-Policy. Every test
 * checks what the server stored, not only what the page shows, and leaves a screenshot.
 */
// A browser and five services on a busy 2-core machine: generous bounds, never speed.
jest.setTimeout(180_000);

describe('flow builder (browser)', () => {
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  let alice: string;
  let bob: string;
  let base: string;
  const problems: PageProblems[] = [];

  const call = (method: string, path: string, body?: unknown) => platform.call(method, path, alice, body);
  const stored = async (id: string) => {
    const res = await call('GET', `/api/workflows/${id}`);
    expect(res.status).toBe(200);
    return res.json as {
      name: string;
      revision: number;
      publishedVersion: number | null;
      graph: Graph;
      inputSchema: Record<string, unknown>;
    };
  };
  const create = async (body: Record<string, unknown>): Promise<string> => {
    const res = await call('POST', '/api/workflows', {
      inputSchema: { type: 'object', properties: {} },
      ...body,
    });
    expect(res.status).toBe(201);
    return res.json['id'] as string;
  };

  /** A signed-in page at `path` (the token goes in through the sign-in form, as a person types it). */
  const signedIn = async (path: string): Promise<Page> => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    await signIn(page, `${base}${path}`, alice);
    return page;
  };
  const openFlow = async (path: string, page?: Page): Promise<Page> => {
    const p = page ?? (await signedIn(path));
    if (page) await page.goto(`${base}${path}`);
    await p.locator('.react-flow__node-start').waitFor();
    return p;
  };
  const card = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  const nodeIds = (page: Page) =>
    page.locator('.react-flow__node').evaluateAll((els) => els.map((e) => e.getAttribute('data-id')));
  /** Where each node is drawn, in flow coordinates (xyflow's transform on the node). */
  const positions = (page: Page): Promise<Record<string, { x: number; y: number } | null>> =>
    page.locator('.react-flow__node').evaluateAll((els) =>
      Object.fromEntries(
        els.map((e) => {
          const m = /translate\(([-\d.]+)px,\s*([-\d.]+)px\)/.exec(
            (e as unknown as { style: { transform: string } }).style.transform,
          );
          return [e.getAttribute('data-id'), m ? { x: Number(m[1]), y: Number(m[2]) } : null];
        }),
      ),
    );
  const paletteItem = async (page: Page, tool: string) => {
    const item = page.locator(`.flow-palette [data-tool="${tool}"]`);
    if (!(await item.isVisible())) await page.getByLabel(/Show all tools/).check();
    return item;
  };
  const saved = (page: Page, revision: number) =>
    page
      .getByTestId('save-state')
      .filter({ hasText: `revision ${revision}` })
      .waitFor();
  const flowIdOf = (page: Page) => /\/flows\/([0-9a-f-]{36})$/.exec(page.url())?.[1] as string;
  const runToolResult = async (workflowId: string): Promise<unknown> => {
    const res = await call('POST', '/api/agent/run', {
      goal: 'call the published flow',
      workflow: { steps: [{ id: 'call', tool: `run_workflow_${workflowId}`, arguments: {} }] },
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    expect(res.status).toBe(200);
    const runId = res.json['runId'] as string;
    let detail: Record<string, unknown> = {};
    await waitFor(async () => {
      detail = (await call('GET', `/api/agent/runs/${runId}`)).json;
      return ['completed', 'failed'].includes(detail['status'] as string);
    }, 60_000);
    expect(detail['status']).toBe('completed');
    return JSON.stringify(detail['executions']);
  };

  beforeAll(async () => {
    platform = await Platform.start('flows');
    base = platform.url;
    alice = await platform.token('alice');
    bob = await platform.token('bob');
    browser = await launchChromium();
  });

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
    await platform?.stop();
  });

  it('builds a flow by dragging from the palette, binds by reference and by expression, and reloads it identical', async () => {
    const page = await openFlow('/flows/new');
    const pane = page.locator('.react-flow__pane');
    const wait = await paletteItem(page, 'wait');
    await wait.dragTo(pane, { targetPosition: { x: 120, y: 120 } });
    await wait.dragTo(pane, { targetPosition: { x: 120, y: 330 } });
    await wait.dragTo(pane, { targetPosition: { x: 430, y: 230 } });
    expect(await nodeIds(page)).toEqual(['start', 'wait', 'wait_2', 'wait_3']);

    // wait: ms by hand. wait_2: value bound by reference to wait's result (the edge comes with it).
    await card(page, 'wait').click();
    await page.locator('.flow-side .input-field[data-arg="ms"] input').fill('5');
    await card(page, 'wait_2').click();
    const ms2 = page.locator('.flow-side .input-field[data-arg="ms"] input');
    await ms2.fill('0');
    const value2 = page.locator('.flow-side .input-field[data-arg="value"]');
    await value2.getByRole('radio', { name: 'Reference' }).click();
    await value2.locator('[role="treeitem"][data-ref="{{node.wait.result}}"] .ref-line').first().click();
    await page.locator('.react-flow__edge').first().waitFor();

    // wait_3: an expression over wait_2's result, and an edge drawn by hand from wait_2.
    await card(page, 'wait_3').click();
    await page.locator('.flow-side .input-field[data-arg="ms"] input').fill('0');
    const value3 = page.locator('.flow-side .input-field[data-arg="value"]');
    await value3.getByRole('radio', { name: 'Expression' }).click();
    await value3.locator('textarea').fill('got {{node.wait_2.result}}');
    await card(page, 'wait_2').hover();
    await card(page, 'wait_2').locator('.flow-out').dragTo(card(page, 'wait_3').locator('.flow-in'));
    await waitFor(async () => (await page.locator('.react-flow__edge').count()) === 2, 60_000);

    // A sticky note.
    await page.getByRole('button', { name: 'Sticky note' }).click();
    await page.getByLabel('Note').fill('binds wait → wait_2 → wait_3');
    await page.getByLabel('Flow name').fill('three waits');
    await expect(page.getByTestId('flow-issues').textContent()).resolves.toBe('Valid');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.waitForURL(/\/flows\/[0-9a-f-]{36}$/);
    await saved(page, 1);
    const id = flowIdOf(page);

    const w = await stored(id);
    expect(w.name).toBe('three waits');
    const byId = Object.fromEntries(w.graph.nodes.map((n) => [n.id, n]));
    expect(Object.keys(byId).sort()).toEqual(['note', 'start', 'wait', 'wait_2', 'wait_3']);
    expect(byId['wait_2']?.data['arguments']).toEqual({ ms: 0, value: '{{node.wait.result}}' });
    expect(byId['wait_3']?.data['arguments']).toEqual({ ms: 0, value: 'got {{node.wait_2.result}}' });
    expect(byId['note']?.data['text']).toBe('binds wait → wait_2 → wait_3');
    expect(w.graph.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual([
      'wait>wait_2',
      'wait_2>wait_3',
    ]);
    await screenshot(page, 'flow-built');

    const before = await positions(page);
    await page.reload();
    await page.locator('.react-flow__node-start').waitFor();
    await page.locator('.react-flow__node-note').waitFor();
    expect(await positions(page)).toEqual(before);
    for (const n of w.graph.nodes) expect(before[n.id]).toEqual(n.position);
    expect(await page.getByLabel('Note').inputValue()).toBe('binds wait → wait_2 → wait_3');
    await expect(page.getByRole('button', { name: 'Save', exact: true }).isDisabled()).resolves.toBe(true);
    expect((await stored(id)).graph).toEqual(w.graph);
  });

  it('undoes 50 edits back to the empty canvas and redoes them; the 51st undo does nothing', async () => {
    const page = await openFlow('/flows/new');
    const wait = await paletteItem(page, 'wait');
    for (let i = 0; i < 50; i++) await wait.click();
    await waitFor(async () => (await page.locator('.react-flow__node-tool').count()) === 50, 60_000);
    for (let i = 0; i < 50; i++) await page.keyboard.press('Control+z');
    await waitFor(async () => (await page.locator('.react-flow__node-tool').count()) === 0, 60_000);
    const undo = page.getByRole('button', { name: 'Undo', exact: true });
    expect(await undo.isDisabled()).toBe(true);
    await page.keyboard.press('Control+z');
    expect(await nodeIds(page)).toEqual(['start']);
    await screenshot(page, 'flow-undone');
    for (let i = 0; i < 50; i++) await page.keyboard.press('Control+Shift+z');
    await waitFor(async () => (await page.locator('.react-flow__node-tool').count()) === 50, 60_000);
    expect(await page.getByRole('button', { name: 'Redo', exact: true }).isDisabled()).toBe(true);
    // The toolbar's buttons do the same as the keys.
    await undo.click();
    expect(await page.locator('.react-flow__node-tool').count()).toBe(49);

    // A drag moves the card under the pointer on every frame and is one undo step when it ends.
    const top = (await nodeIds(page)).filter((id) => id !== 'start').at(-1) as string;
    const box = await card(page, top).boundingBox();
    if (!box) throw new Error('the card is not drawn');
    const from = (await positions(page))[top];
    // Dragging a card that is not selected clears the others' selection as it starts, and the
    // canvas shows that while the card moves, not only once it is dropped.
    const other = (await nodeIds(page)).find((id) => id !== 'start' && id !== top) as string;
    await card(page, other).click();
    await waitFor(async () => /\bselected\b/.test((await card(page, other).getAttribute('class')) ?? ''));
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 + 120, box.y + box.height / 2 + 90, { steps: 12 });
    await waitFor(async () => !/\bselected\b/.test((await card(page, other).getAttribute('class')) ?? ''));
    await page.mouse.up();
    const to = (await positions(page))[top];
    expect(to?.x).toBeGreaterThan(from?.x ?? Infinity);
    expect(to?.y).toBeGreaterThan(from?.y ?? Infinity);
    await page.keyboard.press('Control+z');
    await waitFor(async () => (await positions(page))[top]?.x === from?.x);
    expect((await positions(page))[top]).toEqual(from);
    expect(await page.locator('.react-flow__node-tool').count()).toBe(49);
    await page.keyboard.press('Control+Shift+z');
    await waitFor(async () => (await positions(page))[top]?.x === to?.x);
  });

  it('flags an unknown reference before saving, and shows the server refusing an undeclared input on its node', async () => {
    const page = await openFlow('/flows/new');
    await (await paletteItem(page, 'wait')).click();
    await card(page, 'wait').click();
    await page.locator('.flow-side .input-field[data-arg="ms"] input').fill('0');
    const value = page.locator('.flow-side .input-field[data-arg="value"]');
    await value.getByRole('radio', { name: 'Expression' }).click();
    await value.locator('textarea').fill('x {{node.ghost.result}}');
    await value.getByText('{{node.ghost.result}}: no tool node with that id can feed this one').waitFor();
    await card(page, 'wait').locator('.flow-node-issue').waitFor();
    expect(await page.getByRole('button', { name: /Run/ }).isDisabled()).toBe(true);
    await screenshot(page, 'flow-unknown-reference');

    // An input the start node does not declare: the server refuses the save and says where.
    await value.locator('textarea').fill('{{inputs.x}}');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page
      .getByText(/validation_failed|does not validate|not declared|undeclared/i)
      .first()
      .waitFor();
    const issue = card(page, 'wait').locator('.flow-node-issue');
    await issue.waitFor();
    expect(await issue.textContent()).toContain('inputs.x');
    expect(await value.locator('.field-error').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining('inputs.x')]),
    );
    expect(page.url()).toMatch(/\/flows\/new$/);
    await screenshot(page, 'flow-server-refusal');
  });

  it('two tabs edit one flow: the second save gets the conflict dialog and loses nothing', async () => {
    const id = await create({
      name: 'shared',
      graph: { nodes: [START, waitNode('a', 300, 0, 1)], edges: [] },
    });
    const one = await openFlow(`/flows/${id}`);
    const two = await openFlow(`/flows/${id}`);
    await one.getByLabel('Flow name').fill('shared (tab one)');
    await one.getByRole('button', { name: 'Save', exact: true }).click();
    await saved(one, 2);

    await two.getByLabel('Flow name').fill('shared (tab two)');
    await two.getByRole('button', { name: 'Save', exact: true }).click();
    const dialog = two.getByRole('dialog', { name: 'Someone else saved this flow' });
    await dialog.waitFor();
    await screenshot(two, 'flow-conflict');
    await dialog.getByRole('button', { name: 'Save mine as a copy' }).click();
    await two.waitForURL((u) => /\/flows\/[0-9a-f-]{36}$/.test(u.pathname) && !u.pathname.endsWith(id));
    const copy = await stored(flowIdOf(two));
    expect(copy.name).toContain('shared (tab two)');
    expect(copy.graph.nodes.map((n) => n.id).sort()).toEqual(['a', 'start']);
    const original = await stored(id);
    expect(original.name).toBe('shared (tab one)');
    expect(original.revision).toBe(2);
  });

  it('publishes, edits, publishes again and restores version 1; the catalog runs version 2 until the restore is published', async () => {
    const id = await create({
      name: 'versions',
      graph: { nodes: [START, waitNode('a', 300, 0, 'first')], edges: [] },
    });
    const page = await openFlow(`/flows/${id}`);
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByTestId('save-state').filter({ hasText: 'Published v1' }).waitFor();
    expect(await runToolResult(id)).toContain('first');

    await card(page, 'a').click();
    await page.locator('.flow-side .input-field[data-arg="value"] input').fill('second');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByTestId('save-state').filter({ hasText: 'Published v2' }).waitFor();
    expect(await runToolResult(id)).toContain('second');

    await page.getByRole('button', { name: 'Settings & versions' }).click();
    await page.getByRole('button', { name: 'Restore version 1 into the draft' }).click();
    await waitFor(async () => JSON.stringify((await stored(id)).graph).includes('first'), 60_000);
    await screenshot(page, 'flow-versions');
    await page.keyboard.press('Escape');
    await card(page, 'a').click();
    expect(await page.locator('.flow-side .input-field[data-arg="value"] input').inputValue()).toBe('first');
    // The draft is version 1 again; the catalog still serves version 2 until it is published.
    expect(await runToolResult(id)).toContain('second');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByTestId('save-state').filter({ hasText: 'Published v3' }).waitFor();
    expect(await runToolResult(id)).toContain('first');
  });

  it('runs from the dialog (a missing input named first), shows badges going done, and serves a pinned step', async () => {
    const id = await create({
      name: 'greeter',
      inputSchema: {
        type: 'object',
        properties: { who: { type: 'string', title: 'Who' } },
        required: ['who'],
      },
      graph: {
        nodes: [
          START,
          waitNode('a', 300, 0, 'hello {{inputs.who}}'),
          waitNode('b', 600, 0, '{{node.a.result}}'),
        ],
        edges: [
          { source: 'start', target: 'a' },
          { source: 'a', target: 'b' },
        ],
      },
    });
    const page = await openFlow(`/flows/${id}`);
    await page.getByRole('button', { name: /Run/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByTestId('missing-inputs').filter({ hasText: 'Who' }).waitFor();
    expect(await dialog.getByRole('button', { name: 'Start' }).isDisabled()).toBe(true);
    await dialog.getByLabel(/Who/).fill('ada');
    await dialog.getByRole('button', { name: 'Start' }).click();
    await card(page, 'b').locator('.flow-node[data-status="completed"]').waitFor();
    expect(await card(page, 'a').locator('.flow-node').getAttribute('data-status')).toBe('completed');
    await page.locator('.flow-dock li[data-step-id="a"]').getByText('hello ada').first().waitFor();
    await screenshot(page, 'flow-run-done');

    // Pin a's real result: the next run serves it instead of calling the tool.
    await page
      .locator('.flow-dock li[data-step-id="a"]')
      .getByRole('button', { name: /Pin result/ })
      .click();
    await card(page, 'a')
      .getByLabel(/Pinned/)
      .waitFor();
    await page.getByRole('button', { name: /Run/ }).click();
    await page.getByRole('dialog').getByLabel(/Who/).fill('bob');
    await page.getByRole('dialog').getByRole('button', { name: 'Start' }).click();
    await card(page, 'a').locator('.flow-node[data-status="pinned"]').waitFor();
    await card(page, 'b').locator('.flow-node[data-status="completed"]').waitFor();
    const w = await stored(id);
    expect(w.graph.nodes.find((n) => n.id === 'a')?.data['pinned']).toEqual({ result: 'hello ada' });
    // b received the pinned value, not one made with the new input.
    await page.locator('.flow-dock li[data-step-id="b"]').getByText('hello ada').first().waitFor();
    await screenshot(page, 'flow-run-pinned');
  });

  it('runs with a picked file, a shared folder and a dropdown its list tool fills; narrow and in Chinese too', async () => {
    const id = await create({
      name: 'report',
      inputSchema: {
        type: 'object',
        properties: {
          book: { type: 'string', title: 'Workbook', format: 'switchyard-file' },
          out: { type: 'string', title: 'Output folder', 'x-switchyard-auto': 'shared-directory' },
          account: {
            type: 'string',
            title: 'Account',
            'x-switchyard-enum': {
              tool: 'wait',
              arguments: {
                ms: 0,
                value: [
                  { id: 'a1', email: 'alice@example.com' },
                  { id: 'a2', email: 'bob@example.com' },
                ],
              },
              valueField: 'id',
              labelField: 'email',
            },
          },
        },
        required: ['book', 'account'],
      },
      graph: {
        nodes: [
          START,
          {
            id: 'read',
            type: 'tool',
            position: { x: 300, y: 0 },
            data: { tool: 'read_file', arguments: { filePath: '{{inputs.book}}' } },
          },
          waitNode('pick', 600, 0, '{{inputs.account}}'),
        ],
        edges: [
          { source: 'start', target: 'read' },
          { source: 'read', target: 'pick' },
        ],
      },
    });
    const page = await openFlow(`/flows/${id}`);
    await page.getByRole('button', { name: /Run/ }).click();
    const dialog = page.getByRole('dialog');
    // The dropdown is filled by its list tool; the shared folder needs nothing.
    await dialog
      .getByLabel(/Account/)
      .locator('option', { hasText: 'bob@example.com' })
      .waitFor({ state: 'attached' });
    await dialog.getByText("A fresh folder is made for this run's output; nothing to fill in.").waitFor();
    await dialog.getByLabel(/Workbook/).setInputFiles({
      name: 'q3.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('north,12\nsouth,7\n'),
    });
    await dialog.getByTestId('uploaded-file').filter({ hasText: 'q3.txt' }).waitFor();
    await dialog.getByLabel(/Account/).selectOption({ label: 'bob@example.com' });
    await screenshot(page, 'flow-run-files');
    await dialog.getByRole('button', { name: 'Start' }).click();
    await card(page, 'pick').locator('.flow-node[data-status="completed"]').waitFor();
    // The step read the uploaded bytes through its grant; the dropdown sent the value, not the label.
    await page.locator('.flow-dock li[data-step-id="read"]').getByText('north,12').first().waitFor();
    await page.locator('.flow-dock li[data-step-id="pick"]').getByText('a2').first().waitFor();

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('button', { name: /运行/ }).first().click();
    await page
      .getByRole('dialog')
      .locator('select option', { hasText: 'alice@example.com' })
      .first()
      .waitFor({
        state: 'attached',
      });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'flow-run-files-narrow-zh');
  });

  it('copies a subgraph into another flow and lays out a 64-step plan saved without positions', async () => {
    const from = await create({
      name: 'source',
      graph: {
        nodes: [START, waitNode('a', 300, 0, 1), waitNode('b', 600, 0, '{{node.a.result}}')],
        edges: [{ source: 'a', target: 'b' }],
      },
    });
    const to = await create({
      name: 'target',
      graph: { nodes: [START, waitNode('c', 300, 200, 2)], edges: [] },
    });
    const page = await openFlow(`/flows/${from}`);
    await card(page, 'a').click();
    await card(page, 'b').click({ modifiers: ['Shift'] });
    await page.keyboard.press('Control+c');
    await openFlow(`/flows/${to}`, page);
    await page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+v');
    await waitFor(async () => (await nodeIds(page)).length === 4, 60_000);
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await saved(page, 2);
    const target = await stored(to);
    expect(target.graph.nodes.map((n) => n.id).sort()).toEqual(['a', 'b', 'c', 'start']);
    expect(target.graph.edges.map((e) => `${e.source}>${e.target}`)).toEqual(['a>b']);
    expect(target.graph.nodes.find((n) => n.id === 'b')?.data['arguments']).toEqual({
      ms: 0,
      value: '{{node.a.result}}',
    });

    // The clipboard is the owner's: signing out forgets it, and a clip left by another owner is
    // not pasted (put back here as if the sign-out had not happened).
    type Storage = {
      localStorage: { getItem(k: string): string | null; setItem(k: string, v: string): void };
    };
    const KEY = 'switchyard.flow-clipboard';
    const alicesClip = await page.evaluate(
      (k) => (globalThis as unknown as Storage).localStorage.getItem(k),
      KEY,
    );
    expect(alicesClip).toContain('"nodes"');
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(
      await page.evaluate((k) => (globalThis as unknown as Storage).localStorage.getItem(k), KEY),
    ).toBeNull();
    await signIn(page, `${base}/flows/new`, bob);
    await page.locator('.react-flow__node-start').waitFor();
    await page.evaluate(
      ([k, v]) => (globalThis as unknown as Storage).localStorage.setItem(k as string, v as string),
      [KEY, alicesClip],
    );
    await page.locator('.react-flow__pane').click({ position: { x: 20, y: 20 } });
    await page.keyboard.press('Control+v');
    await page.getByRole('button', { name: 'Paste' }).click();
    expect(await nodeIds(page)).toEqual(['start']);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn(page, `${base}/flows`, alice);

    // A plan made by a model or the API has no layout: it opens laid out, levels left to right.
    const steps = Array.from({ length: 64 }, (_, i) => ({
      id: `s${i}`,
      tool: 'wait',
      arguments: { ms: 0, value: i },
      dependsOn: i >= 8 ? [`s${i - 8}`] : [],
    }));
    const planned = await create({ name: 'imported plan', plan: { steps } });
    await openFlow(`/flows/${planned}`, page);
    await waitFor(async () => (await page.locator('.react-flow__node-tool').count()) === 64, 60_000);
    const at = await positions(page);
    const spots = new Set(Object.values(at).map((p) => `${p?.x},${p?.y}`));
    expect(spots.size).toBe(65);
    for (const s of steps)
      for (const d of s.dependsOn) expect(at[s.id]?.x).toBeGreaterThan(at[d]?.x as number);
    await screenshot(page, 'flow-imported-plan');
    await page.getByRole('button', { name: 'Auto-layout' }).click();
    expect(await positions(page)).toEqual(at);
  });

  it('asks before leaving with unsaved edits', async () => {
    const id = await create({
      name: 'careful',
      graph: { nodes: [START, waitNode('a', 300, 0, 1)], edges: [] },
    });
    const page = await openFlow(`/flows/${id}`);
    await page.getByLabel('Flow name').fill('careful, edited');
    await page.getByRole('link', { name: 'Runs' }).click();
    const prompt = page.getByRole('dialog', { name: 'Leave without saving?' });
    await prompt.waitFor();
    await screenshot(page, 'flow-leave-guard');
    await prompt.getByRole('button', { name: 'Stay' }).click();
    expect(page.url()).toMatch(new RegExp(`/flows/${id}$`));
    expect(await page.getByLabel('Flow name').inputValue()).toBe('careful, edited');

    // Closing the tab asks through the browser's own prompt.
    let asked = '';
    page.once('dialog', (d) => {
      asked = d.type();
      void d.dismiss();
    });
    await page.close({ runBeforeUnload: true });
    await waitFor(async () => asked !== '', 60_000);
    expect(asked).toBe('beforeunload');

    const again = await openFlow(`/flows/${id}`);
    await again.getByLabel('Flow name').fill('careful, edited twice');
    await again.getByRole('link', { name: 'Runs' }).click();
    await again
      .getByRole('dialog', { name: 'Leave without saving?' })
      .getByRole('button', { name: 'Leave and discard' })
      .click();
    await again.waitForURL(/\/runs$/);
    expect((await stored(id)).name).toBe('careful');
  });
});
