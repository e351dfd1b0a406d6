import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { createScratchDatabase } from '@switchyard/server-db';
import { api, Stack, waitFor } from '@switchyard/testing';
import { launchChromium } from '@switchyard/testing/browser';
import { runFlowBench } from './web-flows.bench';

/*
 * npm run bench -- web
 * The console in Debian's Chromium against the whole platform (five services as processes, the
 * gateway serving dist/web under its CSP):
 *   firstLoad:   what the browser fetches before the first page can draw (entry script, its
 *                modulepreloads and the CSS), gzipped; the heavy parts (the DAG's layout engine and
 *                canvas) load on demand and are reported apart.
 *   firstRender: from navigation start to a run page with a 64-step plan fully drawn (64 nodes in
 *                the DAG, checked by the page itself at each animation frame), median of ROUNDS
 *                fresh page loads.
 *   streaming:   64 parallel steps ending 2 ms apart (≈ 500 step events/s with their starts in one
 *                burst), watched live on the run page: every frame interval (requestAnimationFrame)
 *                and every long task from approval to the run's end; the longest frame reported.
 *   flowBuilder: a 200-node flow opened, panned, zoomed and dragged on the canvas, and the browser's
 *                compile + validate of it (web-flows.bench.ts).
 */

const ROUNDS = 5;
/** The pause between one first-render round and the next (see where it is used). */
const SETTLE_MS = 1_000;
/** A directory: when set, one extra page load and one extra streamed run (neither counted) are
 *  recorded as Chromium performance traces there (open them in DevTools' Performance panel). */
const TRACE_DIR = process.env['WEB_BENCH_TRACE'];
const TRACE_CATEGORIES = [
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'disabled-by-default-devtools.timeline.frame',
  'toplevel',
  'v8.execute',
  'blink.user_timing',
  'loading',
  'disabled-by-default-v8.cpu_profiler',
];
const STEPS = 64;
const WEB_DIR = join(__dirname, '..', '..', 'dist', 'web');
const r1 = (x: number) => Math.round(x * 10) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

function firstLoadBytes(): { files: string[]; gzipKiB: number; lazyGzipKiB: number } {
  const html = readFileSync(join(WEB_DIR, 'index.html'), 'utf8');
  const refs = [...html.matchAll(/(?:src|href)="\/(assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1] as string);
  const gz = (f: string) => gzipSync(readFileSync(join(WEB_DIR, f))).length;
  const first = refs.reduce((n, f) => n + gz(f), gzipSync(html).length);
  const assets = readFileSync(join(WEB_DIR, '.vite', 'manifest.json'), 'utf8');
  const all = Object.values(JSON.parse(assets) as Record<string, { file: string; css?: string[] }>).flatMap(
    (e) => [e.file, ...(e.css ?? [])],
  );
  const lazy = [...new Set(all)].filter((f) => !refs.includes(f)).reduce((n, f) => n + gz(f), 0);
  return { files: refs, gzipKiB: r1(first / 1024), lazyGzipKiB: r1(lazy / 1024) };
}

// Page-side code runs as functions (the page's CSP refuses strings to evaluate); this file is
// compiled without the DOM's types, so the few page globals it touches are typed here.
interface PageWindow {
  __frames: number[];
  __long: number[];
  __loaf: number[];
  __stop: boolean;
  __drawnAt?: number;
  __doneAt?: number;
  location: { pathname: string };
  document: {
    querySelectorAll(selector: string): { length: number };
    querySelector(selector: string): unknown;
  };
  performance: { now(): number };
  requestAnimationFrame(cb: (now: number) => void): void;
  PerformanceObserver: new (cb: (list: { getEntries(): { duration: number }[] }) => void) => {
    observe(o: { type: string }): void;
  };
}

/** The log's last line: the run's end drawn (the log may draw a frame after the rest of the page). */
const DONE_SELECTOR = '[data-testid="event-log"] li[data-type="complete"]';

/**
 * Starts recording, in the page: frame intervals, long tasks, long animation frames (a frame whose
 * main-thread work took 50 ms or more, rendering included), and the moment `done` is in the DOM,
 * checked at each frame by the page itself. Playwright's own waiting (locator.waitFor) runs its
 * selector engine in the page at every frame: that work was the harness's, counted as the console's.
 */
async function recordFrames(page: Page, done: string): Promise<void> {
  await page.evaluate((selector) => {
    const w = globalThis as unknown as PageWindow;
    w.__frames = [];
    w.__long = [];
    w.__loaf = [];
    w.__stop = false;
    w.__doneAt = undefined;
    new w.PerformanceObserver((list) => list.getEntries().forEach((e) => w.__long.push(e.duration))).observe({
      type: 'longtask',
    });
    new w.PerformanceObserver((list) => list.getEntries().forEach((e) => w.__loaf.push(e.duration))).observe({
      type: 'long-animation-frame',
    });
    let last = w.performance.now();
    const tick = (now: number) => {
      w.__frames.push(now - last);
      last = now;
      if (w.__doneAt === undefined && w.document.querySelector(selector)) w.__doneAt = now;
      if (!w.__stop) w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  }, done);
}

async function stopFrames(
  page: Page,
): Promise<{ frames: number[]; longTasks: number[]; longAnimationFrames: number[] }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as PageWindow;
    w.__stop = true;
    return { frames: w.__frames, longTasks: w.__long, longAnimationFrames: w.__loaf };
  });
}

