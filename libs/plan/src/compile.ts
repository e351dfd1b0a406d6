import { AgentPlan, FlowGraph, MAX_PLAN_STEPS, type FlowNode, type PlanIssue } from '@switchyard/contracts';
import { jsonPath } from './references';

export type CompileResult =
  | {
      readonly ok: true;
      readonly plan: AgentPlan;
      /** For each step (by position), the index of the graph node it was compiled from. */
      readonly nodeIndex: readonly number[];
    }
  | { readonly ok: false; readonly issues: PlanIssue[] };

const GRAPH = '$.graph';
/** The node type that stands for the workflow's inputs. */
export const START_NODE_TYPE = 'start';

/** A tool node and its index in the graph's node list. */
interface Entry {
  readonly node: FlowNode;
  readonly index: number;
}

function pathOf(base: string, parts: readonly PropertyKey[]): string {
  return parts.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : jsonPath(acc, String(p))),
    base,
  );
}

/** One cycle among `ids` (each listed with its predecessors), first repeated at the end. */
function cycleAmong(ids: readonly string[], preds: ReadonlyMap<string, readonly string[]>): string[] {
  const left = new Set(ids);
  // Walk predecessors from any remaining node: every remaining node has one that remains, so the walk
  // must revisit a node, and the part from its first visit on is a cycle.
  const walk: string[] = [];
  const seen = new Map<string, number>();
  let at = ids[0] as string;
  while (!seen.has(at)) {
    seen.set(at, walk.length);
    walk.push(at);
    at = (preds.get(at) ?? []).find((p) => left.has(p)) as string;
  }
  return [...walk.slice(seen.get(at)).reverse(), walk[walk.length - 1] as string];
}

/**
 * Compiles a canvas graph into a plan: every `tool` node becomes a step with the node's id, edges
 * between tool nodes become the target's `dependsOn`, and steps are ordered topologically (ties by
 * node order in the graph) so `{{steps.N}}` positions do not depend on how the canvas was saved.
 * The one `start` node stands for the workflow's inputs: edges out of it are drawn but not compiled,
 * edges into it are refused. Notes and other node types are kept in the graph but not compiled. Pure
 * and browser-safe.
 */
