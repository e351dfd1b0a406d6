import { useCallback, useContext, useEffect, useMemo, useRef, useState, type DragEvent } from 'react';
import {
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  BackgroundVariant,
  ControlButton,
  Controls,
  MiniMap,
  ReactFlow,
  useReactFlow,
  useStoreApi,
  type Connection,
  type EdgeChange,
  type Node,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useI18n } from '../../i18n/i18n';
import {
  addToolNode,
  connect,
  connectRefusal,
  removeElements,
  type EditorEdge,
  type EditorNode,
  type FlowDoc,
} from '../doc';
import { kindOfNode, NODE_COLORS } from '../tokens';
import type { FlowEditor } from '../useFlowEditor';
import { GradientEdge } from './edges';
import { CanvasInfoContext } from './store';
import { FAR_ZOOM, NoteCard, StartCard, ToolCard } from './nodes';

const nodeTypes = { tool: ToolCard, start: StartCard, note: NoteCard };
const edgeTypes = { default: GradientEdge };
/** What a palette item carries when dragged onto the canvas. */
export const TOOL_DRAG_TYPE = 'application/x-switchyard-tool';
const GRID: [number, number] = [16, 16];

function minimapColor(node: Node): string {
  return NODE_COLORS[kindOfNode(node.type, node.data?.tool as string | undefined)];
}

/** How long the zoom must stay put before the cards switch between their near and far looks. */
const FAR_SETTLE_MS = 150;

/**
 * Whether the view is zoomed out past FAR_ZOOM, as of the last time the zoom settled. Crossing the
 * line restyles and repaints every card at once (one 50-70 ms frame with 337 nodes on a 2-core
 * machine): mid-gesture that is a visible hitch, so a wheel or pinch zoom keeps the look it started
 * with and the cards switch once the zoom has stayed put for FAR_SETTLE_MS. A zoom change after a
 * quiet spell (opening, fit view, a lone step) switches at once.
 */
