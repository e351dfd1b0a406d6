import {
  FlowEditRequest,
  FlowGraph,
  type FlowDiagnostic,
  type FlowDiagnosticKind,
  type FlowDiff,
  type FlowEditOp,
  type FlowNode,
  type FlowProposal,
  type FlowSnapshot,
  type PlanIssue,
  type ToolDescriptor,
} from '@switchyard/contracts';
import { compileGraph, graphPathOf, START_NODE_TYPE } from './compile';
import { checkInputSchema, inputNamesOf } from './inputs';
import { validatePlan } from './validate';

/**
 * The flow-authoring assistant's pure core, shared by the server's request-scoped tools and the
 * builder's diff view: diagnose a canvas (also an invalid one), apply an edit proposal without
 * writing anything, diff two canvases, and fingerprint a canvas so a proposal made against one
 * state is refused on another. Browser-safe.
 */

type Graph = { nodes: FlowNode[]; edges: Array<{ source: string; target: string; id?: string }> };

/** The snapshot's graph as nodes and edges, tolerating anything (an invalid canvas is still read). */
function graphOfSnapshot(graph: unknown): Graph & Record<string, unknown> {
  const g =
    graph && typeof graph === 'object' && !Array.isArray(graph) ? (graph as Record<string, unknown>) : {};
  const nodes = (Array.isArray(g.nodes) ? g.nodes : []).filter(
    (n): n is FlowNode => !!n && typeof n === 'object' && typeof (n as { id?: unknown }).id === 'string',
  );
  const edges = (Array.isArray(g.edges) ? g.edges : []).filter(
    (e): e is Graph['edges'][number] =>
      !!e &&
      typeof e === 'object' &&
      typeof (e as { source?: unknown }).source === 'string' &&
      typeof (e as { target?: unknown }).target === 'string',
  );
  return { ...g, nodes, edges };
}

/** JSON with object keys sorted, so equal values print equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** 64-bit FNV-1a as 16 hex digits (two 32-bit lanes). Not cryptographic: it only tells states apart. */
function fnv64(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0xcbf29ce4;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c ^ (h1 >>> 7), 0x01000193) >>> 0;
  }
  return h1.toString(16).padStart(8, '0') + h2.toString(16).padStart(8, '0');
}

/**
 * A canvas state's fingerprint: nodes (id, type, data), edges and the input schema. Positions do not
 * count: a person nudging a node while reading a proposal has not changed what the proposal edits.
 */
export function flowFingerprint(snapshot: Pick<FlowSnapshot, 'graph' | 'inputSchema'>): string {
  const g = graphOfSnapshot(snapshot.graph);
  const nodes = g.nodes.map((n) => ({ id: n.id, type: n.type, data: n.data ?? {} }));
  const edges = g.edges.map((e) => `${e.source}>${e.target}`).sort();
  return fnv64(canonical({ nodes, edges, inputs: snapshot.inputSchema ?? {} }));
}

const KIND_BY_CODE: Record<string, FlowDiagnosticKind> = {
  unknown_tool: 'unavailable_tool',
  invalid_arguments: 'invalid_argument',
  malformed_reference: 'malformed_reference',
  dangling_reference: 'malformed_reference',
  unknown_input: 'malformed_reference',
  reference_not_a_dependency: 'malformed_reference',
  missing_dependency: 'dangling_connection',
  edge_into_start: 'dangling_connection',
  self_dependency: 'cycle',
  cycle: 'cycle',
};

function kindOf(issue: PlanIssue): FlowDiagnosticKind {
  if (issue.path.startsWith('$.inputSchema')) return 'inputs';
  if (issue.code === 'invalid_arguments' && /must have required property/.test(issue.message))
    return 'missing_argument';
  if (issue.code === 'invalid' && /^\$\.graph\.edges\[\d+\]$/.test(issue.path)) return 'dangling_connection';
  return KIND_BY_CODE[issue.code] ?? 'structure';
}

function nodeIdAt(path: string, nodes: readonly FlowNode[], edges: Graph['edges']): string | undefined {
  const node = /^\$\.graph\.nodes\[(\d+)\]/.exec(path);
  if (node) return nodes[Number(node[1])]?.id;
  const edge = /^\$\.graph\.edges\[(\d+)\]/.exec(path);
  return edge ? edges[Number(edge[1])]?.target : undefined;
}

