import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FakeLlmServer, Platform } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

/**
 * The flow builder's docked assistant in a real browser against the whole platform, the model being
 * the fake OpenAI-compatible server scripted per test: an edit proposed by the model drawn as a diff
 * on the canvas, applied and saved at the next revision and undone; a proposal gone stale because
 * the person edited the canvas; `run_current_flow` refused on an invalid canvas (after its
 * confirmation card); a narrow window in Chinese. Each test leaves a screenshot.
 */
// A browser, five services and a scripted model on a busy 2-core machine: generous bounds, never speed.
jest.setTimeout(180_000);

type Graph = {
  nodes: { id: string; type: string; position?: { x: number; y: number }; data: Record<string, unknown> }[];
  edges: { id?: string; source: string; target: string }[];
};

const INPUTS = { type: 'object', properties: {} };
const START = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: {} };
const A = { id: 'a', type: 'tool', position: { x: 320, y: 0 }, data: { tool: 'wait', arguments: { ms: 0 } } };
const addAfterA = (id: string, summary: string) => ({
  mode: 'edit',
  summary,
  ops: [
    { op: 'add_node', node: { id, type: 'tool', data: { tool: 'wait', arguments: { ms: 1 } } } },
    { op: 'add_edge', source: 'a', target: id },
  ],
});

