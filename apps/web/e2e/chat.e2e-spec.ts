import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ChatSessionDetail } from '@switchyard/contracts';
import { FakeLlmServer, Platform, TcpProxy, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

/**
 * The chat page in a real browser (Debian's Chromium) against the whole platform, the model being
 * the fake OpenAI-compatible server scripted per test: a streamed answer, a tool call folded with
 * its result, a confirmation card approved with edited arguments, cancel mid-call, a dropped
 * connection resumed, a narrow window in Chinese. Each test leaves a screenshot under
 * test-results/screenshots.
 *
 * Pending until the chat server is merged (the lead renames it to chat.e2e-spec.ts): written
 * against the pinned contract (libs/contracts/src/chat.ts) and the fake model's scripting API.
 */
// A browser, five services and a scripted model on a busy 2-core machine: generous bounds, never speed.
jest.setTimeout(120_000);

const SESSION_URL = /\/chat\/([0-9a-f-]{36})$/;

describe('chat page (browser)', () => {
  let platform: Platform;
  let llm: FakeLlmServer;
  let browser: Browser;
  let context: BrowserContext;
  let workspace: string;
  let alice: string;
  let base: string;
  /** The browser reaches the gateway through this proxy, so a test can cut its connections. */
  let network: TcpProxy;
  const problems: PageProblems[] = [];

  const detail = async (id: string) =>
    ChatSessionDetail.parse((await platform.call('GET', `/api/chat/sessions/${id}`, alice)).json);

  const signedIn = async (path = '/chat', viewport?: { width: number; height: number }): Promise<Page> => {
    const { page, problems: p } = await openPage(context, viewport);
    problems.push(p);
    await signIn(page, `${base}${path}`, alice);
    return page;
  };

  /** Starts a chat from the new-chat panel with its first message; answers the session's id. */
  const startChat = async (page: Page, message: string): Promise<string> => {
    await page.getByRole('heading', { name: 'Start a chat' }).waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill(message);
    await page.keyboard.press('Enter');
    await page.waitForURL(SESSION_URL);
    const id = SESSION_URL.exec(page.url())?.[1];
    if (!id) throw new Error(`no session id in ${page.url()}`);
    return id;
  };

  /** The tool-call row of `tool` comes to show `status` (its accessible name says both). */
  const callRow = (page: Page, tool: string, status: string | RegExp) =>
    page.getByRole('button', {
      name:
        typeof status === 'string'
          ? `Tool call ${tool}: ${status}`
          : new RegExp(`^Tool call ${tool}: ${status.source}$`),
    });

  beforeAll(async () => {
    llm = await FakeLlmServer.start();
    workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sy-chat-web-')));
    platform = await Platform.start('chatweb', {
      WORKSPACE_DIR: workspace,
      LLM_PROVIDER: 'openai',
      LLM_MODEL: 'fake',
      LLM_BASE_URL: llm.baseUrl,
    });
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
    // Each test uses exactly the replies it scripted.
    expect(llm.pending).toBe(0);
  });

  afterAll(async () => {
    await browser?.close();
    await network?.close();
    await platform?.stop();
    await llm?.close();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('sends a message and shows the answer as the model streams it, token by token', async () => {
    const answer =
      'Hello Alice. This answer arrives in small pieces, one after another, as the model writes it.';
    llm.enqueue({ content: answer, chunkSize: 4, chunkDelayMs: 150 });
    const page = await signedIn('/chat');
    const id = await startChat(page, 'Say hello slowly');
    const log = page.getByRole('list', { name: 'Conversation' });
    await log.getByText('Say hello slowly').waitFor();
    // The answer being written is on the page before it is whole.
    const draft = page.getByTestId('chat-draft');
    await draft.waitFor();
    // (Read with a short bound: on a slow machine the answer may have completed meanwhile.)
    const partial = (await draft.textContent({ timeout: 1_000 }).catch(() => '')) ?? '';
    expect(answer.startsWith(partial)).toBe(true);
    await screenshot(page, 'chat-streaming');
    await log.getByText(answer).waitFor();
    await draft.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Cancel turn' }).waitFor({ state: 'detached' });
    await screenshot(page, 'chat-answered');
    // The model was sent the person's message.
    expect(JSON.stringify(llm.requests.at(-1)?.messages)).toContain('Say hello slowly');
    // A deep link: a reload draws the same conversation from what is stored.
    await page.reload();
    await log.getByText(answer).waitFor();
    const stored = await detail(id);
    expect(stored.status).toBe('completed');
    expect(stored.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'Say hello slowly'],
      ['assistant', answer],
    ]);
  });

  it('folds a tool call into a row that opens on its arguments and result', async () => {
    llm.enqueue(
      { toolCalls: [{ name: 'wait', arguments: { ms: 0, value: { answer: 42 } } }] },
      { content: 'The wait returned 42.' },
    );
    const page = await signedIn('/chat');
    await startChat(page, 'Wait for nothing and tell me the answer');
    await page.getByRole('list', { name: 'Conversation' }).getByText('The wait returned 42.').waitFor();
    const row = callRow(page, 'wait', 'done');
    expect(await row.getAttribute('aria-expanded')).toBe('false');
    await row.click();
    expect(await page.getByLabel('Arguments').textContent()).toContain('"ms": 0');
    expect(await page.getByLabel('Result').textContent()).toContain('42');
    await screenshot(page, 'chat-tool-call');
    // The keyboard folds it again.
    await row.focus();
    await page.keyboard.press('Enter');
    expect(await row.getAttribute('aria-expanded')).toBe('false');
  });

  it('pauses at a confirmation card and runs the call with the arguments the person edited', async () => {
    llm.enqueue(
      {
        toolCalls: [
          { name: 'write_file', arguments: { filePath: 'notes/draft.txt', content: 'from the model' } },
        ],
      },
      { content: 'Written.' },
    );
    const page = await signedIn('/chat');
    // Under "ask" (the default) a call that writes waits for the person.
    const id = await startChat(page, 'Write a note');
    const card = page.getByTestId('approval-card');
    await card.waitFor();
    await card.getByText('write_file waits for your confirmation').waitFor();
    expect(await card.getByTestId('approval-reason').textContent()).not.toBe('');
    const args = card.getByRole('textbox', { name: /Arguments/ });
    // Invalid JSON is caught before anything is sent.
    await args.fill('{"filePath": ');
    await card.getByText(/Not valid JSON/).waitFor();
    expect(await card.getByRole('button', { name: 'Approve with my edits' }).isDisabled()).toBe(true);
    await args.fill(JSON.stringify({ filePath: 'notes/edited.txt', content: 'edited by a person' }, null, 2));
    await screenshot(page, 'chat-approval-card');
    await card.getByRole('button', { name: 'Approve with my edits' }).click();
    await card.waitFor({ state: 'detached' });
    await page.getByRole('list', { name: 'Conversation' }).getByText('Written.').waitFor();
    const row = callRow(page, 'write_file', 'done');
    await row.click();
    await page.getByText('Approved with edited arguments').waitFor();
    expect(await page.getByLabel('Result').textContent()).toContain('notes/edited.txt');
    await screenshot(page, 'chat-approved-edited');

    const stored = await detail(id);
    expect(stored.toolCalls).toHaveLength(1);
    expect(stored.toolCalls[0]).toMatchObject({
      tool: 'write_file',
      status: 'completed',
      editedArguments: { filePath: 'notes/edited.txt', content: 'edited by a person' },
    });
    // The tool ran with the edited arguments: the model's file was never written.
    expect(filesNamed(workspace, 'edited.txt').map((f) => readFileSync(f, 'utf8'))).toEqual([
      'edited by a person',
    ]);
    expect(filesNamed(workspace, 'draft.txt')).toEqual([]);
  });

  it('cancels a turn while its tool call runs', async () => {
    llm.enqueue({ toolCalls: [{ name: 'wait', arguments: { ms: 600_000, value: 'never' } }] });
    const page = await signedIn('/chat');
    const id = await startChat(page, 'Wait ten minutes');
    await callRow(page, 'wait', 'running').waitFor();
    await page.getByRole('button', { name: 'Cancel turn' }).click();
    await page.getByTestId('turn-cancelled').waitFor();
    // The call was aborted: it did not finish.
    await callRow(page, 'wait', /(cancelled|failed)/).waitFor();
    await page.getByRole('button', { name: 'Cancel turn' }).waitFor({ state: 'detached' });
    await screenshot(page, 'chat-cancelled');
    await waitFor(async () => (await detail(id)).status === 'cancelled', 60_000);
    expect((await detail(id)).toolCalls[0]?.status).not.toBe('completed');
  });

  it('resumes a dropped stream after the last frame it drew: no token shows twice', async () => {
    const answer = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    llm.enqueue({ content: answer, chunkSize: 3, chunkDelayMs: 150 });
    const page = await signedIn('/chat');
    await startChat(page, 'Count for me');
    const draft = page.getByTestId('chat-draft');
    await draft.waitFor();
    expect(network.drop()).toBeGreaterThan(0); // the turn's stream (and anything else open) is cut
    // Every text the page draws while it resumes is a beginning of the answer: nothing repeated.
    const seen: string[] = [];
    await waitFor(async () => {
      const text = await draft.textContent({ timeout: 1_000 }).catch(() => null);
      if (text !== null) seen.push(text);
      return text === null;
    }, 60_000);
    for (const text of seen) expect(answer.startsWith(text)).toBe(true);
    await page.getByRole('list', { name: 'Conversation' }).getByText(answer).waitFor();
    expect(await page.getByRole('list', { name: 'Conversation' }).getByText(answer).count()).toBe(1);
    await screenshot(page, 'chat-resumed');
  });

  it('works on a narrow window, in Chinese', async () => {
    llm.enqueue({ content: '你好！我是测试用的假模型。\n\n```\nprint("hi")\n```' });
    const page = await signedIn('/chat', { width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('heading', { name: '开始对话' }).waitFor();
    await page.getByRole('textbox', { name: '消息' }).fill('你好');
    await page.keyboard.press('Enter');
    await page.waitForURL(SESSION_URL);
    await page.getByRole('list', { name: '对话内容' }).getByText('你好！我是测试用的假模型。').waitFor();
    await page.locator('.chat-code', { hasText: 'print("hi")' }).waitFor();
    // Nothing is wider than the window: no sideways scrolling.
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'chat-narrow-zh');
    // On a narrow window the list is one step back.
    await page.getByRole('link', { name: /全部对话/ }).click();
    await page.getByRole('list', { name: '对话列表' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'chat-narrow-list-zh');
  });
});

/** Files called `name` anywhere under `dir` (each owner's files live in their own area). */
function filesNamed(dir: string, name: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return filesNamed(path, name);
    return entry === name ? [path] : [];
  });
}