function useSettledFar(): boolean {
  const store = useStoreApi();
  const [far, setFar] = useState(() => store.getState().transform[2] < FAR_ZOOM);
  useEffect(() => {
    let zoom = store.getState().transform[2];
    let changedAt = -Infinity;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unsubscribe = store.subscribe((s) => {
      const next = s.transform[2];
      if (next === zoom) return;
      zoom = next;
      const now = performance.now();
      const quiet = now - changedAt > FAR_SETTLE_MS;
      changedAt = now;
      clearTimeout(timer);
      if (quiet) setFar(next < FAR_ZOOM);
      else timer = setTimeout(() => setFar(zoom < FAR_ZOOM), FAR_SETTLE_MS);
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [store]);
  return far;
}

type ToolSourceOf = { tool(name: string | undefined): { source?: string } | undefined };

/**
 * The edges with their ends' colours (source → target gradient), the same objects and the same
 * array while neither the edges nor the colours change: a drag moves nodes every frame, and xyflow
 * updates its whole store whenever it is handed a new edge array.
 */
function useColouredEdges(
  nodes: readonly EditorNode[],
  edges: readonly EditorEdge[],
  info: ToolSourceOf,
): EditorEdge[] {
  const last = useRef<{
    list: EditorEdge[];
    by: Map<string, { edge: EditorEdge; from: string; to: string; out: EditorEdge }>;
  }>({
    list: [],
    by: new Map(),
  });
  return useMemo(() => {
    const colour = new Map<string, string>();
    for (const n of nodes) {
      const tool = n.data['tool'] as string | undefined;
      colour.set(n.id, NODE_COLORS[kindOfNode(n.type, tool, info.tool(tool)?.source as never)]);
    }
    const by = new Map<string, { edge: EditorEdge; from: string; to: string; out: EditorEdge }>();
    let same = edges.length === last.current.list.length;
    const list = edges.map((edge, i) => {
      const from = colour.get(edge.source) ?? NODE_COLORS.tool;
      const to = colour.get(edge.target) ?? NODE_COLORS.tool;
      const hit = last.current.by.get(edge.id);
      const out =
        hit && hit.edge === edge && hit.from === from && hit.to === to
          ? hit.out
          : { ...edge, data: { ...edge.data, from, to } };
      by.set(edge.id, { edge, from, to, out });
      if (last.current.list[i] !== out) same = false;
      return out;
    });
    if (same) return last.current.list;
    last.current = { list, by };
    return list;
  }, [nodes, edges, info]);
}

/**
 * The canvas: the editor's document drawn by xyflow. Structural edits go through the editor (one
 * undo step each; a drag or resize is one step when it ends); selection and the drag in progress
 * change the present only. Delete/Backspace remove the selection as one step.
 */
export function FlowCanvas({
  editor,
  readOnly: locked = false,
  preview,
}: {
  editor: FlowEditor;
  readOnly?: boolean;
  /** A proposal under review: drawn instead of the document, and nothing on it can be edited. */
  preview?: FlowDoc;
}) {
  const readOnly = locked || preview !== undefined;
  const { t } = useI18n();
  const flow = useReactFlow();
  const [snap, setSnap] = useState(true);
  const [grid, setGrid] = useState(true);
  const { edit, live, beginGesture, endGesture } = editor;
  const far = useSettledFar();
  const info = useContext(CanvasInfoContext);
  const shown = preview ?? editor.doc;
  const edges = useColouredEdges(shown.nodes, shown.edges, info);
  // A drag in progress moves the nodes here only: handing every frame to the editor would redraw
  // the whole builder (panel, toolbar, dock) per frame. The drag's last change, which xyflow sends
  // with `dragging: false` and the final positions, goes to the editor, and the drag ends in one
  // undo step as before.
  const [dragged, setDragged] = useState<EditorNode[] | null>(null);
  const docNodes = useRef(editor.doc.nodes);
  docNodes.current = editor.doc.nodes;
  const draggedNow = useRef<EditorNode[] | null>(null);
  const previewing = useRef(false);
  previewing.current = preview !== undefined;
  const drag = useCallback((nodes: EditorNode[] | null) => {
    draggedNow.current = nodes;
    setDragged(nodes);
  }, []);

  const onNodesChange = useCallback(
    (changes: NodeChange<EditorNode>[]) => {
      const kept = changes.filter((c) => c.type !== 'remove');
      if (!kept.length || previewing.current) return;
      if (kept.every((c) => c.type === 'position' && c.dragging === true)) {
        // Positions are absolute: each frame's change applies to the document's nodes as they are
        // now, so a drag shows what changed meanwhile (dragging an unselected node clears the
        // others' selection just before its first frame).
        drag(applyNodeChanges(kept, docNodes.current));
        return;
      }
      drag(null);
      // Known now, not at React's next render: a drag's first frame may come before it.
      const before = docNodes.current;
      const after = applyNodeChanges(kept, before);
      docNodes.current = after;
      live((doc) => ({ ...doc, nodes: doc.nodes === before ? after : applyNodeChanges(kept, doc.nodes) }));
    },
    [live, drag],
  );
  // Should a drag stop without its closing change, the positions it reached are kept all the same.
  const stopDrag = useCallback(() => {
    const moved = draggedNow.current;
    if (moved) {
      const at = new Map(moved.map((n) => [n.id, n.position]));
      live((doc) => ({
        ...doc,
        nodes: doc.nodes.map((n) => {
          const p = at.get(n.id);
          return p && p !== n.position ? { ...n, position: p } : n;
        }),
      }));
      drag(null);
    }
    endGesture();
  }, [live, drag, endGesture]);
  const onEdgesChange = useCallback(
    (changes: EdgeChange<EditorEdge>[]) => {
      const kept = changes.filter((c) => c.type !== 'remove');
      if (kept.length && !previewing.current)
        live((doc) => ({ ...doc, edges: applyEdgeChanges(kept, doc.edges) }));
    },
    [live],
  );
  const onConnect = useCallback((c: Connection) => edit((doc) => connect(doc, c.source, c.target)), [edit]);
  const isValidConnection = useCallback(
    (c: Connection | EditorEdge) => connectRefusal(editor.doc, c.source, c.target) === undefined,
    [editor.doc],
  );
  const onDelete = useCallback(
    ({ nodes, edges }: { nodes: EditorNode[]; edges: EditorEdge[] }) =>
      edit((doc) =>
        removeElements(
          doc,
          nodes.map((n) => n.id),
          edges.map((e) => e.id),
        ),
      ),
    [edit],
  );
  const onDrop = useCallback(
    (e: DragEvent) => {
      const tool = e.dataTransfer.getData(TOOL_DRAG_TYPE);
      if (!tool) return;
      e.preventDefault();
      const at = flow.screenToFlowPosition({ x: e.clientX, y: e.clientY });
      const position = snap
        ? { x: Math.round(at.x / GRID[0]) * GRID[0], y: Math.round(at.y / GRID[1]) * GRID[1] }
        : at;
      edit((doc) => addToolNode(doc, tool, position).doc);
    },
    [edit, flow, snap],
  );
  const onDragOver = useCallback((e: DragEvent) => {
    if (!e.dataTransfer.types.includes(TOOL_DRAG_TYPE)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
  }, []);

  return (
    <div
      className={`flow-canvas${far ? ' far' : ''}`}
      onDrop={onDrop}
      onDragOver={onDragOver}
      data-testid="flow-canvas"
    >
      <ReactFlow<EditorNode, EditorEdge>
        nodes={preview?.nodes ?? dragged ?? editor.doc.nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        isValidConnection={isValidConnection}
        onDelete={onDelete}
        onNodeDragStart={beginGesture}
        onNodeDragStop={stopDrag}
        onSelectionDragStart={beginGesture}
        onSelectionDragStop={stopDrag}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        elementsSelectable={preview === undefined}
        deleteKeyCode={readOnly ? null : ['Delete', 'Backspace']}
        multiSelectionKeyCode={['Shift', 'Meta', 'Control']}
        selectNodesOnDrag={false}
        snapToGrid={snap}
        snapGrid={GRID}
        colorMode="dark"
        minZoom={0.1}
        maxZoom={2}
        fitView
        fitViewOptions={{ padding: 0.2, maxZoom: 1 }}
        proOptions={{ hideAttribution: true }}
      >
        {grid ? (
          <Background
            variant={BackgroundVariant.Dots}
            gap={16}
            size={1.2}
            color="#3a3a3a"
            bgColor="#1a1a1a"
          />
        ) : null}
        <Controls
          position="bottom-center"
          orientation="horizontal"
          showInteractive={false}
          aria-label={t('flow.controls')}
        >
          <ControlButton
            onClick={() => setSnap((v) => !v)}
            title={t('flow.snap')}
            aria-label={t('flow.snap')}
            aria-pressed={snap}
            className={snap ? 'on' : ''}
          >
            #
          </ControlButton>
          <ControlButton
            onClick={() => setGrid((v) => !v)}
            title={t('flow.background')}
            aria-label={t('flow.background')}
            aria-pressed={grid}
            className={grid ? 'on' : ''}
          >
            ⁙
          </ControlButton>
        </Controls>
        <MiniMap
          pannable
          zoomable
          nodeColor={minimapColor}
          bgColor="#222"
          maskColor="rgba(10,10,10,0.6)"
          aria-label={t('flow.minimap')}
        />
      </ReactFlow>
    </div>
  );
}
