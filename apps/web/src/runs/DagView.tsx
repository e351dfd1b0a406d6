import { memo, useCallback, useMemo, useRef } from 'react';
import {
  Background,
  Controls,
  Handle,
  Position,
  ReactFlow,
  type Edge,
  type Node,
  type NodeProps,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useI18n } from '../i18n/i18n';
import { useTheme } from '../ui/theme';
import { NODE_TONE } from './badges';
import { layoutDag, NODE_H, NODE_W } from './layout';
import type { StepView } from './model';

type StepNode = Node<{ step: StepView; selected: boolean }, 'step'>;

const StepCard = memo(function StepCard({ data }: NodeProps<StepNode>) {
  const { t } = useI18n();
  const s = data.step;
  return (
    <div
      className={`dag-node tone-${NODE_TONE[s.status]} ${data.selected ? 'selected' : ''}`}
      style={{ width: NODE_W, height: NODE_H }}
      data-step-id={s.id}
      data-status={s.status}
    >
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="dag-title">
        <strong>{s.id}</strong>
        <span className={`badge badge-${NODE_TONE[s.status]}`}>{t(`step.${s.status}`)}</span>
      </div>
      <div className="dag-sub">
        <code>{s.tool}</code>
        {s.effect ? <span className={`badge effect-${s.effect}`}>{s.effect}</span> : null}
        {s.retries > 0 ? <span className="badge badge-warn">{t('step.retry', { n: s.retries })}</span> : null}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
});

const nodeTypes = { step: StepCard };
const MEASURED = { width: NODE_W, height: NODE_H };
const PRO_OPTIONS = { hideAttribution: true };

/** The plan as a DAG, levels left to right, every node showing its live status. */
export default function DagView({
  steps,
  selected,
  onSelect,
}: {
  steps: readonly StepView[];
  selected?: string | undefined;
  onSelect?: (stepId: string) => void;
}) {
  const { theme } = useTheme();
  // The layout depends on the plan's shape only, not on statuses: statuses change 500 times a
  // second, the shape when the plan does.
  const shape = steps.map((s) => `${s.id}<${s.dependsOn.join(',')}`).join(';');
  // eslint-disable-next-line react-hooks/exhaustive-deps
  const positions = useMemo(() => layoutDag(steps), [shape]);
  // A node keeps its object while its step and selection do: xyflow and the memoised card then
  // skip it when another step changes.
  const cache = useRef(new Map<string, StepNode>());
  const nodes = useMemo<StepNode[]>(() => {
    const next = new Map<string, StepNode>();
    const out = steps.map((s) => {
      const position = positions.get(s.id) ?? { x: 0, y: 0 };
      const old = cache.current.get(s.id);
      const node: StepNode =
        old && old.data.step === s && old.data.selected === (s.id === selected) && old.position === position
          ? old
          : {
              id: s.id,
              type: 'step',
              position,
              data: { step: s, selected: s.id === selected },
              draggable: false,
              connectable: false,
              width: NODE_W,
              height: NODE_H,
              // A node object xyflow has not seen loses its measurements unless it brings them:
              // without these it is hidden, observed and measured again (a forced layout and
              // a second, synchronous render of the whole flow in the same frame).
              measured: MEASURED,
            };
      next.set(s.id, node);
      return node;
    });
    cache.current = next;
    return out;
  }, [steps, positions, selected]);
  // Edges keep their objects too while their target's running state does.
  const edgeCache = useRef(new Map<string, Edge>());
  const edges = useMemo<Edge[]>(() => {
    const next = new Map<string, Edge>();
    const out = steps.flatMap((s) =>
      s.dependsOn.map((d) => {
        const id = `${d}->${s.id}`;
        const animated = s.status === 'running';
        const old = edgeCache.current.get(id);
        const edge = old && old.animated === animated ? old : { id, source: d, target: s.id, animated };
        next.set(id, edge);
        return edge;
      }),
    );
    edgeCache.current = next;
    return out;
  }, [steps]);
  const onNodeClick = useCallback((_: unknown, n: StepNode) => onSelect?.(n.id), [onSelect]);
  return (
    <div className="dag" data-testid="dag">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        fitView
        minZoom={0.2}
        nodesDraggable={false}
        nodesConnectable={false}
        proOptions={PRO_OPTIONS}
        onNodeClick={onNodeClick}
        colorMode={theme}
      >
        <Background gap={20} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
