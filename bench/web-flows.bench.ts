import type { Browser, Page } from 'playwright-core';

/*
 * The flow builder's part of `npm run bench -- web`, in the browser at 1280×800. A saved flow holds
 * at most 64 steps (the seed's cap, enforced at save), so the 200-node flow is the largest one can
 * save: 64 wait steps (8 levels of 8, each fed by the one a level before) and 136 sticky notes.
 *   open:     navigation start → all 200 nodes in the DOM and one frame drawn after (first
 *             interactive frame), median of ROUNDS fresh loads.
 *   check:    the browser's compile + validate of the 64-step flow (the same code the server runs),
 *             timed by the editor's own user-timing measure `switchyard:flow-check`, on load and after
 *             each delete and undo of a node.
 *   interact: then 136 more tool nodes are pasted in (200 tool cards, 336 nodes: heavier than
 *             required) and every frame interval (requestAnimationFrame) is recorded while the mouse
 *             pans the canvas, the wheel zooms in and out, and a node is dragged; the longest frame and
 *             the missed vsyncs. rAF intervals come in whole vsyncs (16.7 ms at 60 Hz) give or take a
 *             few tenths, so a frame that missed one vsync reads 33.2-33.4 ms: "over 33 ms" would pass
 *             some of those and fail others by jitter alone. A frame counts as missed when it is longer
 *             than 1.5 vsyncs (25 ms), and the goal is none missed (the same goal, read without jitter).
 *   rawPeer:  the same cards as plain divs moved by bare DOM code, same gestures, same browser:
 *             the floor of this machine, and the builder's frames as ratios of it.
 */

const STEPS = 64;
const NOTES = 136;
const PASTED = 136;
const ROUNDS = 5;
const r1 = (x: number) => Math.round(x * 10) / 10;
/** One vsync at 60 Hz, and the interval above which a frame has missed at least one. */
const VSYNC_MS = 1000 / 60;
const MISSED_MS = 1.5 * VSYNC_MS;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

interface FlowPageWindow {
  __frames: number[];
  __gen?: number;
  document: { querySelectorAll(selector: string): { length: number } };
  localStorage: { setItem(k: string, v: string): void };
  performance: { now(): number; getEntriesByName(name: string): { duration: number }[] };
  requestAnimationFrame(cb: (now: number) => void): void;
}

const tool = (id: string, x: number, y: number, value: unknown) => ({
  id,
  type: 'tool',
  position: { x, y },
  data: { tool: 'wait', arguments: { ms: 0, value } },
});

/** The 200-node flow: 64 steps in 8 levels, 136 notes in rows below them. */
export function bigFlowGraph(): Record<string, unknown> {
  const cols = 8;
  const steps = Array.from({ length: STEPS }, (_, i) =>
    tool(
      `n${i}`,
      320 + Math.floor(i / cols) * 320,
      (i % cols) * 110,
      i >= cols ? `{{node.n${i - cols}.result}}` : i,
    ),
  );
  const edges = steps
    .filter((_, i) => i >= cols)
    .map((n, k) => ({ id: `e${k}`, source: `n${Number(n.id.slice(1)) - cols}`, target: n.id }));
  const notes = Array.from({ length: NOTES }, (_, i) => ({
    id: `note${i}`,
    type: 'note',
    position: { x: 320 + (i % 17) * 160, y: 960 + Math.floor(i / 17) * 140 },
    data: { text: `note ${i}` },
    width: 140,
    height: 110,
  }));
  return {
    nodes: [{ id: 'start', type: 'start', position: { x: 0, y: 390 }, data: {} }, ...steps, ...notes],
    edges,
  };
}

/** What the editor's clipboard holds after copying `n` connected wait nodes. */
export function clipOf(n: number): { nodes: unknown[]; edges: unknown[] } {
  const nodes = Array.from({ length: n }, (_, i) =>
    tool(`p${i}`, 320 + (i % 17) * 300, 2200 + Math.floor(i / 17) * 110, i),
  );
  const edges = nodes.slice(1).map((_, i) => ({ id: `pe${i}`, source: `p${i}`, target: `p${i + 1}` }));
  return { nodes, edges };
}