describe('flow assistant (browser)', () => {
  const problems: PageProblems[] = [];
  let llm: FakeLlmServer;
  let platform: Platform;
  let alice: string;
  let browser: Browser;
  let context: BrowserContext | undefined;

  /** The workflow as the server holds it. */
  const stored = async (id: string) => {
    const res = await platform.call('GET', `/api/workflows/${id}`, alice);
    expect(res.status).toBe(200);
    return res.json as { revision: number; graph: Graph };
  };
  /**
   * Saves a flow `start → a` called `name`, scripts the model's replies and opens the flow in the
   * builder (a fresh browser context, at 1280×800 unless `viewport` says otherwise).
   */
  const openFlow = async (
    name: string,
    replies: Parameters<FakeLlmServer['enqueue']>,
    viewport?: { width: number; height: number },
  ): Promise<{ id: string; page: Page }> => {
    const graph: Graph = { nodes: [START, A], edges: [{ source: 'start', target: 'a' }] };
    const made = await platform.call('POST', '/api/workflows', alice, { name, graph, inputSchema: INPUTS });
    expect(made.status).toBe(201);
    const id = made.json['id'] as string;
    llm.enqueue(...replies);
    context = await browser.newContext();
    context.setDefaultTimeout(60_000);
    const { page, problems: p } = await openPage(context, viewport);
    problems.push(p);
    await signIn(page, `${platform.url}/flows/${id}`, alice);
    await page.locator('.react-flow__node-start').waitFor();
    return { id, page };
  };
  const card = (page: Page, id: string) => page.locator(`.react-flow__node[data-id="${id}"]`);
  const saved = (page: Page, revision: number) =>
    page
      .getByTestId('save-state')
      .filter({ hasText: `revision ${revision}` })
      .waitFor();
  /** Opens the docked assistant and sends `message` (the first one makes the session). */
  const ask = async (page: Page, message: string, open = 'Assistant', box = 'Message') => {
    const panel = page.getByTestId('assistant-panel');
    if (!(await panel.isVisible())) await page.getByRole('button', { name: open, exact: true }).click();
    await panel.getByRole('textbox', { name: box }).fill(message);
    await page.keyboard.press('Enter');
    return panel;
  };

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    const model = { LLM_PROVIDER: 'openai', LLM_MODEL: 'fake', LLM_BASE_URL: llm.baseUrl };
    [platform, browser] = await Promise.all([Platform.start('assistweb', model), launchChromium()]);
    alice = await platform.token('alice');
  });

  afterEach(async () => {
    await context?.close();
    // No page threw or was refused by the Content-Security-Policy; the test used every reply it scripted.
    const errors = problems.splice(0).flatMap((p) => p.errors);
    expect({ errors, unusedReplies: llm.pending }).toEqual({ errors: [], unusedReplies: 0 });
  });

  afterAll(async () => {
    await Promise.all([browser?.close(), platform?.stop(), llm?.close()]);
  });

  it("draws the model's edit as a diff on the canvas; Apply and save saves the next revision; Ctrl+Z undoes it", async () => {
    const { id, page } = await openFlow('Greeter', [
      { toolCalls: [{ name: 'edit_current_flow', arguments: addAfterA('b', 'wait once more after a') }] },
      { content: 'I proposed a second wait after a: review it on the canvas.' },
    ]);
    const panel = await ask(page, 'Add a second wait after a');
    // The proposal is drawn on the canvas: b added, nothing saved yet.
    const bar = page.getByTestId('proposal-bar');
    await bar.getByText('wait once more after a').waitFor();
    await card(page, 'b').and(page.locator('.diff-added')).waitFor();
    await panel.getByText('I proposed a second wait after a').waitFor();
    await screenshot(page, 'assistant-proposal');
    expect((await stored(id)).revision).toBe(1);
    // The model was offered the assistant's tools and sent the canvas.
    const offered = JSON.stringify(llm.requests[0]?.tools);
    for (const tool of [
      'inspect_current_flow',
      'diagnose_current_flow',
      'edit_current_flow',
      'run_current_flow',
    ])
      expect(offered).toContain(tool);

    await bar.getByRole('button', { name: 'Apply and save' }).click();
    await saved(page, 2);
    await bar.waitFor({ state: 'detached' });
    const after = await stored(id);
    expect(after.revision).toBe(2);
    expect(after.graph.nodes.map((n) => n.id).sort()).toEqual(['a', 'b', 'start']);
    expect(after.graph.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual(['a>b', 'start>a']);
    await screenshot(page, 'assistant-applied');

    // Applying was one step of the undo history.
    await page.locator('.react-flow__pane').click();
    await page.keyboard.press('Control+z');
    await card(page, 'b').waitFor({ state: 'detached' });
    await page.getByTestId('save-state').filter({ hasText: 'Unsaved changes' }).waitFor();
  });

  it('refuses a proposal made before the person edited the canvas, as stale', async () => {
    const { id, page } = await openFlow('Stale', [
      { toolCalls: [{ name: 'edit_current_flow', arguments: addAfterA('c', 'add c after a') }] },
      { content: 'Proposed c.' },
    ]);
    await ask(page, 'Add c after a');
    const bar = page.getByTestId('proposal-bar');
    await bar.getByText('add c after a').waitFor();
    // The person changes the canvas meanwhile.
    await page.getByRole('button', { name: 'Sticky note' }).click();
    await bar.getByRole('button', { name: 'Apply and save' }).click();
    await bar
      .getByRole('alert')
      .filter({ hasText: 'The canvas changed since this proposal was made' })
      .waitFor();
    await screenshot(page, 'assistant-stale');
    // Nothing was saved; the proposal stays for review.
    expect((await stored(id)).revision).toBe(1);
    await card(page, 'c').waitFor();
  });

  it('asks before run_current_flow, and shows its refusal when the canvas is not valid', async () => {
    const { id, page } = await openFlow('Broken', [
      { toolCalls: [{ name: 'run_current_flow', arguments: {} }] },
      { content: 'The flow is not valid yet, so it did not run.' },
    ]);
    // A new `wait` card lacks its required `ms`: the canvas (unsaved) does not validate. (The page's
    // CSP keeps the browser from checking tool arguments; the server's diagnosis does.)
    await page.locator('.flow-palette [data-tool="wait"]').click();
    await card(page, 'wait').waitFor();
    const panel = await ask(page, 'Run it');
    // An external-effect call in "ask" mode waits for the person.
    const confirm = panel.getByTestId('approval-card');
    await confirm.waitFor();
    await screenshot(page, 'assistant-run-card');
    await confirm.getByRole('button', { name: 'Approve' }).click();
    const row = panel.getByRole('button', { name: 'Tool call run_current_flow: failed' });
    await row.click();
    await panel.getByTestId('call-error').filter({ hasText: 'cannot run' }).waitFor();
    await panel.getByText('The flow is not valid yet, so it did not run.').waitFor();
    await screenshot(page, 'assistant-run-refused');
    expect((await stored(id)).revision).toBe(1);
  });

  it('run_current_flow saves the proposed edits at the next revision; the page reloads them and shows the run', async () => {
    const { id, page } = await openFlow('Runner', [
      { toolCalls: [{ name: 'edit_current_flow', arguments: addAfterA('b', 'add b after a') }] },
      { toolCalls: [{ name: 'run_current_flow', arguments: {} }] },
      { content: 'Saved and started.' },
    ]);
    const panel = await ask(page, 'Add b after a and run it');
    const confirm = panel.getByTestId('approval-card');
    await confirm.waitFor();
    await confirm.getByRole('button', { name: 'Approve' }).click();
    await panel.getByText('Saved and started.').waitFor();
    // The page took the saved flow: b is a card of its own now, not a proposal.
    await saved(page, 2);
    await page.getByTestId('proposal-bar').waitFor({ state: 'detached' });
    await card(page, 'b').waitFor();
    expect(await card(page, 'b').getAttribute('class')).not.toContain('diff-added');
    expect((await stored(id)).graph.nodes.map((n) => n.id).sort()).toEqual(['a', 'b', 'start']);
    // The run it started shows in the run dock.
    await page.locator('.flow-dock li[data-step-id="b"]').waitFor();
    await screenshot(page, 'assistant-saved-run');
  });

  it('works on a narrow window, in Chinese', async () => {
    const { page } = await openFlow('窄窗口', [{ content: '这个流程只有一个等待步骤。' }], {
      width: 390,
      height: 844,
    });
    await page.getByRole('button', { name: '中文' }).click();
    const panel = await ask(page, '这个流程做什么？', '助手', '消息');
    await panel.getByRole('heading', { name: '流程助手' }).waitFor();
    await panel.getByText('这个流程只有一个等待步骤。').waitFor();
    // Nothing is wider than the window: no sideways scrolling.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'assistant-narrow-zh');
    // Escape hides the panel; the builder is usable again.
    await panel.getByRole('textbox', { name: '消息' }).press('Escape');
    await panel.waitFor({ state: 'hidden' });
  });
});
