import type { Browser, Page } from 'playwright-core';

/*
 * The flow builder's part of `npm run bench -- web`: a 200-node flow (20 levels of 10 wait steps,
 * each fed by the one a level before) opened in the browser at 1280×800.
 *   open:     navigation start → all 200 cards in the DOM and one frame drawn after (first
 *             interactive frame), median of ROUNDS fresh loads.
 *   interact: every frame interval (requestAnimationFrame) while the mouse pans the canvas, the
 *             wheel zooms in and out, and a node is dragged across it; the longest frame reported.
 *   check:    the browser's compile + validate of the flow (the same code the server runs), timed
 *             by the editor's own user-timing measure `switchyard:flow-check`, on load and after
 *             each delete/undo of a node.
 */

const NODES = 200;
const ROUNDS = 5;
const r1 = (x: number) => Math.round(x * 10) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface FlowPageWindow {
  __frames: number[];
  __stop: boolean;
  document: { querySelectorAll(selector: string): { length: number } };
  performance: {
    now(): number;
    getEntriesByName(name: string): { duration: number }[];
    clearMeasures(): void;
  };
  requestAnimationFrame(cb: (now: number) => void): void;
}

/** A 200-node graph as the canvas saves it: positions, a start node, edges between levels. */
export function bigFlowGraph(nodes = NODES): Record<string, unknown> {
  const cols = 10;
  const tools = Array.from({ length: nodes }, (_, i) => ({
    id: `n${i}`,
    type: 'tool',
    position: { x: 320 + Math.floor(i / cols) * 320, y: (i % cols) * 110 },
    data: { tool: 'wait', arguments: { ms: 0, value: i >= cols ? `{{node.n${i - cols}.result}}` : i } },
  }));
  const edges = tools
    .filter((_, i) => i >= cols)
    .map((n, k) => ({ id: `e${k}`, source: `n${Number(n.id.slice(1)) - cols}`, target: n.id }));
  return { nodes: [{ id: 'start', type: 'start', position: { x: 0, y: 450 }, data: {} }, ...tools], edges };
}

async function framesWhile(page: Page, act: () => Promise<void>): Promise<number[]> {
  await page.evaluate(() => {
    const w = globalThis as unknown as FlowPageWindow;
    w.__frames = [];
    w.__stop = false;
    let last = w.performance.now();
    const tick = (now: number) => {
      w.__frames.push(now - last);
      last = now;
      if (!w.__stop) w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
  await act();
  return page.evaluate(() => {
    const w = globalThis as unknown as FlowPageWindow;
    w.__stop = true;
    return w.__frames.slice(1); // the first interval starts before the action
  });
}

export async function runFlowBench(
  browser: Browser,
  base: string,
  token: string,
  call: (
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ status: number; json: Record<string, unknown>; text: string }>,
): Promise<Record<string, unknown>> {
  const created = await call('POST', '/api/workflows', {
    name: 'bench: 200 nodes',
    inputSchema: { type: 'object', properties: {} },
    graph: bigFlowGraph(),
  });
  if (created.status !== 201)
    throw new Error(`creating the flow answered ${created.status}: ${created.text}`);
  const id = created.json['id'] as string;

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  await context.addInitScript((t) => {
    (
      globalThis as unknown as { sessionStorage: { setItem(k: string, v: string): void } }
    ).sessionStorage.setItem('switchyard.token', t);
  }, token);
  const page = await context.newPage();
  try {
    await page.goto(`${base}/flows/${id}`); // warm the HTTP cache like a returning user
    await page
      .locator('.react-flow__node-tool')
      .nth(NODES - 1)
      .waitFor();

    const opens: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(`${base}/flows/${id}`);
      const seen = await page.waitForFunction(
        (n) => {
          const w = globalThis as unknown as FlowPageWindow;
          if (w.document.querySelectorAll('.react-flow__node-tool .flow-node').length !== n) return 0;
          return new Promise<number>((resolve) =>
            w.requestAnimationFrame(() => resolve(w.performance.now())),
          );
        },
        NODES,
        { polling: 'raf' },
      );
      opens.push((await seen.jsonValue()) as number);
    }

    const pane = page.locator('.react-flow__pane');
    const box = await pane.boundingBox();
    if (!box) throw new Error('no canvas on the page');
    const cx = box.x + box.width / 2;
    const cy = box.y + box.height / 2;
    const pan = await framesWhile(page, async () => {
      await page.mouse.move(cx, cy);
      await page.mouse.down();
      for (let k = 1; k <= 30; k++) await page.mouse.move(cx - k * 10, cy - k * 4);
      await page.mouse.up();
    });
    const zoom = await framesWhile(page, async () => {
      await page.mouse.move(cx, cy);
      for (let k = 0; k < 10; k++) await page.mouse.wheel(0, -120);
      for (let k = 0; k < 10; k++) await page.mouse.wheel(0, 120);
    });
    await page.getByRole('button', { name: 'Fit view' }).click();
    const card = page.locator('.react-flow__node-tool').nth(55);
    const at = await card.boundingBox();
    if (!at) throw new Error('node n55 is not on screen');
    const drag = await framesWhile(page, async () => {
      await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
      await page.mouse.down();
      for (let k = 1; k <= 30; k++)
        await page.mouse.move(at.x + at.width / 2 + k * 6, at.y + at.height / 2 + k * 3);
      await page.mouse.up();
    });

    // compile + validate: the load's check, then one per delete and one per undo.
    for (let k = 0; k < 5; k++) {
      await page
        .locator('.react-flow__node-tool')
        .nth(100 + k)
        .click();
      await page.keyboard.press('Delete');
      await page.keyboard.press('Control+z');
    }
    const checks = await page.evaluate(() =>
      (globalThis as unknown as FlowPageWindow).performance
        .getEntriesByName('switchyard:flow-check')
        .map((e) => e.duration),
    );
    const worst = (xs: number[]) => r1(Math.max(...xs));
    const maxFrame = Math.max(worst(pan), worst(zoom), worst(drag));
    const checkMedian = r1(median(checks));
    return {
      nodes: NODES,
      open: { medianMs: r1(median(opens)), roundsMs: opens.map(r1) },
      interact: {
        panMaxFrameMs: worst(pan),
        zoomMaxFrameMs: worst(zoom),
        dragMaxFrameMs: worst(drag),
        frames: pan.length + zoom.length + drag.length,
        goal: 'no frame over 33 ms while panning, zooming and dragging a node',
        goalMet: maxFrame <= 33,
      },
      check: {
        samples: checks.length,
        medianMs: checkMedian,
        maxMs: checks.length ? worst(checks) : NaN,
        goal: 'compile + validate ≤ 20 ms',
        goalMet: checks.length > 0 && checkMedian <= 20,
      },
    };
  } finally {
    await context.close();
  }
}
