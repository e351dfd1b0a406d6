import type { Browser, BrowserContext, Page } from 'playwright-core';
import { FINISHED_RUN_STATUSES, RunDetail } from '@switchyard/contracts';
import { Platform, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';

/**
 * Settings → Memory in a real browser against the real platform: the switch turns the memory tools
 * on, facts remembered by a run are listed, and a delete asks first. Screenshots land in
 * test-results/screenshots (memory-*.png).
 */
// A browser and five services on a busy 2-core machine: generous bounds, never speed.
jest.setTimeout(120_000);

describe('memory settings (browser)', () => {
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  let alice: string;
  const problems: PageProblems[] = [];

  const signedIn = async (path: string): Promise<Page> => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    await signIn(page, `${platform.url}${path}`, alice);
    return page;
  };
  const memoryToolCount = async () =>
    (
      (await platform.call('GET', '/api/agent/tools', alice)).json as unknown as Array<{ name: string }>
    ).filter((t) => t.name.startsWith('memory_')).length;
  const remember = async (text: string) => {
    const runId = await platform.startRun(
      {
        workflow: { steps: [{ id: 'm', tool: 'memory_remember', arguments: { text } }] },
        config: { planApproval: false, permissionMode: 'full-access' },
      },
      alice,
    );
    const done = await waitFor(async () => {
      const d = RunDetail.parse((await platform.call('GET', `/api/agent/runs/${runId}`, alice)).json);
      return FINISHED_RUN_STATUSES.has(d.status) && d;
    }, 60_000);
    expect(done.status).toBe('completed');
  };

  beforeAll(async () => {
    platform = await Platform.start('web-memory');
    alice = await platform.token('alice');
    browser = await launchChromium();
  });

  beforeEach(async () => {
    context = await browser.newContext();
    context.setDefaultTimeout(60_000);
  });

  afterEach(async () => {
    await context?.close();
    expect(problems.splice(0).flatMap((p) => p.errors)).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
  });

  it('turns memory on from the settings page, lists what a run remembered, and deletes after confirming', async () => {
    const page = await signedIn('/settings/memory');
    const toggle = page.getByRole('switch', { name: 'Memory (experimental)' });
    await expect(toggle.isChecked()).resolves.toBe(false);
    await page.getByText('Turn memory on above').waitFor();
    await screenshot(page, 'memory-off');
    expect(await memoryToolCount()).toBe(0);

    await toggle.check();
    await waitFor(async () => (await memoryToolCount()) === 4, 60_000);
    await remember('Anvil is the build server');
    await remember('我喜欢喝黑咖啡，不加糖');
    await page.reload();
    await page.getByRole('cell', { name: 'Anvil is the build server', exact: true }).waitFor();
    await page.getByRole('cell', { name: '我喜欢喝黑咖啡，不加糖', exact: true }).waitFor();
    await expect(page.getByRole('switch', { name: 'Memory (experimental)' }).isChecked()).resolves.toBe(true);
    await screenshot(page, 'memory-list');

    await page.getByRole('button', { name: 'Delete memory “Anvil is the build server”' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('The agent will no longer know: “Anvil is the build server”').waitFor();
    await screenshot(page, 'memory-delete-confirm');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page
      .getByRole('cell', { name: 'Anvil is the build server', exact: true })
      .waitFor({ state: 'detached' });
    const left = (await platform.call('GET', '/api/memories', alice)).json['items'] as Array<{
      text: string;
    }>;
    expect(left.map((m) => m.text)).toEqual(['我喜欢喝黑咖啡，不加糖']);
  });
});
