import { memo, useCallback, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { select } from 'd3-selection';
import { zoom, zoomIdentity, type ZoomBehavior, type ZoomTransform } from 'd3-zoom';
import { useI18n } from '../i18n/i18n';
import { NODE_TONE } from './badges';
import { layoutDag, NODE_H, NODE_W, RANK_SEP, type Direction, type LaidOut } from './layout';
import type { StepView } from './model';

/**
 * Zoom limits, and the smallest scale a fit may choose: below it a card cannot be read (its 12 px
 * text drawn at 0.5 was 6 px in the screenshots; at 0.8 it is ~10 px).
 */
const MIN_ZOOM = 0.2;
const MAX_ZOOM = 2;
const MIN_FIT = 0.8;
const FIT_PADDING = 24;
/** How far a control button zooms, and how long its animation takes. */
const ZOOM_STEP = 1.25;
/**
 * A viewport narrower than two levels side by side at the smallest readable scale shows the plan
 * top to bottom: left to right, a phone showed one card and the edge of the next.
 */
export const TOP_DOWN_BELOW_PX = (2 * NODE_W + RANK_SEP) * MIN_FIT + 2 * FIT_PADDING;
/** The card's box is the page's width less its margins and padding (about this much) when the run page is one column. */
const PAGE_CHROME_PX = 60;

/** Top to bottom in a narrow viewport, else left to right. */
export function directionFor(viewportWidth: number): Direction {
  return viewportWidth < TOP_DOWN_BELOW_PX ? 'TB' : 'LR';
}

/**
 * The last few plans laid out, by shape. A render React throws away (one that suspended, or one a
 * newer update interrupted) takes its memos with it: without this the next render laid the plan
 * out again, and on a slow machine the layout is the longest part of drawing a run.
 */
const layouts = new Map<string, Map<string, LaidOut>>();

function layoutOf(shape: string, steps: readonly StepView[], direction: Direction): Map<string, LaidOut> {
  const key = `${direction}|${shape}`;
  let laidOut = layouts.get(key);
  if (!laidOut) {
    laidOut = layoutDag(steps, direction);
    layouts.set(key, laidOut);
    if (layouts.size > 8) layouts.delete(layouts.keys().next().value as string);
  }
  return laidOut;
}

interface Bounds {
  readonly width: number;
  readonly height: number;
}

function boundsOf(positions: ReadonlyMap<string, LaidOut>): Bounds {
  let width = 0;
  let height = 0;
  for (const p of positions.values()) {
    width = Math.max(width, p.x + NODE_W);
    height = Math.max(height, p.y + NODE_H);
  }
  return { width, height };
}

/**
 * The view that shows the whole plan in a `width`×`height` viewport, centred; a plan too large to
 * show readably whole is shown from its first level at the smallest readable scale instead.
 */
export function fitTransform(plan: Bounds, width: number, height: number): ZoomTransform {
  const k = Math.min(
    MAX_ZOOM,
    1,
    Math.max(
      MIN_FIT,
      Math.min(
        (width - 2 * FIT_PADDING) / Math.max(plan.width, 1),
        (height - 2 * FIT_PADDING) / Math.max(plan.height, 1),
      ),
    ),
  );
  const x = plan.width * k <= width - 2 * FIT_PADDING ? (width - plan.width * k) / 2 : FIT_PADDING;
  const y = plan.height * k <= height - 2 * FIT_PADDING ? (height - plan.height * k) / 2 : FIT_PADDING;
  return zoomIdentity.translate(x, y).scale(k);
}

/** A zoom transform as CSS (ZoomTransform's own string is SVG's, without units). */
function cssTransform(t: ZoomTransform): string {
  return `translate(${t.x}px, ${t.y}px) scale(${t.k})`;
}

const StepCard = memo(function StepCard({
  step: s,
  at,
  selected,
  onSelect,
}: {
  step: StepView;
  at: LaidOut;
  selected: boolean;
  onSelect?: ((stepId: string) => void) | undefined;
}) {
  const { t } = useI18n();
  return (
    <button
      type="button"
      className={`dag-node tone-${NODE_TONE[s.status]} ${selected ? 'selected' : ''}`}
      style={{ left: at.x, top: at.y, width: NODE_W, height: NODE_H }}
      data-step-id={s.id}
      data-status={s.status}
      aria-pressed={selected}
      onClick={onSelect ? () => onSelect(s.id) : undefined}
    >
      <span className="dag-title">
        <strong>{s.id}</strong>
        <span className={`badge badge-${NODE_TONE[s.status]}`}>{t(`step.${s.status}`)}</span>
      </span>
      <span className="dag-sub">
        <code>{s.tool}</code>
        {s.effect ? <span className={`badge effect-${s.effect}`}>{s.effect}</span> : null}
        {s.retries > 0 ? <span className="badge badge-warn">{t('step.retry', { n: s.retries })}</span> : null}
      </span>
    </button>
  );
});

/**
 * One dependency: from the right side of the step depended on to the left side of the step (left
 * to right), or from its bottom to the step's top (top to bottom).
 */
function edgePath(from: LaidOut, to: LaidOut, direction: Direction): string {
  if (direction === 'TB') {
    const x1 = from.x + NODE_W / 2;
    const y1 = from.y + NODE_H;
    const x2 = to.x + NODE_W / 2;
    const y2 = to.y;
    const bend = Math.max(16, (y2 - y1) / 2);
    return `M${x1},${y1} C${x1},${y1 + bend} ${x2},${y2 - bend} ${x2},${y2}`;
  }
  const x1 = from.x + NODE_W;
  const y1 = from.y + NODE_H / 2;
  const x2 = to.x;
  const y2 = to.y + NODE_H / 2;
  const bend = Math.max(24, (x2 - x1) / 2);
  return `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
}

/**
 * The plan as a DAG, levels left to right (dagre's layout), every node showing its live status;
 * drag to pan, wheel or the buttons to zoom, a card to select its step.
 *
 * The run page only watches a plan (the flow builder is where plans are edited, with React Flow):
 * cards and edges are plain HTML and SVG at dagre's positions, in one layer that d3-zoom moves.
 * An editor's per-node measuring, stores and handles cost more than the rest of the page's first
 * drawing on a slow machine, for a view that never edits.
 */
export default function DagView({
  steps,
  selected,
  onSelect,
}: {
  steps: readonly StepView[];
  selected?: string | undefined;
  onSelect?: (stepId: string) => void;
}) {
  const { t } = useI18n();
  // The layout depends on the plan's shape only, not on statuses: statuses change 500 times a
  // second, the shape when the plan does.
  const shape = steps.map((s) => `${s.id}<${s.dependsOn.join(',')}`).join(';');
  // First guessed from the window (the run page is one column when narrow), so a phone's first
  // frame is drawn top to bottom already; then taken from the viewport as observed.
  const [direction, setDirection] = useState<Direction>(() =>
    directionFor(window.innerWidth - PAGE_CHROME_PX),
  );
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const positions = useMemo(() => layoutOf(shape, steps, direction), [shape, direction]);
  const bounds = useMemo(() => boundsOf(positions), [positions]);
  const viewport = useRef<HTMLDivElement>(null);
  const layer = useRef<HTMLDivElement>(null);
  const behavior = useRef<ZoomBehavior<HTMLDivElement, unknown> | null>(null);
  /** The person panned or zoomed: the view is theirs, a resize no longer fits it again. */
  const moved = useRef(false);

  // Fitted when the viewport is first observed: a ResizeObserver reports an element's size once
  // after it is observed, in the frame's rendering step after layout and before paint, so no frame
  // shows the plan unfitted, and its size is read where layout has just been done (read in the
  // effect, it forced a layout of the whole page there, which the frame then did again: a third
  // of the time to draw a 64-step run). A new shape is fitted again; a new status keeps whatever
  // view the person chose. Until they move it, the view is fitted again whenever the viewport
  // changes size (the page around it laid out anew, the window resized): a fit made for the first
  // width left a plan off-centre once the box grew.
  useLayoutEffect(() => {
    const el = viewport.current;
    if (!el) return undefined;
    const zoomer = zoom<HTMLDivElement, unknown>()
      .scaleExtent([MIN_ZOOM, MAX_ZOOM])
      .on('zoom', (e: { transform: ZoomTransform; sourceEvent: unknown }) => {
        if (e.sourceEvent) moved.current = true;
        if (layer.current) layer.current.style.transform = cssTransform(e.transform);
      });
    behavior.current = zoomer;
    const view = select(el).call(zoomer);
    const refit = () => zoomer.transform(view, fitTransform(bounds, el.clientWidth, el.clientHeight));
    moved.current = false;
    const resized = new ResizeObserver(() => {
      const fits = directionFor(el.clientWidth);
      // Laid out again for the new direction: the effect then runs anew with its bounds and fits.
      if (fits !== direction) setDirection(fits);
      else if (!moved.current) refit();
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      view.on('.zoom', null);
      behavior.current = null;
    };
  }, [bounds, direction]);

  const zoomBy = useCallback((factor: number) => {
    if (!viewport.current || !behavior.current) return;
    moved.current = true;
    behavior.current.scaleBy(select(viewport.current), factor);
  }, []);
  const fit = useCallback(() => {
    const el = viewport.current;
    if (!el || !behavior.current) return;
    moved.current = false;
    behavior.current.transform(select(el), fitTransform(bounds, el.clientWidth, el.clientHeight));
  }, [bounds]);

  const edges = steps.flatMap((s) =>
    s.dependsOn.flatMap((d) => {
      const from = positions.get(d);
      const to = positions.get(s.id);
      return from && to
        ? [{ id: `${d}->${s.id}`, d: edgePath(from, to, direction), running: s.status === 'running' }]
        : [];
    }),
  );

  return (
    <div className="dag" data-testid="dag" data-direction={direction}>
      <div className="dag-viewport" ref={viewport}>
        <div className="dag-layer" ref={layer} style={{ width: bounds.width, height: bounds.height }}>
          <svg className="dag-edges" width={bounds.width} height={bounds.height} aria-hidden="true">
            {edges.map((e) => (
              <path key={e.id} d={e.d} className={e.running ? 'dag-edge running' : 'dag-edge'} />
            ))}
          </svg>
          {steps.map((s) => {
            const at = positions.get(s.id);
            return at ? (
              <StepCard key={s.id} step={s} at={at} selected={s.id === selected} onSelect={onSelect} />
            ) : null;
          })}
        </div>
      </div>
      <div className="dag-controls" role="group" aria-label={t('dag.controls')}>
        <button
          type="button"
          onClick={() => zoomBy(ZOOM_STEP)}
          aria-label={t('dag.zoomIn')}
          title={t('dag.zoomIn')}
        >
          +
        </button>
        <button
          type="button"
          onClick={() => zoomBy(1 / ZOOM_STEP)}
          aria-label={t('dag.zoomOut')}
          title={t('dag.zoomOut')}
        >
          −
        </button>
        <button type="button" onClick={fit} aria-label={t('dag.fit')} title={t('dag.fit')}>
          ⤢
        </button>
      </div>
    </div>
  );
}
