import { memo, useContext, useState } from 'react';
import { BaseEdge, EdgeLabelRenderer, getBezierPath, type EdgeProps } from '@xyflow/react';
import { useI18n } from '../../i18n/i18n';
import { NODE_COLORS } from '../tokens';
import { CanvasInfoContext } from './store';

/** A bezier edge blending its source's colour into its target's, with a delete button on hover. */
export const GradientEdge = memo(function GradientEdge(props: EdgeProps) {
  const { id, source, target, sourceX, sourceY, targetX, targetY, sourcePosition, targetPosition, selected } =
    props;
  const { t } = useI18n();
  const info = useContext(CanvasInfoContext);
  const [hover, setHover] = useState(false);
  // The ends' colours come with the edge (FlowCanvas): a selector per edge would run on every
  // store update of a drag, for every edge.
  const { from, to } = (props.data ?? {}) as { from?: string; to?: string };
  const [path, labelX, labelY] = getBezierPath({
    sourceX,
    sourceY,
    sourcePosition,
    targetX,
    targetY,
    targetPosition,
  });
  const gradient = `flow-edge-${id.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <g onMouseEnter={() => setHover(true)} onMouseLeave={() => setHover(false)} className="flow-edge">
      <defs>
        <linearGradient
          id={gradient}
          gradientUnits="userSpaceOnUse"
          x1={sourceX}
          y1={sourceY}
          x2={targetX}
          y2={targetY}
        >
          <stop offset="0%" stopColor={from ?? NODE_COLORS.tool} />
          <stop offset="100%" stopColor={to ?? NODE_COLORS.tool} />
        </linearGradient>
      </defs>
      <BaseEdge
        id={id}
        path={path}
        style={{ stroke: `url(#${gradient})`, strokeWidth: selected ? 3 : 2 }}
        interactionWidth={24}
      />
      {hover || selected ? (
        <EdgeLabelRenderer>
          <button
            type="button"
            className="flow-edge-delete nodrag nopan"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
            aria-label={t('flow.edge.delete', { from: source, to: target })}
            onMouseEnter={() => setHover(true)}
            onMouseLeave={() => setHover(false)}
            onClick={() => info.actions.deleteEdge(id)}
          >
            ×
          </button>
        </EdgeLabelRenderer>
      ) : null}
    </g>
  );
});
