import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { Plugin, PluginHooksEntry } from '@switchyard/contracts';
import { buildFixturePlugin, fixtureManifest, Platform, waitFor } from '@switchyard/testing';
import { launchChromium, openPage, screenshot, signIn, type PageProblems } from '@switchyard/testing/browser';
import { OFFICE_BUNDLE_DIR, officeSettings } from '@switchyard/testing/office';

jest.setTimeout(240_000);

/**
 * The Plugins page as an admin uses it, against the whole platform: the office pack installed from
 * its folder on the server and configured (grants, settings with a write-only secret), a bundle with
 * hooks uploaded as a .tgz and its hooks trusted after reading the digest, a bad bundle refused by
 * path, an uninstall after confirming, and the Market tab importing from a file source. Every step
 * is checked against what the server stored; screenshots wide, narrow, light and in Chinese.
 */
describe('plugins page (browser)', () => {
  let platform: Platform;
  let browser: Browser;
  let context: BrowserContext;
  const problems: PageProblems[] = [];
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'sy-plugins-web-')));
  const marketDir = join(root, 'market');
  let hooksTgz: Buffer;
  let badTgz: Buffer;

  const admin = (method: string, path: string, body?: unknown) =>
    platform.call(method, path, platform.admin, body);
  const plugin = async (id: string) => (await admin('GET', `/api/plugins/${id}`)).json as unknown as Plugin;
  const signedIn = async (path: string, token = platform.admin): Promise<Page> => {
    const { page, problems: p } = await openPage(context);
    problems.push(p);
    await signIn(page, `${platform.url}${path}`, token);
    return page;
  };
  const card = (page: Page, id: string) => page.locator(`[data-plugin-id="${id}"]`);

  beforeAll(async () => {
    mkdirSync(marketDir, { recursive: true });
    writeFileSync(
      join(marketDir, 'servers.json'),
      JSON.stringify({
        servers: [
          {
            server: {
              name: 'io.github.acme/notes',
              title: 'Notes',
              description: 'Notes in Python',
              version: '0.3.1',
              packages: [
                {
                  registryType: 'pypi',
                  identifier: 'acme-notes',
                  version: '0.3.1',
                  transport: { type: 'stdio' },
                  environmentVariables: [{ name: 'NOTES_DIR', description: 'where notes live' }],
                },
              ],
            },
          },
          { server: { name: 'io.github.acme/broken', description: 'no version' } },
        ],
      }),
    );
    const guard = await buildFixturePlugin(join(root, 'guard'), join(root, 'cache'));
    mkdirSync(join(guard, 'hooks'));
    writeFileSync(
      join(guard, 'hooks', 'hooks.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [{ matcher: 'fixture_*', hooks: [{ type: 'command', command: './hooks/check.sh' }] }],
        },
      }),
    );
    await tar.c({ gzip: true, file: join(root, 'guard.tgz'), cwd: guard }, ['.']);
    hooksTgz = readFileSync(join(root, 'guard.tgz'));
    const bad = await buildFixturePlugin(
      join(root, 'bad'),
      join(root, 'cache'),
      fixtureManifest({ id: 'bad-one', tools: { bad_tool: { effect: 'explode' } }, flowNodes: [] }),
    );
    await tar.c({ gzip: true, file: join(root, 'bad.tgz'), cwd: bad }, ['.']);
    badTgz = readFileSync(join(root, 'bad.tgz'));

    platform = await Platform.start('plugins-web', {
      WORKSPACE_DIR: join(root, 'workspace'),
      MARKET_DIR: marketDir,
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
    rmSync(root, { recursive: true, force: true });
  });

  it('installs and configures the office pack from its folder: enable, grants, settings with a write-only secret', async () => {
    const page = await signedIn('/plugins');
    await page.getByText(/No plugin is installed yet/).waitFor();
    await screenshot(page, 'plugins-empty');

    // Keyboard: the path field and its Install button are reached with Tab.
    const path = page.getByLabel('Bundle folder or .tgz on the server');
    await path.focus();
    await path.fill(OFFICE_BUNDLE_DIR);
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.textContent')).toBe(
      'Install',
    );
    await page.keyboard.press('Enter');
    await page.getByTestId('installed').filter({ hasText: 'Office pack 1.0.0' }).waitFor();
    const office = card(page, 'office');
    await office.getByRole('table', { name: 'Tools of Office pack' }).getByText('confirm_send').waitFor();

    await office.getByRole('button', { name: 'Enable Office pack' }).click();
    await office.getByText('running').waitFor();
    await office.getByText('Grants').click();
    await office.getByLabel(/Network: open sockets/).check();
    await waitFor(async () => (await plugin('office')).grants.network, 30_000);
    await office.getByLabel(/Run files/).check();
    await waitFor(async () => (await plugin('office')).grants.files, 30_000);

    await office.getByText('Settings (3)').click();
    const settings = officeSettings(2525);
    await office.getByLabel(/Sending accounts/).fill(settings.accounts);
    await office.getByLabel(/SMTP passwords/).fill(settings.passwords);
    await office.getByLabel(/Recipient groups/).fill(settings.groups);
    await screenshot(page, 'plugins-office-settings');
    await office.getByRole('button', { name: 'Save settings' }).click();
    await office.getByText('Saved.').waitFor();
    const stored = await plugin('office');
    expect(stored.settings.map((s) => [s.key, s.set, s.value])).toEqual([
      ['accounts', true, settings.accounts],
      ['passwords', true, undefined],
      ['groups', true, settings.groups],
    ]);
    // The secret is never sent back to the page: the field stays empty after the save.
    expect(await office.getByLabel(/SMTP passwords/).inputValue()).toBe('');
    expect(await page.content()).not.toContain('app-password');
    await screenshot(page, 'plugins-office');
  });

  it('uploads a bundle with hooks, trusts them after reading the digest, refuses a bad bundle by path, uninstalls after confirming', async () => {
    const page = await signedIn('/plugins');
    const upload = page.getByLabel('Or upload a .tgz bundle');
    await upload.setInputFiles({ name: 'bad.tgz', mimeType: 'application/gzip', buffer: badTgz });
    const refusal = page.getByRole('alert').filter({ hasText: 'Nothing was installed' });
    await refusal.getByText('tools.bad_tool.effect', { exact: true }).waitFor();
    await screenshot(page, 'plugins-bad-bundle');

    await upload.setInputFiles({ name: 'guard.tgz', mimeType: 'application/gzip', buffer: hooksTgz });
    await page.getByTestId('installed').filter({ hasText: 'Fixture plugin' }).waitFor();
    const guard = card(page, 'fixture-plugin');
    await guard.getByText('Not trusted: these hooks do not run.').waitFor();
    const digest = (await guard.getByTestId('hooks-digest').textContent()) ?? '';
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    await guard.getByText('./hooks/check.sh').waitFor();
    await guard.getByRole('button', { name: 'Trust the hooks of Fixture plugin' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(digest).waitFor();
    await screenshot(page, 'plugins-trust-dialog');
    await dialog.getByRole('button', { name: 'Trust hooks' }).click();
    // Trusted while the plugin is disabled: its hooks still do not run, and the page says so.
    await guard.getByText('Trusted, but the plugin is disabled: its hooks do not run.').waitFor();
    const hooks = (await admin('GET', '/api/plugin-hooks')).json['items'] as PluginHooksEntry[];
    expect(hooks.find((h) => h.id === 'fixture-plugin')).toMatchObject({
      trusted: true,
      active: false,
      trustedDigest: digest,
    });
    await guard.getByRole('button', { name: 'Untrust the hooks of Fixture plugin' }).click();
    await guard.getByText('Not trusted: these hooks do not run.').waitFor();

    await guard.getByRole('button', { name: 'Uninstall Fixture plugin' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Uninstall' }).click();
    await guard.waitFor({ state: 'detached' });
    expect((await admin('GET', '/api/plugins/fixture-plugin')).status).toBe(404);

    // Light theme, then a narrow window in Chinese: nothing wider than the screen.
    await page.getByRole('button', { name: 'Switch theme' }).click();
    await screenshot(page, 'plugins-light');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await card(page, 'office').getByRole('button', { name: '停用 Office pack' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'plugins-narrow-zh');
  });

  it('the Market tab: a file source, its entries with a malformed one by path, an import as LOCAL', async () => {
    const page = await signedIn('/plugins/market');
    await page.getByText(/No market source is configured/).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('ours');
    await page.getByLabel('From').selectOption('path');
    await page.getByLabel('File under MARKET_DIR').fill('servers.json');
    await page.getByRole('button', { name: 'Add source' }).click();
    const entries = page.getByRole('table', { name: 'Entries' });
    await entries.getByText('Notes', { exact: true }).waitFor();
    await page
      .getByTestId('market-problems')
      .getByText(/could not be read/)
      .click();
    await page.getByTestId('market-problems').getByText('servers[1].server.version').waitFor();
    await screenshot(page, 'plugins-market');

    await page.getByRole('button', { name: 'Inspect io.github.acme/notes' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('acme-notes', { exact: true }).waitFor();
    await dialog.getByLabel('NOTES_DIR').fill('/srv/notes');
    await screenshot(page, 'plugins-market-import');
    await dialog.getByRole('button', { name: 'Import as LOCAL' }).click();
    await dialog.getByText('Imported as notes (LOCAL).').waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: '中文' }).click();
    await page.getByRole('button', { name: '查看 io.github.acme/notes' }).waitFor();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
    await screenshot(page, 'plugins-market-narrow-zh');
    const records = await admin('GET', '/mcp/tool/list?name=notes&pageNum=1&pageSize=10');
    expect(JSON.stringify(records.json)).toContain('"name":"notes"');
  });

  it('is not there for an ordinary user', async () => {
    const user = await platform.token('ulla');
    const page = await signedIn('/plugins', user);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    expect(await page.locator('nav[aria-label="main"]').getByText('Plugins').count()).toBe(0);
  });
});