export async function runWebBench(outDir: string): Promise<Record<string, unknown>> {
  if (!existsSync(join(WEB_DIR, 'index.html'))) throw new Error('dist/web is not built: npm run build');
  const db = await createScratchDatabase('postgresql://postgres@127.0.0.1:5432/postgres', { label: 'bench' });
  const admin = `bench_${randomBytes(24).toString('base64url')}`;
  const stack = await Stack.start({
    DATABASE_URL: db.url,
    NATS_SUBJECT_PREFIX: `bweb${randomBytes(3).toString('hex')}.`,
    SWITCHYARD_ADMIN_TOKEN: admin,
    LOG_LEVEL: 'warn',
    // As deployed: the test stack's NODE_ENV=test also checks every RPC reply against its contract
    // (a run's detail: 1.4 ms of the gateway's CPU per read), on the cores the browser draws with.
    NODE_ENV: 'production',
  });
  const browser = await launchChromium();
  try {
    const base = stack.gatewayUrl;
    const call = (method: string, path: string, body?: unknown) =>
      api(base, method, path, { token: admin, ...(body !== undefined ? { body } : {}) });
    const start = async (steps: unknown[], planApproval: boolean): Promise<string> => {
      const res = await call('POST', '/api/agent/run', {
        goal: 'web bench',
        workflow: { steps },
        config: { planApproval, permissionMode: 'full-access' },
      });
      if (res.status !== 200) throw new Error(`start answered ${res.status}: ${res.text}`);
      return res.json['runId'] as string;
    };
    const status = async (runId: string) =>
      (await call('GET', `/api/agent/runs/${runId}`)).json['status'] as string;
    // Eight levels of eight: a plan that looks like a plan.
    const layered = Array.from({ length: STEPS }, (_, i) => ({
      id: `s${i}`,
      tool: 'wait',
      description: `step ${i}`,
      arguments: { ms: 0, value: i },
      dependsOn: i >= 8 ? [`s${i - 8}`] : [],
    }));
    const drawn = await start(layered, false);
    await waitFor(async () => (await status(drawn)) === 'completed', 60_000, 100);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript((token) => {
      (
        globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }
      ).sessionStorage.setItem('switchyard.token', token);
    }, admin);
    // The moment every node of the drawn run is in the DOM, from navigation start, checked at
    // each animation frame by the page itself from its first script on.
    await context.addInitScript(
      ({ path, n }) => {
        const w = globalThis as unknown as PageWindow;
        if (w.location.pathname !== path) return;
        const check = () => {
          if (w.document.querySelectorAll('.dag-node').length === n) w.__drawnAt = w.performance.now();
          else w.requestAnimationFrame(check);
        };
        w.requestAnimationFrame(check);
      },
      { path: `/runs/${drawn}`, n: STEPS },
    );
    const page = await context.newPage();
    await page.goto(`${base}/runs`); // warm the HTTP cache like a returning user
    await page.locator('nav[aria-label="main"]').waitFor();

    const renders: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(`${base}/runs/${drawn}`);
      // Read from the page's own record (see the init script above): polling with Playwright's
      // waitForFunction compiled its selector engine in the page while the console was starting,
      // ~20 ms of the harness's own work counted as the console's.
      const drawnAt = await waitFor(
        () => page.evaluate(() => (globalThis as unknown as PageWindow).__drawnAt),
        30_000,
        20,
      );
      renders.push(drawnAt);
      // Each round is a fresh load, as a person's next click is: the page before it has done what
      // it does after its first drawing (the event log, the live stream, the side queries). Sent at
      // once, the next navigation waited for that work and counted it as its own.
      await page.waitForTimeout(SETTLE_MS);
    }
    if (TRACE_DIR) {
      mkdirSync(TRACE_DIR, { recursive: true });
      await browser.startTracing(page, {
        path: join(TRACE_DIR, 'first-render.json'),
        categories: TRACE_CATEGORIES,
      });
      await page.goto(`${base}/runs/${drawn}`);
      await waitFor(() => page.evaluate(() => (globalThis as unknown as PageWindow).__drawnAt), 30_000, 20);
      await page.waitForTimeout(500);
      await browser.stopTracing();
    }

    const streaming: {
      maxFrameMs: number;
      framesOver50: number;
      longestTaskMs: number;
      /** Frames whose main-thread work (script, style, layout, paint) took ≥ 50 ms. */
      longAnimationFramesMs: number[];
      events: number;
      spanMs: number;
    }[] = [];
    for (let i = 0; i < (TRACE_DIR ? 4 : 3); i++) {
      const tracing = i === 3;
      const burst = Array.from({ length: STEPS }, (_, k) => ({
        id: `p${k}`,
        tool: 'wait',
        arguments: { ms: k * 2, value: k },
      }));
      const runId = await start(burst, true);
      await waitFor(async () => (await status(runId)) === 'awaiting_plan_approval', 30_000, 50);
      await page.goto(`${base}/runs/${runId}`);
      await page.getByTestId('plan-gate').waitFor();
      await page.locator('[data-testid="stream-state"].open').waitFor();
      if (tracing) {
        await browser.startTracing(page, {
          path: join(TRACE_DIR ?? '', 'streaming.json'),
          categories: TRACE_CATEGORIES,
        });
      }
      // Found before the frames are recorded: a role query computes accessible names page-wide.
      const approve = page.getByTestId('plan-gate').getByRole('button', { name: 'Approve', exact: true });
      const button = await approve.elementHandle();
      if (!button) throw new Error('no Approve button in the plan gate');
      await recordFrames(page, DONE_SELECTOR);
      const t0 = Date.now();
      await button.click();
      await waitFor(
        () => page.evaluate(() => (globalThis as unknown as PageWindow).__doneAt !== undefined || undefined),
        60_000,
        50,
      );
      const spanMs = Date.now() - t0;
      const { frames, longTasks, longAnimationFrames } = await stopFrames(page);
      if (tracing) {
        await browser.stopTracing();
        continue;
      }
      const events = await page.locator('[data-testid="event-log"] li').count();
      streaming.push({
        maxFrameMs: r1(Math.max(...frames)),
        framesOver50: frames.filter((f) => f > 50).length,
        longestTaskMs: r1(Math.max(0, ...longTasks)),
        longAnimationFramesMs: longAnimationFrames.map(r1),
        events,
        spanMs,
      });
    }
    await context.close();
    const flowBuilder = await runFlowBench(browser, base, admin, call);

    const load = firstLoadBytes();
    const firstRenderMs = r1(median(renders));
    const worstFrame = Math.max(...streaming.map((s) => s.maxFrameMs));
    const result = {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, loadavg: loadavg().map(r1) },
      method:
        'Debian Chromium 156 headless via playwright-core, 1280×800; platform as five processes (NODE_ENV=production), client served by the gateway; ' +
        `first render = navigationStart → ${STEPS} DAG nodes in the DOM, checked by the page at each animation frame (median of ${ROUNDS} loads, ${SETTLE_MS} ms apart); streaming = rAF intervals from approval to the log's complete line, with the long tasks and long animation frames (main-thread work ≥ 50 ms) of that span`,
      firstLoad: { ...load, goal: '≤ 300 KiB gzipped', goalMet: load.gzipKiB <= 300 },
      firstRender: {
        steps: STEPS,
        medianMs: firstRenderMs,
        roundsMs: renders.map(r1),
        goal: '≤ 300 ms',
        goalMet: firstRenderMs <= 300,
      },
      streaming: {
        runs: streaming,
        worstFrameMs: worstFrame,
        goal: 'no frame over 50 ms while events stream at ≈ 500 events/s',
        goalMet: worstFrame <= 50,
      },
      flowBuilder,
    };
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'web.json'), JSON.stringify(result, null, 2) + '\n');
    return result;
  } finally {
    await browser.close();
    await stack.stop();
    await db.drop();
  }
}