async function framesWhile(page: Page, act: () => Promise<void>): Promise<number[]> {
  await page.evaluate(() => {
    const w = globalThis as unknown as FlowPageWindow;
    // One recording at a time: a loop whose generation is over stops at its next frame.
    const gen = (w.__gen = (w.__gen ?? 0) + 1);
    w.__frames = [];
    let last = w.performance.now();
    const tick = (now: number) => {
      if (w.__gen !== gen) return;
      w.__frames.push(now - last);
      last = now;
      w.requestAnimationFrame(tick);
    };
    w.requestAnimationFrame(tick);
  });
  await act();
  return page.evaluate(() => {
    const w = globalThis as unknown as FlowPageWindow;
    w.__gen = (w.__gen ?? 0) + 1;
    return w.__frames;
  });
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The same three gestures on any canvas: a pan of the background, a zoom, a drag of one card. */
async function gestures(page: Page, pane: Box, card: () => Promise<Box>) {
  const cx = pane.x + pane.width / 2;
  const cy = pane.y + pane.height / 2;
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
  const at = await card();
  const drag = await framesWhile(page, async () => {
    await page.mouse.move(at.x + at.width / 2, at.y + at.height / 2);
    await page.mouse.down();
    for (let k = 1; k <= 30; k++)
      await page.mouse.move(at.x + at.width / 2 + k * 6, at.y + at.height / 2 + k * 3);
    await page.mouse.up();
  });
  return { pan, zoom, drag };
}

interface PeerWindow {
  document: {
    body: PeerElement;
    createElement(tag: string): PeerElement;
  };
  addEventListener(type: string, fn: (e: PeerEvent) => void, opts?: unknown): void;
}
interface PeerElement {
  style: Record<string, string>;
  textContent: string;
  className: string;
  appendChild(child: PeerElement): void;
  addEventListener(type: string, fn: (e: PeerEvent) => void): void;
  getBoundingClientRect(): Box;
}
interface PeerEvent {
  clientX: number;
  clientY: number;
  deltaY: number;
  preventDefault(): void;
  stopPropagation(): void;
}

/**
 * The raw peer: the same cards at the same places as plain absolutely positioned divs, panned,
 * zoomed and dragged by a few lines of DOM code (no framework, no state): what this browser on this
 * machine manages for that many cards at best.
 */
async function rawPeer(browser: Browser, cards: { x: number; y: number; label: string }[]) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.evaluate((list) => {
      const w = globalThis as unknown as PeerWindow;
      const el = (tag: string, css: Record<string, string>, text = '') => {
        const e = w.document.createElement(tag);
        Object.assign(e.style, css);
        e.textContent = text;
        return e;
      };
      const viewport = el('div', {
        position: 'fixed',
        inset: '0',
        overflow: 'hidden',
        background: '#1a1a1a',
      });
      const world = el('div', { position: 'absolute', left: '0', top: '0', transformOrigin: '0 0' });
      viewport.appendChild(world);
      w.document.body.appendChild(viewport);
      const xs = list.map((c) => c.x);
      const ys = list.map((c) => c.y);
      const [minX, minY] = [Math.min(...xs), Math.min(...ys)];
      const spanX = Math.max(...xs) + 260 - minX;
      const spanY = Math.max(...ys) + 84 - minY;
      let scale = Math.min(1280 / spanX, 800 / spanY) * 0.9;
      let tx = (1280 - spanX * scale) / 2 - minX * scale;
      let ty = (800 - spanY * scale) / 2 - minY * scale;
      const place = () => (world.style.transform = `translate(${tx}px, ${ty}px) scale(${scale})`);
      place();
      let dragging: { el: PeerElement; x: number; y: number; sx: number; sy: number } | null = null;
      let panning: { x: number; y: number; tx: number; ty: number } | null = null;
      for (const c of list) {
        const card = el('div', {
          position: 'absolute',
          left: `${c.x}px`,
          top: `${c.y}px`,
          width: '260px',
          height: '84px',
          boxSizing: 'border-box',
          padding: '10px 12px',
          borderRadius: '10px',
          border: '1px solid #2c7f73',
          background: 'rgb(15, 44, 39)',
          color: '#eee',
          font: '14px system-ui',
        });
        const badge = el('div', {
          float: 'left',
          width: '40px',
          height: '40px',
          borderRadius: '8px',
          background: '#4ddbbb',
          marginRight: '10px',
        });
        card.appendChild(badge);
        card.appendChild(el('strong', { display: 'block' }, c.label));
        card.appendChild(el('code', { color: '#bbb', fontSize: '11.5px' }, 'wait'));
        card.className = 'peer-card';
        card.addEventListener('pointerdown', (e) => {
          e.stopPropagation();
          dragging = { el: card, x: e.clientX, y: e.clientY, sx: c.x, sy: c.y };
        });
        world.appendChild(card);
      }
      viewport.addEventListener('pointerdown', (e) => (panning = { x: e.clientX, y: e.clientY, tx, ty }));
      w.addEventListener('pointermove', (e) => {
        if (dragging) {
          dragging.el.style.left = `${dragging.sx + (e.clientX - dragging.x) / scale}px`;
          dragging.el.style.top = `${dragging.sy + (e.clientY - dragging.y) / scale}px`;
        } else if (panning) {
          tx = panning.tx + e.clientX - panning.x;
          ty = panning.ty + e.clientY - panning.y;
          place();
        }
      });
      w.addEventListener('pointerup', () => (dragging = panning = null));
      viewport.addEventListener('wheel', (e) => {
        e.preventDefault();
        const k = Math.exp(-e.deltaY / 500);
        tx = e.clientX - (e.clientX - tx) * k;
        ty = e.clientY - (e.clientY - ty) * k;
        scale *= k;
        place();
      });
    }, cards);
    return await gestures(page, { x: 0, y: 0, width: 1280, height: 800 }, async () => {
      const box = await page.locator('.peer-card').nth(30).boundingBox();
      if (!box) throw new Error('peer card 30 is not on screen');
      return box;
    });
  } finally {
    await context.close();
  }
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
  const all = 1 + STEPS + NOTES;
  // The editor pastes only what its own owner copied.
  const owner = ((await call('GET', '/api/me')).json['owner'] as { id: string }).id;

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
      .locator('.react-flow__node')
      .nth(all - 1)
      .waitFor();

    const opens: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await page.goto(`${base}/flows/${id}`);
      const seen = await page.waitForFunction(
        (n) => {
          const w = globalThis as unknown as FlowPageWindow;
          if (w.document.querySelectorAll('.react-flow__node').length !== n) return 0;
          return new Promise<number>((resolve) =>
            w.requestAnimationFrame(() => resolve(w.performance.now())),
          );
        },
        all,
        { polling: 'raf' },
      );
      opens.push((await seen.jsonValue()) as number);
    }

    // compile + validate: the load's check, then one per delete and one per undo.
    for (let k = 0; k < 5; k++) {
      await page
        .locator('.react-flow__node-tool')
        .nth(20 + k)
        .click();
      // The editor checks the document once it settles: give each state a moment to be checked.
      await page.keyboard.press('Delete');
      await page.waitForTimeout(200);
      await page.keyboard.press('Control+z');
      await page.waitForTimeout(200);
    }
    const checks = await page.evaluate(() =>
      (globalThis as unknown as FlowPageWindow).performance
        .getEntriesByName('switchyard:flow-check')
        .map((e) => e.duration),
    );

    // 136 more tool nodes through the clipboard: 200 tool cards on the canvas.
    await page.evaluate(
      (clip) => {
        (globalThis as unknown as FlowPageWindow).localStorage.setItem(
          'switchyard.flow-clipboard',
          JSON.stringify(clip),
        );
      },
      { owner, ...clipOf(PASTED) },
    );
    await page.locator('.react-flow__pane').click({ position: { x: 10, y: 10 } });
    await page.keyboard.press('Control+v');
    await page
      .locator('.react-flow__node-tool')
      .nth(STEPS + PASTED - 1)
      .waitFor();
    await page.getByRole('button', { name: 'Fit view', exact: true }).click();

    const pane = await page.locator('.react-flow__pane').boundingBox();
    if (!pane) throw new Error('no canvas on the page');
    const { pan, zoom, drag } = await gestures(page, pane, async () => {
      await page.getByRole('button', { name: 'Fit view', exact: true }).click();
      const box = await page.locator('.react-flow__node-tool').nth(30).boundingBox();
      if (!box) throw new Error('node n30 is not on screen');
      return box;
    });
    const graph = bigFlowGraph() as {
      nodes: { id: string; type: string; position: { x: number; y: number } }[];
    };
    const peer = await rawPeer(browser, [
      ...graph.nodes.map((n) => ({ ...n.position, label: n.id })),
      ...(clipOf(PASTED).nodes as { id: string; position: { x: number; y: number } }[]).map((n) => ({
        ...n.position,
        label: n.id,
      })),
    ]);

    const worst = (xs: number[]) => r1(Math.max(...xs));
    /** Vsyncs missed over a gesture: a 33 ms frame missed one, a 50 ms frame two. */
    const missed = (xs: number[]) =>
      xs.filter((f) => f > MISSED_MS).reduce((n, f) => n + Math.round(f / VSYNC_MS) - 1, 0);
    const missedAll = missed(pan) + missed(zoom) + missed(drag);
    const checkMedian = r1(median(checks));
    return {
      open: {
        nodes: all,
        steps: STEPS,
        notes: NOTES,
        medianMs: r1(median(opens)),
        roundsMs: opens.map(r1),
      },
      check: {
        steps: STEPS,
        samples: checks.length,
        medianMs: checkMedian,
        maxMs: checks.length ? worst(checks) : NaN,
        goal: 'compile + validate ≤ 20 ms',
        goalMet: checks.length > 0 && checkMedian <= 20,
      },
      interact: {
        toolCards: STEPS + PASTED,
        nodes: all + PASTED,
        panMaxFrameMs: worst(pan),
        zoomMaxFrameMs: worst(zoom),
        dragMaxFrameMs: worst(drag),
        frames: pan.length + zoom.length + drag.length,
        missedVsyncs: { pan: missed(pan), zoom: missed(zoom), drag: missed(drag) },
        goal: 'no missed vsync (no frame over 1.5 × 16.7 = 25 ms) while panning, zooming and dragging a node',
        goalMet: missedAll === 0,
      },
      rawPeer: {
        what: 'the same 337 cards as plain divs moved by bare DOM code in the same browser, same gestures',
        panMaxFrameMs: worst(peer.pan),
        zoomMaxFrameMs: worst(peer.zoom),
        dragMaxFrameMs: worst(peer.drag),
        missedVsyncs: { pan: missed(peer.pan), zoom: missed(peer.zoom), drag: missed(peer.drag) },
        ratios: {
          pan: r1(worst(pan) / worst(peer.pan)),
          zoom: r1(worst(zoom) / worst(peer.zoom)),
          drag: r1(worst(drag) / worst(peer.drag)),
        },
      },
    };
  } finally {
    await context.close();
  }
}
