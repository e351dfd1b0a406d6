import { act, fireEvent, render, screen } from '@testing-library/react';
import type { RunEvent } from '@switchyard/contracts';
import DagView, { directionFor, fitTransform, TOP_DOWN_BELOW_PX } from './DagView';
import { layoutDag, NODE_H, NODE_W } from './layout';
import { applyEvent, emptyRun, type RunView } from './model';

// jsdom lays nothing out: the viewport is given the size a browser would give it, and a resize is
// told by hand to whatever observes it (jsdom has no ResizeObserver). As in a browser, an observer
// reports the size once when it starts observing (a browser does it in that frame, before paint).
let viewportWidth = 800;
const resizeCallbacks = new Set<() => void>();
const resizeTo = (width: number) => {
  viewportWidth = width;
  act(() => resizeCallbacks.forEach((cb) => cb()));
};
beforeAll(() => {
  Object.defineProperties(HTMLElement.prototype, {
    clientWidth: { configurable: true, get: () => viewportWidth },
    clientHeight: { configurable: true, get: () => 400 },
  });
  globalThis.ResizeObserver = class {
    private readonly cb: () => void;
    constructor(cb: () => void) {
      this.cb = () => cb();
    }
    observe() {
      resizeCallbacks.add(this.cb);
      this.cb();
    }
    unobserve() {}
    disconnect() {
      resizeCallbacks.delete(this.cb);
    }
  } as unknown as typeof ResizeObserver;
});
afterEach(() => {
  viewportWidth = 800;
});

let seq = 0;
const at = '2026-12-03T00:00:00.000Z';
const runId = '00000000-0000-4000-8000-000000000001';
function ev(type: string, data: Record<string, unknown>): RunEvent {
  seq += 1;
  return { runId, seq, at, type, data } as unknown as RunEvent;
}

/** A run whose plan has these steps (id → the steps it depends on): a, b, then c after both, unless told. */
function planned(deps: Record<string, string[]> = { a: [], b: [], c: ['a', 'b'] }): RunView {
  seq = 0;
  const view = emptyRun(runId);
  applyEvent(
    view,
    ev('plan_ready', {
      plan: {
        steps: Object.entries(deps).map(([id, dependsOn]) => ({
          id,
          tool: 'wait',
          description: '',
          arguments: {},
          dependsOn,
        })),
      },
    }),
  );
  return view;
}

const nodeStatus = (id: string) =>
  document.querySelector(`.dag-node[data-step-id="${id}"]`)?.getAttribute('data-status');

