import { memo, useCallback, useContext, type CSSProperties } from 'react';
import { Handle, NodeResizer, Position, type NodeProps } from '@xyflow/react';
import { useI18n } from '../../i18n/i18n';
import { NODE_TONE } from '../../runs/badges';
import { TOOL_W } from '../doc';
import { Icon } from '../icons';
import { darken, kindOfNode, NODE_COLORS, PORT_COLORS } from '../tokens';
import { portTypeOf, type PortType, type ToolNodeData } from '../types';
import { CanvasInfoContext, useCanvasInfo } from './store';

export interface Port {
  readonly name: string;
  readonly type: PortType;
  readonly description?: string;
  readonly example?: unknown;
}

/** The top-level fields a JSON Schema object declares, as ports. */
export function portsOf(schema: unknown): Port[] {
  const props = (schema as { properties?: Record<string, unknown> } | undefined)?.properties;
  if (!props || typeof props !== 'object') return [];
  return Object.entries(props).map(([name, s]) => {
    const field = (s ?? {}) as { description?: unknown; examples?: unknown; example?: unknown };
    const example = Array.isArray(field.examples) ? field.examples[0] : field.example;
    return {
      name,
      type: portTypeOf(s),
      ...(typeof field.description === 'string' ? { description: field.description } : {}),
      ...(example !== undefined ? { example } : {}),
    };
  });
}

function portTitle(p: Port, typeLabel: string): string {
  const lines = [`${p.name}: ${typeLabel}`];
  if (p.description) lines.push(p.description);
  if (p.example !== undefined) lines.push(`e.g. ${JSON.stringify(p.example)}`);
  return lines.join('\n');
}

const MAX_PORTS = 4;

/**
 * Below this zoom a card's text is a few pixels tall: the canvas gets the class `far` and cards
 * show only their colour and name (CSS hides the rest), so an overview of hundreds of nodes pans and
 * zooms without painting what nobody can read, and crossing it costs one style pass, not a render.
 * That pass still repaints every card, so the canvas switches only once the zoom settles (FlowCanvas).
 */
export const FAR_ZOOM = 0.45;

function Ports({ ports, side }: { ports: readonly Port[]; side: 'in' | 'out' }) {
  const { t } = useI18n();
  if (ports.length === 0) return null;
  const shown = ports.slice(0, MAX_PORTS);
  return (
    <ul
      className={`flow-ports flow-ports-${side}`}
      aria-label={t(side === 'in' ? 'flow.ports.in' : 'flow.ports.out')}
    >
      {shown.map((p) => (
        <li key={p.name} title={portTitle(p, t(`flow.type.${p.type}`))} data-port-type={p.type}>
          <i style={{ background: PORT_COLORS[p.type] }} />
          {p.name}
        </li>
      ))}
      {ports.length > MAX_PORTS ? <li className="more">+{ports.length - MAX_PORTS}</li> : null}
    </ul>
  );
}

function cardStyle(color: string): CSSProperties {
  return { '--node-color': color, '--node-tint': darken(color, 0.8), width: TOOL_W } as CSSProperties;
}

/** The hover-revealed chevron output handle. */
function OutHandle({ connectable = true }: { connectable?: boolean }) {
  return (
    <Handle type="source" position={Position.Right} className="flow-out" isConnectable={connectable}>
      <svg viewBox="0 0 12 12" width="12" height="12" aria-hidden="true">
        <path d="M4 2 L8 6 L4 10" fill="none" stroke="currentColor" strokeWidth="2" />
      </svg>
    </Handle>
  );
}

