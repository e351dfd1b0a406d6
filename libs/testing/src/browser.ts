import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const ROOT = join(__dirname, '..', '..', '..');
/** Where browser tests leave their screenshots (CI keeps the folder as an artifact). */
export const SCREENSHOT_DIR = join(ROOT, 'test-results', 'screenshots');
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, driven by playwright-core (no browser download). The flags keep it
 * from reaching for Google's hosts, which this machine's closed network refuses.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it with "apt-get install chromium fonts-noto-cjk" (or set CHROMIUM_PATH)`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** Problems the page reported: uncaught errors and Content-Security-Policy refusals. */
export interface PageProblems {
  readonly errors: string[];
}

/** A page at 1280×800 that records uncaught errors and CSP violations (see `problems`). */
export async function openPage(
  context: BrowserContext,
  viewport = { width: 1280, height: 800 },
): Promise<{ page: Page; problems: PageProblems }> {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  const problems: PageProblems = { errors: [] };
  page.on('pageerror', (err) => problems.errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy|Refused to/i.test(msg.text())) {
      problems.errors.push(`csp: ${msg.text()}`);
    }
  });
  return { page, problems };
}

/**
 * Opens `url` and signs in through the console's sign-in form, as a person pastes a token, then
 * waits for the main menu.
 */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('nav[aria-label="main"]').waitFor();
}

/** Saves a full-page screenshot as `<name>.png` under SCREENSHOT_DIR; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '-')}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