describe('the run DAG', () => {
  it('lays steps out left to right by dependency level', () => {
    const pos = layoutDag([
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
      { id: 'c', dependsOn: ['a', 'b'] },
      { id: 'd', dependsOn: ['c', 'ghost'] },
    ]);
    const x = (id: string) => pos.get(id)?.x ?? NaN;
    expect(x('a')).toBe(x('b'));
    expect(x('c')).toBeGreaterThan(x('a'));
    expect(x('d')).toBeGreaterThan(x('c'));
    expect(pos.get('a')?.y).not.toBe(pos.get('b')?.y);
  });

  it('lays steps out top to bottom when asked: a step below what it depends on', () => {
    const pos = layoutDag(
      [
        { id: 'a', dependsOn: [] },
        { id: 'b', dependsOn: [] },
        { id: 'c', dependsOn: ['a', 'b'] },
      ],
      'TB',
    );
    const y = (id: string) => pos.get(id)?.y ?? NaN;
    expect(y('a')).toBe(y('b'));
    expect(y('c')).toBeGreaterThan(y('a') + NODE_H);
    expect(pos.get('a')?.x).not.toBe(pos.get('b')?.x);
  });

  it('draws the plan top to bottom in a viewport too narrow for two levels side by side, and back', () => {
    expect(directionFor(TOP_DOWN_BELOW_PX - 1)).toBe('TB');
    expect(directionFor(TOP_DOWN_BELOW_PX)).toBe('LR');
    const view = planned();
    resizeTo(360);
    render(<DagView steps={[...view.steps.values()]} />);
    const dag = screen.getByTestId('dag');
    const top = (id: string) =>
      parseFloat((document.querySelector(`.dag-node[data-step-id="${id}"]`) as HTMLElement).style.top);
    const left = (id: string) =>
      parseFloat((document.querySelector(`.dag-node[data-step-id="${id}"]`) as HTMLElement).style.left);
    expect(dag.dataset['direction']).toBe('TB');
    expect(top('c')).toBeGreaterThan(top('a'));
    // An edge leaves the bottom of the card depended on and reaches the top of the step.
    const edge = document.querySelector('.dag-edge')?.getAttribute('d') ?? '';
    const [x1, y1] = /^M([\d.]+),([\d.]+)/.exec(edge)?.slice(1).map(Number) ?? [];
    expect(y1).toBeCloseTo(top('a') + NODE_H);
    expect(x1).toBeCloseTo(left('a') + NODE_W / 2);

    resizeTo(900);
    expect(dag.dataset['direction']).toBe('LR');
    expect(left('c')).toBeGreaterThan(left('a'));
  });

  it('shows a chain whole at full scale in a phone-wide viewport (left to right it did not fit)', () => {
    const view = planned({ a: [], b: ['a'] });
    resizeTo(340);
    render(<DagView steps={[...view.steps.values()]} />);
    const layer = document.querySelector('.dag-layer') as HTMLElement;
    expect(parseFloat(layer.style.width)).toBeLessThan(340 - 48);
    expect(layer.style.transform).toMatch(/scale\(1\)$/);
  });

  it('draws a node per step with its live status, effect and retry badges', async () => {
    const view = planned();
    const { rerender } = render(<DagView steps={[...view.steps.values()]} />);
    await act(async () => undefined);
    expect(['a', 'b', 'c'].map(nodeStatus)).toEqual(['queued', 'queued', 'queued']);

    applyEvent(
      view,
      ev('step_start', {
        stepId: 'a',
        tool: 'wait',
        effect: 'read',
        attempt: 1,
        description: '',
        arguments: {},
        permission: { decision: 'allow', reason: 'reads' },
      }),
    );
    applyEvent(
      view,
      ev('step_retry', {
        stepId: 'a',
        tool: 'wait',
        attempt: 1,
        code: 'timeout',
        error: 'slow',
        delayMs: 10,
      }),
    );
    applyEvent(
      view,
      ev('step_complete', {
        stepId: 'b',
        tool: 'wait',
        attempt: 0,
        result: 2,
        truncated: false,
        pinned: true,
      }),
    );
    applyEvent(
      view,
      ev('step_failed', {
        stepId: 'c',
        tool: 'wait',
        attempt: 1,
        error: 'boom',
        cancelled: false,
        code: 'tool_failed',
      }),
    );
    rerender(<DagView steps={[...view.steps.values()].map((s) => ({ ...s }))} />);
    await act(async () => undefined);
    expect(['a', 'b', 'c'].map(nodeStatus)).toEqual(['running', 'pinned', 'failed']);
    const a = document.querySelector('.dag-node[data-step-id="a"]') as HTMLElement;
    expect(a.textContent).toContain('read');
    expect(a.textContent).toContain('retry 1');
    expect(screen.getAllByText('wait')).toHaveLength(3);
  });

  it('draws one edge per known dependency and selects a step when its card is pressed', () => {
    const view = planned();
    const picked: string[] = [];
    render(<DagView steps={[...view.steps.values()]} onSelect={(id) => picked.push(id)} />);
    expect(document.querySelectorAll('.dag-edge')).toHaveLength(2);
    fireEvent.click(document.querySelector('.dag-node[data-step-id="c"]') as HTMLElement);
    expect(picked).toEqual(['c']);
    // The fitted view is applied before the first paint: the layer is centred, never at 0,0 scale 1.
    const layer = document.querySelector('.dag-layer') as HTMLElement;
    expect(layer.style.transform).toMatch(/^translate\([\d.]+px,\s*[\d.]+px\) scale\(1\)$/);
    expect(screen.getByRole('button', { name: 'Zoom in' })).toBeTruthy();
  });

  it('fits the view again when the viewport changes size, until the person moves it', () => {
    const view = planned();
    resizeTo(500);
    render(<DagView steps={[...view.steps.values()]} />);
    const layer = document.querySelector('.dag-layer') as HTMLElement;
    const xOf = () => Number(/translate\(([\d.]+)px/.exec(layer.style.transform)?.[1]);
    const bounds = { width: parseFloat(layer.style.width), height: parseFloat(layer.style.height) };
    expect(xOf()).toBeCloseTo(fitTransform(bounds, 500, 400).x);
    // The page around it laid out anew: the box grew, and the plan is centred in it again.
    resizeTo(900);
    expect(xOf()).toBeCloseTo(fitTransform(bounds, 900, 400).x);
    // Once the person zoomed, the view is theirs.
    fireEvent.click(screen.getByRole('button', { name: 'Zoom in' }));
    const chosen = layer.style.transform;
    resizeTo(700);
    expect(layer.style.transform).toBe(chosen);
    // Fit gives it back to the fitting.
    fireEvent.click(screen.getByRole('button', { name: 'Fit the plan to the view' }));
    resizeTo(600);
    expect(xOf()).toBeCloseTo(fitTransform(bounds, 600, 400).x);
  });

  it('fits a small plan whole and centred, and a huge one from its first level at a readable scale', () => {
    const small = fitTransform({ width: 400, height: 200 }, 800, 400);
    expect(small.k).toBe(1);
    expect([small.x, small.y]).toEqual([200, 100]);

    const wide = fitTransform({ width: 900, height: 300 }, 800, 400);
    expect(wide.k).toBeCloseTo((800 - 48) / 900);
    expect(wide.x).toBeCloseTo((800 - 900 * wide.k) / 2);

    // A 64-step chain: showing it whole would shrink each card to a few pixels.
    const chain = fitTransform({ width: 64 * (NODE_W + 64), height: NODE_H }, 800, 400);
    expect(chain.k).toBe(0.8);
    expect(chain.x).toBe(24);
    expect(chain.y).toBeCloseTo((400 - NODE_H * 0.8) / 2);
  });

  it('ignores an event it has already applied (a replay after a reconnect)', () => {
    const view = planned();
    const done = ev('step_complete', { stepId: 'a', tool: 'wait', attempt: 1, result: 1, truncated: false });
    expect(applyEvent(view, done)).toBe(true);
    const retry = { ...done, seq: done.seq - 1, type: 'step_retry' } as RunEvent;
    expect(applyEvent(view, retry)).toBe(false);
    expect(applyEvent(view, done)).toBe(false);
    expect(view.steps.get('a')?.status).toBe('completed');
    expect(view.steps.get('a')?.retries).toBe(0);
  });
});
