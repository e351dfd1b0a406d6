import type { PlanIssue, ToolDescriptor } from '@switchyard/contracts';
import { checkInputSchema, compileGraph, graphPathOf, inputNamesOf, validatePlan } from '@switchyard/plan';
import { graphOf, type FlowDoc } from './doc';

/** A problem with the flow as the server would report it: a JSON path into the definition. */
export interface FlowIssue {
  readonly path: string;
  readonly code: string;
  readonly message: string;
}

/**
 * The same checks the server runs at save time, in the browser: the input schema, the graph's
 * compilation into a plan, and the plan against the caller's catalog with `{{inputs.x}}` limited to
 * the declared inputs. Paths point into the graph (`$.graph.nodes[3].data.arguments.x`).
 */
export function checkFlow(doc: FlowDoc, tools: readonly ToolDescriptor[]): FlowIssue[] {
  const issues: PlanIssue[] = checkInputSchema(doc.inputSchema);
  const compiled = compileGraph(graphOf(doc));
  if (!compiled.ok) return [...issues, ...compiled.issues];
  const result = validatePlan(compiled.plan, { tools, inputNames: inputNamesOf(doc.inputSchema) });
  if (result.ok) return issues;
  return [...issues, ...result.issues.map((i) => ({ ...i, path: graphPathOf(i.path, compiled.nodeIndex) }))];
}

/** A server field issue (`code: message`) as a flow issue. */
export function fromFieldIssue(i: { path: string; message: string }): FlowIssue {
  const m = /^([a-z_]+): (.*)$/s.exec(i.message);
  return m
    ? { path: i.path, code: m[1] as string, message: m[2] as string }
    : { path: i.path, code: 'invalid', message: i.message };
}

export interface NodeIssue extends FlowIssue {
  /** The path inside the node's data (`arguments.x`), '' for the node itself. */
  readonly field: string;
}

/**
 * Issues by the node they concern: a node's own path, an edge's target node, the start node for
 * the inputs. Issues about the whole flow are under ''.
 */
export function issuesByNode(issues: readonly FlowIssue[], doc: FlowDoc): Map<string, NodeIssue[]> {
  const out = new Map<string, NodeIssue[]>();
  const add = (id: string, issue: FlowIssue, field: string) =>
    out.set(id, [...(out.get(id) ?? []), { ...issue, field }]);
  const start = doc.nodes.find((n) => n.type === 'start')?.id ?? '';
  for (const issue of issues) {
    const node = /^\$\.graph\.nodes\[(\d+)\](?:\.data\.?(.*)|\.(.*))?$/.exec(issue.path);
    const edge = /^\$\.graph\.edges\[(\d+)\]/.exec(issue.path);
    if (node) {
      const id = doc.nodes[Number(node[1])]?.id;
      add(id ?? '', issue, node[2] ?? '');
    } else if (edge) {
      add(doc.edges[Number(edge[1])]?.target ?? '', issue, '');
    } else if (issue.path.startsWith('$.inputSchema')) {
      add(start, issue, issue.path.slice('$.inputSchema'.length).replace(/^\./, ''));
    } else {
      add('', issue, '');
    }
  }
  return out;
}