export function compileGraph(graph: unknown): CompileResult {
  const parsed = FlowGraph.safeParse(graph);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({
        path: pathOf(GRAPH, i.path),
        code: 'invalid',
        message: i.message,
      })),
    };
  }
  const { nodes, edges } = parsed.data;
  const issues: PlanIssue[] = [];

  const indexById = new Map<string, number>();
  nodes.forEach((node, i) => {
    if (indexById.has(node.id))
      issues.push({
        path: `${GRAPH}.nodes[${i}].id`,
        code: 'duplicate_id',
        message: `node id ${node.id} is used more than once`,
      });
    else indexById.set(node.id, i);
  });

  const toolNodes: Entry[] = [];
  nodes.forEach((node, index) => {
    if (node.type !== 'tool' || indexById.get(node.id) !== index) return;
    if (!node.data.tool)
      issues.push({
        path: `${GRAPH}.nodes[${index}].data.tool`,
        code: 'invalid',
        message: `node ${node.id} has no tool`,
      });
    toolNodes.push({ node, index });
  });
  if (toolNodes.length === 0) {
    issues.push({
      path: `${GRAPH}.nodes`,
      code: 'invalid',
      message: 'the graph has no tool nodes; a workflow needs at least one step',
    });
  } else if (toolNodes.length > MAX_PLAN_STEPS) {
    issues.push({
      path: `${GRAPH}.nodes`,
      code: 'too_many_steps',
      message: `${toolNodes.length} tool nodes; a workflow has at most ${MAX_PLAN_STEPS} steps`,
    });
  }

  const typeOf = (id: string) => nodes[indexById.get(id) ?? -1]?.type;
  const isTool = (id: string) => typeOf(id) === 'tool';
  let startAt: number | undefined;
  nodes.forEach((node, index) => {
    if (node.type !== START_NODE_TYPE) return;
    if (startAt === undefined) startAt = index;
    else
      issues.push({
        path: `${GRAPH}.nodes[${index}]`,
        code: 'multiple_starts',
        message: `node ${node.id} is a second start node; a workflow has one (node ${nodes[startAt]?.id} holds its inputs)`,
      });
  });
  const preds = new Map<string, string[]>(toolNodes.map(({ node }) => [node.id, []]));
  edges.forEach((edge, i) => {
    const at = `${GRAPH}.edges[${i}]`;
    for (const end of [edge.source, edge.target]) {
      if (!indexById.has(end)) {
        issues.push({
          path: at,
          code: 'missing_dependency',
          message: `edge ${i} joins ${end}, which is not a node`,
        });
        return;
      }
    }
    if (typeOf(edge.target) === START_NODE_TYPE) {
      issues.push({
        path: at,
        code: 'edge_into_start',
        message: `edge ${i} leads into the start node ${edge.target}; the start node only has outgoing edges`,
      });
      return;
    }
    // The start node stands for the inputs, which every step can read: its edges are drawn, not compiled.
    if (typeOf(edge.source) === START_NODE_TYPE) return;
    for (const end of [edge.source, edge.target]) {
      if (!isTool(end)) {
        issues.push({
          path: at,
          code: 'invalid',
          message: `edge ${i} joins ${end}, which is not a tool node; only tool nodes can be connected`,
        });
        return;
      }
    }
    if (edge.source === edge.target) {
      issues.push({ path: at, code: 'self_dependency', message: `edge ${i} joins ${edge.source} to itself` });
      return;
    }
    const into = preds.get(edge.target) as string[];
    if (!into.includes(edge.source)) into.push(edge.source);
  });

  // Kahn's algorithm; among the ready nodes the one drawn first goes first.
  const entryOf = new Map(toolNodes.map((t) => [t.node.id, t]));
  const waiting = new Map(toolNodes.map(({ node }) => [node.id, (preds.get(node.id) ?? []).length]));
  const succs = new Map<string, string[]>(toolNodes.map(({ node }) => [node.id, []]));
  for (const [target, sources] of preds) for (const s of sources) succs.get(s)?.push(target);
  const ready: Entry[] = toolNodes.filter(({ node }) => waiting.get(node.id) === 0);
  const order: Entry[] = [];
  while (ready.length) {
    const next = ready.shift() as Entry;
    order.push(next);
    for (const s of succs.get(next.node.id) ?? []) {
      const n = (waiting.get(s) as number) - 1;
      waiting.set(s, n);
      if (n > 0) continue;
      const entry = entryOf.get(s) as Entry;
      const at = ready.findIndex((r) => r.index > entry.index);
      ready.splice(at < 0 ? ready.length : at, 0, entry);
    }
  }
  if (order.length < toolNodes.length) {
    const placed = new Set(order.map(({ node }) => node.id));
    const cycle = cycleAmong(
      toolNodes.filter(({ node }) => !placed.has(node.id)).map(({ node }) => node.id),
      preds,
    );
    issues.push({
      path: `${GRAPH}.nodes[${indexById.get(cycle[0] as string)}]`,
      code: 'cycle',
      message: `the edges form a cycle: ${cycle.join(' → ')}`,
    });
  }
  if (issues.length) return { ok: false, issues };

  const position = new Map(order.map(({ node }, i) => [node.id, i]));
  const steps = order.map(({ node }) => {
    const d = node.data;
    return {
      id: node.id,
      tool: d.tool,
      arguments: d.arguments ?? {},
      dependsOn: [...(preds.get(node.id) ?? [])].sort(
        (a, b) => (position.get(a) as number) - (position.get(b) as number),
      ),
      description: d.description ?? '',
      ...(d.requiresApproval !== undefined ? { requiresApproval: d.requiresApproval } : {}),
      ...(d.retry !== undefined ? { retry: d.retry } : {}),
      ...(d.pinned !== undefined ? { pinned: d.pinned } : {}),
    };
  });
  const goal = (parsed.data as { goal?: unknown }).goal;
  const plan = AgentPlan.safeParse({ ...(typeof goal === 'string' ? { goal } : {}), steps });
  const nodeIndex = order.map(({ index }) => index);
  if (!plan.success) {
    return {
      ok: false,
      issues: plan.error.issues.map((i) => ({
        path: graphPathOf(pathOf('$', i.path), nodeIndex),
        code: 'invalid',
        message: i.message,
      })),
    };
  }
  return { ok: true, plan: plan.data, nodeIndex };
}

/**
 * Rewrites a plan issue's path (`$.steps[2].arguments.x`) to the graph node the step came from
 * (`$.graph.nodes[5].data.arguments.x`), so the canvas can point at the node.
 */
export function graphPathOf(path: string, nodeIndex: readonly number[]): string {
  if (path === '$') return GRAPH;
  if (path === '$.goal') return `${GRAPH}.goal`;
  const m = /^\$\.steps(?:\[(\d+)\](.*))?$/.exec(path);
  if (!m) return path;
  if (m[1] === undefined) return `${GRAPH}.nodes`;
  const node = nodeIndex[Number(m[1])];
  if (node === undefined) return `${GRAPH}.nodes`;
  const rest = m[2] ?? '';
  const at = `${GRAPH}.nodes[${node}]`;
  if (rest === '' || rest.startsWith('.id')) return `${at}${rest}`;
  // dependsOn comes from the edges into the node, which the node's path stands for.
  if (rest.startsWith('.dependsOn')) return at;
  return `${at}.data${rest}`;
}
