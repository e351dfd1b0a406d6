import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { Platform, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';
import {
  installOfficePlugin,
  OFFICE_CC,
  OFFICE_RECIPIENTS,
  OFFICE_ROWS,
  regionWorkbook,
  SmtpSink,
  workbookRows,
} from '@switchyard/testing/office';

// A browser, five services, a sandboxed plugin server and a real SMTP relay on a busy 2-core machine:
// bounds that only guard a hang.
jest.setTimeout(240_000);

/**
 * The office pack's template as a person uses it: from the gallery, the run dialog's file picker and
 * the dropdowns the pack's list tools fill, the send released in the run dock, the messages at a real
 * SMTP relay. The pack is installed and configured through the API as an admin does it.
 */
describe('the office template in the browser', () => {
  let platform: Platform;
  let smtp: SmtpSink;
  let browser: Browser;
  let context: BrowserContext;
  let alice: string;
  const problems: PageProblems[] = [];
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sy-office-web-')));

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    platform = await Platform.start('office-web', {
      WORKSPACE_DIR: join(root, 'workspace'),
      FILES_DIR: join(root, 'files'),
      MCP_HANDSHAKE_TIMEOUT_MS: '15000',
    });
    alice = await platform.token('alice');
    await installOfficePlugin(
      (method, path, body) => platform.call(method, path, platform.admin, body),
      smtp.port,
    );
    browser = await launchChromium();
  }, 240_000);

  beforeEach(async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
    await smtp?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const gate = (page: Page, step: string) =>
    page.locator(`[data-testid="step-gate"][data-step-id="${step}"]`);

  it('uses the template from the gallery, fills the form from the list tools, releases the send, and the relay gets three messages', async () => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    await signIn(page, `${platform.url}/flows?view=templates`, alice);
    const card = page.locator('[data-template-id="excel-split-email"]');
    await card.waitFor();
    await screenshot(page, 'office-gallery');
    await card.getByRole('button', { name: /Use template/ }).click();
    await page.waitForURL(/\/flows\/[0-9a-f-]{36}$/);
    await page.locator('.react-flow__node[data-id="send"]').waitFor();

    await page.getByRole('button', { name: /Run/ }).first().click();
    const dialog = page.getByRole('dialog');
    // The dropdowns are the pack's list tools' answers, read through the platform.
    await dialog
      .getByLabel(/Send from/)
      .locator('option', { hasText: 'Reports <reports@example.com>' })
      .waitFor({ state: 'attached' });
    await dialog
      .getByLabel(/Recipients/)
      .locator('option', { hasText: 'Regional managers' })
      .waitFor({ state: 'attached' });
    await dialog.getByText("A fresh folder is made for this run's output; nothing to fill in.").waitFor();
    await dialog.getByLabel(/Workbook/).setInputFiles({
      name: 'sales.xlsx',
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      buffer: await regionWorkbook(),
    });
    await dialog.getByTestId('uploaded-file').filter({ hasText: 'sales.xlsx' }).waitFor();
    await dialog.getByLabel(/Send from/).selectOption({ label: 'Reports <reports@example.com>' });
    await dialog.getByLabel(/Recipients/).selectOption({ label: 'Regional managers' });
    // The inputs in the template's order; the column, subject and message keep its defaults.
    expect(
      await dialog.locator('.run-field').evaluateAll((els) => els.map((e) => e.getAttribute('data-input'))),
    ).toEqual(['workbook', 'outputDir', 'splitColumn', 'account', 'group', 'subject', 'body']);
    expect(await dialog.getByLabel(/Split by column/).inputValue()).toBe('Region');
    expect(await dialog.getByLabel(/Message/).inputValue()).toMatch(/^Hello,\n\nattached are/);
    await screenshot(page, 'office-run-dialog');
    await dialog.getByRole('button', { name: 'Start' }).click();

    // "ask" (the default) asks before each write and before the send: release the writes, then
    // look at the send's gate before anything has been sent.
    for (const step of ['split', 'stage']) {
      await gate(page, step).getByRole('button', { name: 'Release step' }).click();
      await gate(page, step).waitFor({ state: 'detached' });
    }
    const send = gate(page, 'send');
    await send.waitFor();
    await send.getByText('confirm_send').waitFor();
    await screenshot(page, 'office-send-gate');
    await send.getByText(/marked requiresApproval|requires approval before every call/).waitFor();
    expect(smtp.received).toHaveLength(0);
    await send.getByRole('button', { name: 'Release step' }).click();
    await page.locator('.react-flow__node[data-id="send"] .flow-node[data-status="completed"]').waitFor();
    await page.locator('.flow-dock li[data-step-id="send"]').getByText('"sent": 3').first().waitFor();

    await waitFor(async () => smtp.received.length === 3, 60_000);
    for (const [region, recipients] of Object.entries(OFFICE_RECIPIENTS)) {
      const m = smtp.received.find((r) => r.mail.subject?.startsWith(`${region}:`));
      expect(m?.rcptTo.sort()).toEqual([...recipients, OFFICE_CC].sort());
      // The message's line breaks came through the form (a one-line input would drop them).
      expect(m?.mail.text).toMatch(new RegExp(`^Hello,\n\nattached are the \\d rows for ${region}`));
      expect(m?.mail.attachments.map((a) => a.filename)).toEqual([`sales-${region}.xlsx`]);
      const part = await workbookRows(m?.mail.attachments[0]?.content as Buffer);
      expect(part.rows).toEqual(OFFICE_ROWS.filter((r) => r[0] === region).map((r) => [...r]));
    }
    // The run's grants, read-only: the picked workbook and the shared folder.
    const files = page.locator('.flow-dock [data-testid="run-files"]');
    await files.locator('[data-grant="workbook"]').getByText('sales.xlsx').waitFor();
    await files.locator('[data-grant="outputDir"]').getByText('writable').waitFor();
    await screenshot(page, 'office-sent');

    // Narrow and in Chinese: the gallery and the run dialog still fit.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await screenshot(page, 'office-sent-narrow-zh');
    await page.getByRole('button', { name: /运行/ }).first().click();
    await page
      .getByRole('dialog')
      .locator('select option', { hasText: 'Regional managers' })
      .first()
      .waitFor({ state: 'attached' });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'office-run-dialog-narrow-zh');

    // The run page lists the same grants.
    await page.getByRole('dialog').getByRole('button', { name: '关闭' }).click();
    await page.getByRole('link', { name: '打开运行页面' }).click();
    await page.locator('[data-testid="run-files"] [data-grant="workbook"]').waitFor();
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: 'English' }).click();
    await page
      .getByRole('region', { name: 'Files granted to this run' })
      .getByText('@file:outputDir')
      .waitFor();
    await screenshot(page, 'office-run-page');
  });
});