export const ToolCard = memo(function ToolCard({ id, data, selected }: NodeProps) {
  const { t } = useI18n();
  const d = data as ToolNodeData;
  const tool = useCanvasInfo((i) => i.tool(d.tool));
  const status = useCanvasInfo((i) => i.status(id));
  const issues = useCanvasInfo((i) => i.issuesOf(id));
  const kind = kindOfNode('tool', d.tool, tool?.source);
  const color = NODE_COLORS[kind];
  return (
    <div
      className={`flow-node flow-tool ${selected ? 'selected' : ''} ${issues?.length ? 'has-issues' : ''}`}
      style={cardStyle(color)}
      data-node-id={id}
      data-status={status ?? 'idle'}
    >
      <Handle type="target" position={Position.Left} className="flow-in" />
      <strong className="flow-far-label" aria-hidden="true">
        {d.label || id}
      </strong>
      <div className="flow-node-head">
        <span className="flow-badge" aria-hidden="true">
          <Icon name={kind} size={22} />
        </span>
        <div className="flow-node-text">
          <strong>{d.label || id}</strong>
          <code>{d.tool || t('flow.node.noTool')}</code>
        </div>
        <div className="flow-node-marks">
          {d.pinned ? (
            <span className="flow-pin" title={t('flow.card.pinned')} aria-label={t('flow.card.pinned')}>
              <Icon name="pin" size={14} />
            </span>
          ) : null}
          {d.requiresApproval ? (
            <span className="flow-gate" title={t('flow.card.gated')} aria-label={t('flow.card.gated')}>
              <Icon name="gate" size={14} />
            </span>
          ) : null}
          {status ? (
            <span className={`badge badge-${NODE_TONE[status]}`} data-testid="run-badge">
              {t(`step.${status}`)}
            </span>
          ) : null}
        </div>
      </div>
      {issues?.length ? (
        <p className="flow-node-issue" role="note" title={issues.join('\n')}>
          ⚠ {issues[0]}
          {issues.length > 1 ? ` (+${issues.length - 1})` : ''}
        </p>
      ) : (
        <Ports ports={tool ? portsOf((tool as { outputSchema?: unknown }).outputSchema) : []} side="out" />
      )}
      <OutHandle />
    </div>
  );
});

export const StartCard = memo(function StartCard({ id, selected }: NodeProps) {
  const { t } = useI18n();
  const schema = useCanvasInfo((i) => i.inputs());
  const issues = useCanvasInfo((i) => i.issuesOf(id));
  const color = NODE_COLORS.start;
  const ports = portsOf(schema);
  return (
    <div
      className={`flow-node flow-start ${selected ? 'selected' : ''} ${issues?.length ? 'has-issues' : ''}`}
      style={cardStyle(color)}
      data-node-id={id}
    >
      <strong className="flow-far-label" aria-hidden="true">
        {t('flow.start')}
      </strong>
      <div className="flow-node-head">
        <span className="flow-badge" aria-hidden="true">
          <Icon name="start" size={22} />
        </span>
        <div className="flow-node-text">
          <strong>{t('flow.start')}</strong>
          <code>{t('flow.start.inputs', { n: ports.length })}</code>
        </div>
      </div>
      {issues?.length ? (
        <p className="flow-node-issue" role="note">
          ⚠ {issues[0]}
        </p>
      ) : (
        <Ports ports={ports} side="out" />
      )}
      <OutHandle />
    </div>
  );
});

/** A sticky note: text typed straight onto the canvas, resizable, never compiled. */
export const NoteCard = memo(function NoteCard({ id, data, selected }: NodeProps) {
  const { t } = useI18n();
  const info = useContext(CanvasInfoContext);
  const text = typeof data.text === 'string' ? data.text : '';
  const onChange = useCallback(
    (e: React.ChangeEvent<HTMLTextAreaElement>) => info.actions.noteText(id, e.target.value),
    [id, info],
  );
  return (
    <div className={`flow-note ${selected ? 'selected' : ''}`} data-node-id={id}>
      <NodeResizer
        isVisible={selected}
        minWidth={140}
        minHeight={70}
        onResizeStart={() => info.actions.beginGesture()}
        onResizeEnd={() => info.actions.endGesture()}
      />
      <p className="flow-note-far" aria-hidden="true">
        {text}
      </p>
      <textarea
        className="nodrag nowheel"
        aria-label={t('flow.note.text')}
        placeholder={t('flow.note.placeholder')}
        value={text}
        onChange={onChange}
      />
    </div>
  );
});
