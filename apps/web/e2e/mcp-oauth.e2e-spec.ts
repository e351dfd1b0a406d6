import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { McpAccess, McpToolRecord } from '@switchyard/contracts';
import { OAuthFixture, Platform, waitFor } from '@switchyard/testing';
import {
  launchChromium,
  openPage,
  screenshot,
  SCREENSHOT_DIR,
  signIn,
  type PageProblems,
} from '@switchyard/testing/browser';

jest.setTimeout(240_000);

const RECORD = 'oauthfix';
const WHOAMI = `mcp__${RECORD}__whoami`;

/**
 * Remote MCP servers that sign in with OAuth, in a real Chromium against the whole platform and the
 * local OAuth fixture (with its consent page): an admin adds a REMOTE record with OAuth, presses
 * Connect, allows access in the popup the page opened, sees Connected, tests the record and finds its
 * tools in the catalog; a grant revoked at the provider shows Reconnect with the reason, a denial in
 * the popup and a popup closed early say so, and Reconnect restores it. Then the MCP access settings:
 * a user's choices survive a reload, an admin turns that user's access off. Every page and popup
 * must run without errors or CSP refusals; screenshots wide, narrow, light and in Chinese.
 */
describe('OAuth Connect and MCP access settings (browser)', () => {
  let fixture: OAuthFixture;
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  const problems: PageProblems[] = [];

  const admin = (method: string, path: string, body?: unknown) =>
    platform.call(method, path, platform.admin, body);
  const recordNamed = async (name: string): Promise<McpToolRecord> => {
    const page = await admin('GET', `/mcp/tool/list?name=${name}&pageNum=1&pageSize=10`);
    return (page.json['items'] as McpToolRecord[]).find((r) => r.name === name) as McpToolRecord;
  };
  const catalog = async () =>
    ((await admin('GET', '/api/agent/tools')).json as unknown as Array<{ name: string }>).map((t) => t.name);
  const signedIn = async (
    path: string,
    token = platform.admin,
    viewport?: { width: number; height: number },
  ) => {
    const { page, problems: p } = await openPage(context, viewport);
    problems.push(p);
    await signIn(page, `${platform.url}${path}`, token);
    return page;
  };
  /** The popup the click opens, watched for errors and CSP refusals like any page. */
  const popupOf = async (page: Page, click: () => Promise<void>): Promise<Page> => {
    const [popup] = await Promise.all([page.waitForEvent('popup'), click()]);
    const p: PageProblems = { errors: [] };
    popup.on('pageerror', (err) => p.errors.push(`popup pageerror: ${err.message}`));
    popup.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text()))
        p.errors.push(`popup csp: ${msg.text()}`);
    });
    problems.push(p);
    return popup;
  };
  const row = (page: Page) => page.locator(`[data-record-name="${RECORD}"]`);

  beforeAll(async () => {
    fixture = await OAuthFixture.start({ scopes: ['mcp:tools'], consentPage: true });
    platform = await Platform.start('oauth-web', {
      // The fixture is on loopback: allowed by name, as an administrator allows an intranet host.
      WEB_FETCH_PRIVATE_HOSTS: fixture.host,
      MCP_HANDSHAKE_TIMEOUT_MS: '15000',
    });
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
    await fixture?.stop();
  });

  it('adds a REMOTE record with OAuth, connects it in a popup, tests it and finds its tools in the catalog', async () => {
    const page = await signedIn('/tools');
    await page.getByRole('button', { name: 'Add server' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill(RECORD);
    await dialog.getByLabel('REMOTE').check();
    await dialog.getByLabel('Server URL (Streamable HTTP)').fill(fixture.mcpUrl);
    await dialog.getByLabel('Sign in with OAuth (Connect)').check();
    await dialog.getByLabel('Grant').selectOption('authorization_code');
    await screenshot(page, 'oauth-record-form');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row(page).getByText('Not connected').waitFor();
    await row(page)
      .getByText(/press Connect/)
      .waitFor();
    await screenshot(page, 'oauth-not-connected');

    // From the click to a tested record: timed, reported, never asserted.
    const started = performance.now();
    const popup = await popupOf(page, () =>
      row(page)
        .getByRole('button', { name: `Connect ${RECORD}` })
        .click(),
    );
    const allow = popup.getByRole('button', { name: 'Allow' });
    await allow.waitFor();
    expect(new URL(popup.url()).origin).toBe(fixture.url);
    await page
      .getByTestId('connect-status')
      .getByText(/Waiting for the sign-in window/)
      .waitFor();
    await screenshot(page, 'oauth-waiting');
    await Promise.all([popup.waitForEvent('close'), allow.click()]);
    const status = page.getByTestId('connect-status');
    await status.getByText(`${RECORD} is connected. Test it so its tools join the catalog.`).waitFor();
    await status.getByRole('button', { name: 'Test now' }).click();
    await page.getByTestId('test-result').getByText('Connected: 2 tools').waitFor();
    const elapsedMs = performance.now() - started;
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    writeFileSync(
      join(SCREENSHOT_DIR, '..', 'oauth-connect-timing.json'),
      JSON.stringify({ connectToTestedMs: Math.round(elapsedMs) }, null, 2),
    );
    process.stdout.write(`Connect → tested record against the local fixture: ${Math.round(elapsedMs)} ms\n`);

    const me = (await admin('GET', '/api/me')).json['owner'] as { name: string };
    await row(page).getByText('Connected', { exact: true }).waitFor();
    await row(page)
      .getByText(new RegExp(`^by ${me.name} · `))
      .waitFor();
    expect(
      await row(page)
        .getByRole('button', { name: `Connect ${RECORD}` })
        .count(),
    ).toBe(0);
    expect((await recordNamed(RECORD)).oauth).toMatchObject({ state: 'connected', connectedByName: me.name });
    await screenshot(page, 'oauth-connected');
    // The fixture saw the person's consent and a PKCE code exchange for the gateway's callback.
    expect(fixture.authorizeRequests.at(-1)?.get('redirect_uri')).toBe(
      `${platform.url}/api/mcp/oauth/callback`,
    );
    expect(fixture.tokenRequests.at(-1)).toMatchObject({ grantType: 'authorization_code', status: 200 });

    await page.goto(`${platform.url}/tools/catalog?q=${RECORD}`);
    await page.locator(`[data-tool="${WHOAMI}"]`).waitFor();
    await screenshot(page, 'oauth-catalog');
  });

  it('a grant revoked at the provider: Reconnect with the reason; a denial and an early close say so; Reconnect restores it', async () => {
    fixture.revokeAll();
    // An agent's call meets the revoked grant: the record goes to Reconnect.
    const refused = await admin('POST', '/api/agent/tools/invoke', { tool: WHOAMI, arguments: {} });
    expect(refused.json['detail']).toContain('Reconnect');
    expect(await catalog()).not.toContain(WHOAMI);

    // The twenty built-ins fill the first page: the record is found by name.
    const page = await signedIn(`/tools?q=${RECORD}`);
    await row(page).getByText('Reconnect needed').waitFor();
    const reason = (await recordNamed(RECORD)).oauth?.reason as string;
    expect(reason).toContain('Reconnect');
    await row(page).getByText(reason).waitFor();
    await row(page).getByText('Its tools are held out of the catalog until you reconnect.').waitFor();
    await screenshot(page, 'oauth-reconnect');
    const reconnect = row(page).getByRole('button', { name: `Reconnect ${RECORD}` });

    // The person denies access: the callback page reports it to this page and closes.
    let popup = await popupOf(page, () => reconnect.click());
    await Promise.all([popup.waitForEvent('close'), popup.getByRole('button', { name: 'Deny' }).click()]);
    const status = page.getByTestId('connect-status');
    await status.getByText('Connect did not finish').waitFor();
    await status.getByText('forbidden', { exact: true }).waitFor();
    await status.getByText(/access_denied/).waitFor();
    await screenshot(page, 'oauth-denied');
    await status.getByRole('button', { name: 'Dismiss' }).click();

    // The person closes the popup without signing in: the wait ends, nothing changed.
    popup = await popupOf(page, () => reconnect.click());
    await popup.getByRole('button', { name: 'Allow' }).waitFor();
    await popup.close();
    await status.getByText(/The sign-in window was closed before signing in finished/).waitFor();
    expect((await recordNamed(RECORD)).oauth?.state).toBe('reconnect');

    // Keyboard: Reconnect is reached and pressed without a mouse.
    await reconnect.focus();
    popup = await popupOf(page, () => page.keyboard.press('Enter'));
    await Promise.all([popup.waitForEvent('close'), popup.getByRole('button', { name: 'Allow' }).click()]);
    await status.getByText(`${RECORD} is connected; its tools are in the catalog again.`).waitFor();
    await row(page).getByText('Connected', { exact: true }).waitFor();
    await waitFor(async () => (await catalog()).includes(WHOAMI), 60_000);
    const call = await admin('POST', '/api/agent/tools/invoke', {
      tool: WHOAMI,
      arguments: { note: 'back' },
    });
    expect(call.status).toBe(200);

    // Light, then narrow in Chinese with the record back in Reconnect: nothing wider than the screen.
    await page.getByRole('button', { name: 'Switch theme' }).click();
    await screenshot(page, 'oauth-connected-light');
    await page.getByRole('button', { name: 'Switch theme' }).click();
    fixture.revokeAll();
    await admin('POST', '/api/agent/tools/invoke', { tool: WHOAMI, arguments: {} });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.reload();
    await row(page).getByText('需要重新连接').waitFor();
    await row(page)
      .getByRole('button', { name: `重新连接 ${RECORD}` })
      .waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'oauth-reconnect-narrow-zh');
    popup = await popupOf(page, () =>
      row(page)
        .getByRole('button', { name: `重新连接 ${RECORD}` })
        .click(),
    );
    await Promise.all([popup.waitForEvent('close'), popup.getByRole('button', { name: 'Allow' }).click()]);
    await page
      .getByTestId('connect-status')
      .getByText(`${RECORD} 已连接，它的工具已重新加入目录。`)
      .waitFor();
    await row(page).getByText('已连接', { exact: true }).waitFor();
    await screenshot(page, 'oauth-connected-narrow-zh');
  });

  it('a blocked popup: the link opens the sign-in in a new tab, whose callback page tells this one over the BroadcastChannel', async () => {
    fixture.revokeAll();
    await admin('POST', '/api/agent/tools/invoke', { tool: WHOAMI, arguments: {} });
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    // What a popup blocker does to the page: window.open answers null.
    await page.addInitScript('window.open = () => null');
    await signIn(page, `${platform.url}/tools?q=${RECORD}`, platform.admin);
    await row(page)
      .getByRole('button', { name: `Reconnect ${RECORD}` })
      .click();
    const status = page.getByTestId('connect-status');
    const link = status.getByRole('link', { name: 'Open the sign-in page in a new tab' });
    await status.getByText('Your browser blocked the sign-in window.').waitFor();
    await screenshot(page, 'oauth-popup-blocked');

    const [tab] = await Promise.all([context.waitForEvent('page'), link.click()]);
    const t: PageProblems = { errors: [] };
    tab.on('pageerror', (err) => t.errors.push(`tab pageerror: ${err.message}`));
    tab.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text()))
        t.errors.push(`tab csp: ${msg.text()}`);
    });
    problems.push(t);
    await tab.emulateMedia({ colorScheme: 'dark' });
    await tab.getByRole('button', { name: 'Allow' }).click();
    await tab.getByRole('heading', { name: 'Connected' }).waitFor();
    // Opened without an opener (noopener): it stays, says so, and the code and state left its address.
    await tab.getByText('You can close this window and go back to Switchyard.').waitFor();
    expect(new URL(tab.url()).search).toBe('');
    await screenshot(tab, 'oauth-callback-page');
    await status.getByText(`${RECORD} is connected; its tools are in the catalog again.`).waitFor();
    await row(page).getByText('Connected', { exact: true }).waitFor();

    // A forged return with script in it: the page shows it as text, in light and in Chinese too.
    const forged = `${platform.url}/api/mcp/oauth/callback?state=${encodeURIComponent('<img src=x onerror=alert(1)>')}&error=${encodeURIComponent('<script>alert(1)</script>')}`;
    const dialogs: string[] = [];
    tab.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const refused = await tab.goto(forged);
    expect(refused?.status()).toBe(403);
    await tab.getByRole('heading', { name: 'Connect did not finish' }).waitFor();
    await tab.getByText('forbidden', { exact: true }).waitFor();
    await screenshot(tab, 'oauth-callback-refused');
    await tab.emulateMedia({ colorScheme: 'light' });
    await tab.setExtraHTTPHeaders({ 'accept-language': 'zh-CN,zh;q=0.9' });
    await tab.setViewportSize({ width: 390, height: 700 });
    await tab.goto(forged);
    await tab.getByRole('heading', { name: '连接未完成' }).waitFor();
    await screenshot(tab, 'oauth-callback-refused-zh-light-narrow');
    expect(await tab.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it("MCP access: a user's choices survive a reload; an admin turns that user's access off", async () => {
    const mia = await platform.token('mia');
    const created = await platform.call('POST', '/api/workflows', mia, {
      name: 'Weekly digest',
      description: 'Collects the week',
      inputSchema: { type: 'object', properties: {} },
      plan: { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0, value: 1 } }] },
    });
    expect(created.status).toBe(201);
    const workflowId = created.json['id'] as string;

    // Nothing published yet: the empty state.
    let page = await signedIn('/settings/mcp', mia);
    await page.getByText(/You have no published workflow yet/).waitFor();
    await screenshot(page, 'mcp-settings-empty');
    const published = await platform.call('POST', `/api/workflows/${workflowId}/publish`, mia, {
      revision: 1,
    });
    expect(published.status).toBe(200);

    await page.reload();
    const enabled = page.getByRole('switch', { name: 'MCP access on' });
    await enabled.waitFor();
    expect(await enabled.isDisabled()).toBe(true);
    await page.getByLabel('Permission mode of the runs MCP clients start').selectOption('full-access');
    await page.getByLabel('Only the ones I choose').check();
    await page.getByRole('checkbox', { name: /Weekly digest/ }).check();
    await page.getByText('1 of 1 chosen').waitFor();
    expect(await page.getByLabel('Endpoint (Streamable HTTP)').inputValue()).toBe(`${platform.url}/mcp`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await screenshot(page, 'mcp-settings');

    await page.reload();
    await page.getByText(/^Last changed /).waitFor();
    expect(await page.getByLabel('Permission mode of the runs MCP clients start').inputValue()).toBe(
      'full-access',
    );
    expect(await page.getByLabel('Only the ones I choose').isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /Weekly digest/ }).isChecked()).toBe(true);
    const stored = (await platform.call('GET', '/api/settings/mcp', mia)).json as unknown as McpAccess;
    expect(stored).toMatchObject({
      permissionMode: 'full-access',
      exposedWorkflows: [workflowId],
      enabled: true,
    });

    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('switch', { name: '开启 MCP 访问' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'mcp-settings-narrow-zh');
    // The language choice is the browser's (local storage): the admin signs in from a fresh one.
    await context.close();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(60_000);

    // The admin turns mia's access off by name; it sticks, and mia's token is refused at /mcp.
    page = await signedIn('/settings/mcp');
    await page.getByLabel('Owner', { exact: true }).fill('mia');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.waitForURL(/\/settings\/mcp\?owner=mia$/);
    const hers = page.getByRole('switch', { name: 'MCP access on · mia' });
    await hers.waitFor();
    await page.getByText('mia chooses the exposed workflows: 1 chosen.').waitFor();
    await hers.uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    await page.reload();
    await page.getByRole('switch', { name: 'MCP access on · mia' }).waitFor();
    expect(await page.getByRole('switch', { name: 'MCP access on · mia' }).isChecked()).toBe(false);
    await page.getByRole('button', { name: 'Switch theme' }).click();
    await screenshot(page, 'mcp-settings-admin-light');
    const mcp = await fetch(`${platform.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${mia}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(403);
  });
});
