import { act, render, screen } from '@testing-library/react';
import type { RunEvent } from '@switchyard/contracts';
import DagView from './DagView';
import { layoutDag } from './layout';
import { applyEvent, emptyRun, type RunView } from './model';

// xyflow measures its container and nodes; jsdom has no layout, so give it the sizes a browser would.
class FakeResizeObserver {
  constructor(private readonly cb: ResizeObserverCallback) {}
  observe(target: Element) {
    this.cb(
      [{ target, contentRect: { width: 800, height: 400 } } as unknown as ResizeObserverEntry],
      this as never,
    );
  }
  unobserve() {}
  disconnect() {}
}

beforeAll(() => {
  globalThis.ResizeObserver = FakeResizeObserver as unknown as typeof ResizeObserver;
  Object.defineProperties(HTMLElement.prototype, {
    offsetWidth: { configurable: true, get: () => 800 },
    offsetHeight: { configurable: true, get: () => 400 },
  });
  (globalThis as { DOMMatrixReadOnly?: unknown }).DOMMatrixReadOnly = class {
    m22 = 1;
  };
});

let seq = 0;
const at = '2026-12-03T00:00:00.000Z';
const runId = '00000000-0000-4000-8000-000000000001';
function ev(type: string, data: Record<string, unknown>): RunEvent {
  seq += 1;
  return { runId, seq, at, type, data } as unknown as RunEvent;
}

function planned(): RunView {
  seq = 0;
  const view = emptyRun(runId);
  applyEvent(
    view,
    ev('plan_ready', {
      plan: {
        steps: [
          { id: 'a', tool: 'wait', description: '', arguments: {}, dependsOn: [] },
          { id: 'b', tool: 'wait', description: '', arguments: {}, dependsOn: [] },
          { id: 'c', tool: 'wait', description: '', arguments: {}, dependsOn: ['a', 'b'] },
        ],
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
