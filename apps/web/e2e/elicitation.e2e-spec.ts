import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { RunDetail } from '@switchyard/contracts';
import { FakeLlmServer, Platform, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

const FIXTURE = join(__dirname, '..', '..', '..', 'libs', 'testing', 'fixtures', 'elicit', 'server.mjs');

const oneStep = (tool: string) => ({
  goal: 'Sign up for the newsletter',
  workflow: { steps: [{ id: 'ask', tool, arguments: { reason: 'Tell us who you are' } }] },
  config: { planApproval: false, permissionMode: 'full-access' },
});

/**
 * A person answers an MCP server's input request in a real browser (Debian's Chromium) against the
 * whole platform and a real stdio server asking through the SDK's `elicitInput`: the form generated
 * from the requested schema in the run panel (defaults pre-filled, choices as selects and checkboxes,
 * required fields and formats checked before anything is sent), its answer completing the step; in
 * Chinese on a narrow window; and a URL request answered from the inbox. Screenshots under
 * test-results/screenshots.
 */
jest.setTimeout(120_000);

describe('MCP input requests in the web console (browser)', () => {
  let platform: Platform;
  let llm: FakeLlmServer;
  let browser: Browser;
  let context: BrowserContext;
  let alice: string;
  const problems: PageProblems[] = [];

  const detail = async (runId: string) =>
    RunDetail.parse((await platform.call('GET', `/api/agent/runs/${runId}`, alice)).json);
  const finished = (runId: string) =>
    waitFor(async () => {
      const d = await detail(runId);
      return d.status === 'completed' || d.status === 'failed' || d.status === 'cancelled' ? d : undefined;
    });
  const resultOf = (d: RunDetail) => d.events.find((e) => e.type === 'step_complete')?.data;
  const signedIn = async (path: string, viewport?: { width: number; height: number }): Promise<Page> => {
    const { page, problems: p } = await openPage(context, viewport);
    problems.push(p);
    await signIn(page, `${platform.url}${path}`, alice);
    return page;
  };
  /** Nothing is wider than the window: no sideways scrolling. */
  const fitsWidth = async (page: Page, width: number) =>
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(width);

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    platform = await Platform.start('web-elicit', {
      MCP_HANDSHAKE_TIMEOUT_MS: '30000',
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
    const rec = await platform.call('POST', '/mcp/tool', platform.admin, {
      name: 'forms',
      type: 'LOCAL',
      configJson: JSON.stringify({ command: process.execPath, args: [FIXTURE] }),
    });
    expect(rec.status).toBe(201);
    const tested = await platform.call('POST', `/mcp/tool/${String(rec.json['id'])}/test`, platform.admin);
    expect(tested.json).toMatchObject({ success: true });
    alice = await platform.token('alice');
    browser = await launchChromium();
  }, 300_000);

  beforeEach(async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(60_000);
  });

  afterEach(async () => {
    await context?.close();
    const seen = problems.splice(0).flatMap((p) => p.errors);
    expect(seen).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await llm?.close();
  });

  it('answers the form in the run panel: defaults pre-filled, required fields checked, the step completes', async () => {
    const runId = await platform.startRun(oneStep('mcp__forms__ask_profile'), alice);
    const page = await signedIn(`/runs/${runId}`);
    const form = page.getByTestId('input-request');
    await form.waitFor();
    await page.getByTestId('step-waiting-input').waitFor();
    expect(await page.getByTestId('input-message').textContent()).toBe('Tell us who you are');
    // The fields in the server's order, its defaults pre-filled.
    expect(
      await form.locator('[data-field]').evaluateAll((els) => els.map((e) => e.getAttribute('data-field'))),
    ).toEqual(['name', 'email', 'age', 'score', 'color', 'plan', 'toppings', 'subscribe', 'birthday']);
    expect(await form.getByLabel('Age').inputValue()).toBe('30');
    expect(await form.getByLabel('Colour').inputValue()).toBe('green');
    expect(await form.getByLabel('Plan').inputValue()).toBe('free');
    expect(await form.getByRole('checkbox', { name: 'cheese' }).isChecked()).toBe(true);
    expect(await form.getByRole('checkbox', { name: 'Subscribe to news' }).isChecked()).toBe(true);
    expect(await form.getByLabel('Birthday').getAttribute('type')).toBe('date');
    await screenshot(page, 'input-form-en-wide');

    // Submitting with the required fields empty sends nothing: each says what is wrong.
    await form.getByRole('button', { name: 'Submit' }).click();
    await form.getByText('Required.').first().waitFor();
    expect(await form.locator('.field-error').allTextContents()).toEqual(['Required.', 'Required.']);
    // The person is taken to the first field to fix.
    expect(await page.evaluate('document.activeElement?.getAttribute("data-field")')).toBe('name');
    await form.getByLabel('Your name').fill('A');
    await form.getByLabel('Email').fill('not an email');
    await form.getByRole('checkbox', { name: 'olives' }).check();
    await form.getByRole('checkbox', { name: 'basil' }).check();
    expect(await form.locator('.field-error').allTextContents()).toEqual([
      'At least 2 characters.',
      'Enter an email address.',
      'Pick at most 2.',
    ]);
    await screenshot(page, 'input-form-en-errors');
    await page.setViewportSize({ width: 390, height: 844 });
    await fitsWidth(page, 390);
    await screenshot(page, 'input-form-en-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });

    await form.getByLabel('Your name').fill('Ada');
    await form.getByRole('checkbox', { name: 'cheese' }).uncheck();
    await form.getByLabel('Plan').selectOption({ label: 'Professional' });
    await form.getByLabel('Birthday').fill('1815-12-10');
    await form.getByLabel('Email').fill('ada@example.com');
    // From the keyboard: Enter in a field submits the form.
    await form.getByLabel('Email').press('Enter');
    await page.getByTestId('run-result').waitFor();
    expect(await page.getByTestId('input-request').count()).toBe(0);
    const done = await finished(runId);
    expect(done.status).toBe('completed');
    expect(resultOf(done)).toMatchObject({
      result: {
        action: 'accept',
        content: {
          name: 'Ada',
          email: 'ada@example.com',
          age: 30,
          score: 7.5,
          color: 'green',
          plan: 'pro',
          toppings: ['olives', 'basil'],
          subscribe: true,
          birthday: '1815-12-10',
        },
      },
    });
    await screenshot(page, 'input-form-answered');
  });

  it('shows the form in Chinese on a narrow window and on a wide one, and declines from it', async () => {
    const runId = await platform.startRun(oneStep('mcp__forms__ask_profile'), alice);
    const page = await signedIn(`/runs/${runId}`, { width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    const form = page.getByTestId('input-request');
    await form.getByRole('heading', { name: 'forms 需要你的输入' }).waitFor();
    await form.getByRole('button', { name: '提交' }).click();
    await form.getByText('必填。').first().waitFor();
    await fitsWidth(page, 390);
    await screenshot(page, 'input-form-zh-narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: '切换主题' }).click();
    await screenshot(page, 'input-form-zh-wide-light');
    await form.getByRole('button', { name: '拒绝' }).click();
    const done = await finished(runId);
    expect(resultOf(done)).toMatchObject({ result: { action: 'decline' } });
  });

  it("answers a tool's question in the chat, after confirming the call", async () => {
    llm.enqueue(
      { toolCalls: [{ name: 'mcp__forms__ask_profile', arguments: { reason: 'Who should I sign up?' } }] },
      { content: 'You are signed up, Ada.' },
    );
    const page = await signedIn('/chat');
    await page.getByRole('heading', { name: 'Start a chat' }).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Sign me up for the newsletter');
    await page.keyboard.press('Enter');
    // An external tool asks first (the session's "ask" mode); then its server asks for the profile.
    const card = page.getByTestId('approval-card');
    await card.getByRole('button', { name: 'Approve' }).click();
    const form = page.getByTestId('input-request');
    await form.waitFor();
    expect(await form.getByTestId('input-message').textContent()).toBe('Who should I sign up?');
    expect(await page.locator('.chat-working').count()).toBe(0);
    await form.getByLabel('Your name').fill('Ada');
    await form.getByLabel('Email').fill('ada@example.com');
    await screenshot(page, 'input-form-chat');
    await form.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('list', { name: 'Conversation' }).getByText('You are signed up, Ada.').waitFor();
    expect(await page.getByTestId('input-request').count()).toBe(0);
    const [, second] = llm.requests.slice(-2);
    expect(JSON.stringify(second?.messages)).toContain('ada@example.com');
  });

  it('answers a URL request from the inbox: the link opens in a new tab, never fetched here', async () => {
    const runId = await platform.startRun(oneStep('mcp__forms__ask_link'), alice);
    await waitFor(async () => (await detail(runId)).inputRequests?.length);
    const page = await signedIn('/inbox');
    const item = page.getByTestId('inbox-input');
    await item.waitFor();
    const link = item.getByTestId('input-url');
    expect(await link.getAttribute('href')).toBe('https://provider.example/connect?session=fixture');
    expect(await link.getAttribute('target')).toBe('_blank');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await item.getByTestId('input-url-host').textContent()).toBe('provider.example');
    await screenshot(page, 'input-url-inbox');
    await item.getByRole('button', { name: 'I have done it' }).click();
    await waitFor(async () => (await page.getByTestId('inbox-input').count()) === 0);
    const done = await finished(runId);
    expect(resultOf(done)).toMatchObject({ result: { action: 'accept' } });
  });
});