/**
 * Every problem of a canvas at once, by family: unavailable tools, missing required arguments,
 * malformed references, dangling connections, cycles, the inputs, and the last run's error. The
 * compiler stops at the first structural problem; here each tool node is still checked on its own
 * against the catalog, so a flow with a cycle also shows its missing arguments. Changes nothing.
 */
export function diagnoseFlow(
  snapshot: Pick<FlowSnapshot, 'graph' | 'inputSchema' | 'lastRun'>,
  tools: readonly ToolDescriptor[],
): FlowDiagnostic[] {
  const g = graphOfSnapshot(snapshot.graph);
  const inputSchema = snapshot.inputSchema ?? {};
  const issues: PlanIssue[] = [...checkInputSchema(inputSchema)];
  const inputNames = inputNamesOf(inputSchema);
  const compiled = compileGraph(snapshot.graph);
  if (compiled.ok) {
    const result = validatePlan(compiled.plan, { tools, inputNames });
    if (!result.ok)
      issues.push(...result.issues.map((i) => ({ ...i, path: graphPathOf(i.path, compiled.nodeIndex) })));
  } else {
    issues.push(...compiled.issues);
    // Each tool node alone: its tool, its arguments, its references' shape.
    g.nodes.forEach((node, index) => {
      if (node.type !== 'tool' || !node.data?.tool) return;
      const result = validatePlan(
        {
          steps: [{ id: node.id, tool: node.data.tool, arguments: node.data.arguments ?? {}, dependsOn: [] }],
        },
        { tools, inputNames },
      );
      if (result.ok) return;
      for (const i of result.issues) {
        // Cross-node references cannot be judged without the compiled order.
        if (i.code === 'dangling_reference' || i.code === 'reference_not_a_dependency') continue;
        issues.push({ ...i, path: graphPathOf(i.path, [index]) });
      }
    });
  }
  const seen = new Set<string>();
  const out: FlowDiagnostic[] = [];
  for (const i of issues) {
    const key = `${i.path}|${i.code}|${i.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const nodeId = nodeIdAt(i.path, g.nodes, g.edges);
    out.push({
      kind: kindOf(i),
      code: i.code,
      path: i.path,
      ...(nodeId ? { nodeId } : {}),
      message: i.message,
    });
  }
  const err = snapshot.lastRun?.error;
  if (err) {
    out.push({
      kind: 'last_run_error',
      code: err.code ?? 'run_failed',
      path: '$.graph',
      ...(err.stepId ? { nodeId: err.stepId } : {}),
      message: `the last run (${snapshot.lastRun?.status}) failed${err.stepId ? ` at ${err.stepId}` : ''}: ${err.message}`,
    });
  }
  return out;
}

export type EditOutcome =
  | { readonly ok: true; readonly graph: FlowGraph; readonly inputSchema: Record<string, unknown> }
  | { readonly ok: false; readonly issues: PlanIssue[] };

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function applyOp(
  g: Graph,
  inputs: { schema: Record<string, unknown> },
  op: FlowEditOp,
  at: string,
): PlanIssue | undefined {
  const indexOf = (id: string) => g.nodes.findIndex((n) => n.id === id);
  switch (op.op) {
    case 'add_node':
      if (indexOf(op.node.id) >= 0)
        return { path: at, code: 'duplicate_id', message: `a node ${op.node.id} already exists` };
      if (op.node.type === START_NODE_TYPE && g.nodes.some((n) => n.type === START_NODE_TYPE))
        return { path: at, code: 'multiple_starts', message: 'the flow already has a start node' };
      g.nodes.push(clone(op.node));
      return undefined;
    case 'remove_node': {
      const i = indexOf(op.id);
      if (i < 0) return { path: at, code: 'unknown_node', message: `no node ${op.id}` };
      if (g.nodes[i]?.type === START_NODE_TYPE)
        return {
          path: at,
          code: 'invalid',
          message: 'the start node holds the inputs and cannot be removed',
        };
      g.nodes.splice(i, 1);
      g.edges = g.edges.filter((e) => e.source !== op.id && e.target !== op.id);
      return undefined;
    }
    case 'update_node': {
      const node = g.nodes[indexOf(op.id)];
      if (!node) return { path: at, code: 'unknown_node', message: `no node ${op.id}` };
      const data: Record<string, unknown> = { ...(node.data ?? {}) };
      for (const [k, v] of Object.entries(op.data)) {
        if (v === null) delete data[k];
        else data[k] = clone(v);
      }
      node.data = data as FlowNode['data'];
      return undefined;
    }
    case 'add_edge':
      for (const end of [op.source, op.target])
        if (indexOf(end) < 0) return { path: at, code: 'unknown_node', message: `no node ${end} to connect` };
      if (!g.edges.some((e) => e.source === op.source && e.target === op.target))
        g.edges.push({ id: `e-${op.source}-${op.target}`, source: op.source, target: op.target });
      return undefined;
    case 'remove_edge': {
      const before = g.edges.length;
      g.edges = g.edges.filter((e) => !(e.source === op.source && e.target === op.target));
      return g.edges.length === before
        ? { path: at, code: 'unknown_node', message: `no edge ${op.source} → ${op.target}` }
        : undefined;
    }
    case 'set_input_schema':
      inputs.schema = clone(op.inputSchema);
      return undefined;
  }
}

/**
 * A proposal applied to a canvas, in memory: a replacement as given, or the edits in order. An edit
 * that cannot apply (a node that is not there, a duplicate id) refuses the whole proposal; a result
 * that applies but does not validate is returned, for the person to review on the canvas.
 */
export function applyFlowEdit(
  snapshot: Pick<FlowSnapshot, 'graph' | 'inputSchema'>,
  request: FlowEditRequest,
): EditOutcome {
  if (request.mode === 'replace') {
    return {
      ok: true,
      graph: clone(request.graph),
      inputSchema: clone(request.inputSchema ?? snapshot.inputSchema ?? {}),
    };
  }
  const { nodes, edges, ...rest } = graphOfSnapshot(clone(snapshot.graph));
  const g: Graph = { nodes, edges };
  const inputs = { schema: clone(snapshot.inputSchema ?? {}) };
  const issues: PlanIssue[] = [];
  request.ops.forEach((op, i) => {
    const issue = applyOp(g, inputs, op, `$.ops[${i}]`);
    if (issue) issues.push(issue);
  });
  if (issues.length) return { ok: false, issues };
  const graph = FlowGraph.safeParse({ ...rest, nodes: g.nodes, edges: g.edges });
  if (!graph.success)
    return {
      ok: false,
      issues: graph.error.issues.map((i) => ({
        path: `$.graph.${i.path.join('.')}`,
        code: 'invalid',
        message: i.message,
      })),
    };
  return { ok: true, graph: graph.data, inputSchema: inputs.schema };
}

/** What changed between two canvases, by node id and edge ends (positions do not count). */
export function diffFlows(
  before: Pick<FlowSnapshot, 'graph' | 'inputSchema'>,
  after: Pick<FlowSnapshot, 'graph' | 'inputSchema'>,
): FlowDiff {
  const a = graphOfSnapshot(before.graph);
  const b = graphOfSnapshot(after.graph);
  const nodeKey = (n: FlowNode) => canonical({ type: n.type, data: n.data ?? {} });
  const aNodes = new Map(a.nodes.map((n) => [n.id, nodeKey(n)]));
  const bNodes = new Map(b.nodes.map((n) => [n.id, nodeKey(n)]));
  const edgeKey = (e: { source: string; target: string }) => `${e.source}\u0000${e.target}`;
  const aEdges = new Map(a.edges.map((e) => [edgeKey(e), { source: e.source, target: e.target }]));
  const bEdges = new Map(b.edges.map((e) => [edgeKey(e), { source: e.source, target: e.target }]));
  return {
    addedNodes: [...bNodes.keys()].filter((id) => !aNodes.has(id)),
    removedNodes: [...aNodes.keys()].filter((id) => !bNodes.has(id)),
    changedNodes: [...bNodes]
      .filter(([id, key]) => aNodes.has(id) && aNodes.get(id) !== key)
      .map(([id]) => id),
    addedEdges: [...bEdges].filter(([k]) => !aEdges.has(k)).map(([, e]) => e),
    removedEdges: [...aEdges].filter(([k]) => !bEdges.has(k)).map(([, e]) => e),
    inputsChanged: canonical(before.inputSchema ?? {}) !== canonical(after.inputSchema ?? {}),
  };
}

/**
 * What `edit_current_flow` answers: the proposal applied to the snapshot in memory, its diff, and
 * its diagnosis; or the reasons it cannot apply. Nothing is written.
 */
export function proposeFlowEdit(
  snapshot: FlowSnapshot,
  request: unknown,
  tools: readonly ToolDescriptor[],
): { ok: true; proposal: FlowProposal } | { ok: false; issues: PlanIssue[] } {
  const parsed = FlowEditRequest.safeParse(request);
  if (!parsed.success)
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({
        path: `$.${i.path.join('.')}`,
        code: 'invalid',
        message: i.message,
      })),
    };
  const applied = applyFlowEdit(snapshot, parsed.data);
  if (!applied.ok) return applied;
  const result = { graph: applied.graph, inputSchema: applied.inputSchema };
  const diagnostics = diagnoseFlow(result, tools);
  return {
    ok: true,
    proposal: {
      request: parsed.data,
      baseFingerprint: flowFingerprint(snapshot),
      ...(snapshot.revision !== undefined ? { baseRevision: snapshot.revision } : {}),
      graph: applied.graph,
      inputSchema: applied.inputSchema,
      diff: diffFlows(snapshot, result),
      diagnostics,
      valid: diagnostics.length === 0,
    },
  };
}

/**
 * Applying a proposal to the canvas as it is now: refused as stale when the canvas (or the saved
 * revision) moved since the proposal was made; otherwise the edits are replayed on the current
 * canvas (a replacement is taken whole), so positions the person changed meanwhile are kept.
 */
export function applyProposal(
  current: Pick<FlowSnapshot, 'graph' | 'inputSchema' | 'revision'>,
  proposal: Pick<FlowProposal, 'request' | 'baseFingerprint' | 'baseRevision'>,
): EditOutcome | { ok: false; stale: true; reason: string } {
  if (flowFingerprint(current) !== proposal.baseFingerprint)
    return {
      ok: false,
      stale: true,
      reason: 'its nodes, edges or inputs are no longer the ones it was made for; ask again',
    };
  if (
    proposal.baseRevision !== undefined &&
    current.revision !== undefined &&
    current.revision !== proposal.baseRevision
  )
    return {
      ok: false,
      stale: true,
      reason: `the flow was saved again (revision ${current.revision}, the proposal is based on ${proposal.baseRevision}); ask again`,
    };
  return applyFlowEdit(current, proposal.request);
}

/** A compact picture of the canvas for the model: nodes, edges, inputs, and the tools it uses. */
export function inspectFlow(
  snapshot: FlowSnapshot,
  tools: readonly ToolDescriptor[],
): {
  name?: string;
  nodes: Array<{
    id: string;
    type: string;
    tool?: string;
    description?: string;
    arguments?: unknown;
    requiresApproval?: boolean;
  }>;
  edges: Array<{ source: string; target: string }>;
  inputSchema: Record<string, unknown>;
  diagnostics: FlowDiagnostic[];
  tools: Array<
    Pick<ToolDescriptor, 'name' | 'description' | 'effect' | 'inputSchema'> & { outputSchema?: unknown }
  >;
  otherTools: Array<Pick<ToolDescriptor, 'name' | 'description' | 'effect'>>;
} {
  const g = graphOfSnapshot(snapshot.graph);
  const used = new Set(g.nodes.map((n) => n.data?.tool).filter((t): t is string => typeof t === 'string'));
  return {
    ...(snapshot.name ? { name: snapshot.name } : {}),
    nodes: g.nodes.map((n) => ({
      id: n.id,
      type: n.type,
      ...(n.data?.tool ? { tool: n.data.tool } : {}),
      ...(n.data?.description ? { description: n.data.description } : {}),
      ...(n.data?.arguments ? { arguments: n.data.arguments } : {}),
      ...(n.data?.requiresApproval ? { requiresApproval: true } : {}),
    })),
    edges: g.edges.map((e) => ({ source: e.source, target: e.target })),
    inputSchema: snapshot.inputSchema ?? {},
    diagnostics: diagnoseFlow(snapshot, tools),
    tools: tools
      .filter((t) => used.has(t.name))
      .map((t) => ({
        name: t.name,
        description: t.description,
        effect: t.effect,
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
      })),
    otherTools: tools
      .filter((t) => !used.has(t.name))
      .map((t) => ({ name: t.name, description: t.description, effect: t.effect })),
  };
}
