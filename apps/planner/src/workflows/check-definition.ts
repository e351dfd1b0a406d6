import {
  AppError,
  WORKFLOW_TOOL_PREFIX,
  type AgentPlan,
  type PlanIssue,
  type ToolDescriptor,
} from '@switchyard/contracts';
import {
  checkInputSchema,
  compileGraph,
  graphPathOf,
  inputNamesOf,
  planRefusal,
  validatePlan,
} from '@switchyard/plan';

/** What the author sent: a plan, a canvas graph, or both (the graph wins). */
export interface DefinitionInput {
  readonly inputSchema: Record<string, unknown>;
  readonly plan?: unknown;
  readonly graph?: unknown;
}

export type DefinitionCheck =
  | { readonly ok: true; readonly plan: AgentPlan; readonly graph: unknown }
  | { readonly ok: false; readonly issues: PlanIssue[] };

/**
 * Checks a definition at save time, so that it fails now rather than mid-run: the input schema must
 * compile, a graph must compile into a plan, and the plan must validate against the caller's catalog
 * with `{{inputs.x}}` limited to the declared inputs. A `run_workflow_*` step is refused: a workflow
 * that runs workflows could recurse, and its runs would cross audit boundaries. The catalog is fetched
 * only once the definition's own shape is sound.
 */
export async function checkDefinition(
  input: DefinitionInput,
  catalog: () => Promise<readonly ToolDescriptor[]>,
): Promise<DefinitionCheck> {
  const issues = checkInputSchema(input.inputSchema);
  const graph = input.graph ?? null;
  let candidate: unknown = input.plan;
  let nodeIndex: readonly number[] | undefined;
  if (graph !== null) {
    const compiled = compileGraph(graph);
    if (!compiled.ok) return { ok: false, issues: [...issues, ...compiled.issues] };
    const goal = (input.plan as { goal?: unknown } | undefined)?.goal;
    candidate =
      compiled.plan.goal === undefined && typeof goal === 'string'
        ? { goal, ...compiled.plan }
        : compiled.plan;
    nodeIndex = compiled.nodeIndex;
  } else if (input.plan === undefined || input.plan === null) {
    return {
      ok: false,
      issues: [...issues, { path: '$.plan', code: 'invalid', message: 'give a plan, a graph, or both' }],
    };
  }

  const result = validatePlan(candidate, {
    tools: await catalog(),
    inputNames: inputNamesOf(input.inputSchema),
  });
  const nested = new Set<string>();
  const steps = (candidate as { steps?: unknown } | null)?.steps;
  const planIssues: PlanIssue[] = [];
  if (Array.isArray(steps)) {
    steps.forEach((step: unknown, i) => {
      const tool = (step as { tool?: unknown } | null)?.tool;
      if (typeof tool !== 'string' || !tool.startsWith(WORKFLOW_TOOL_PREFIX)) return;
      nested.add(`$.steps[${i}].tool`);
      planIssues.push({
        path: `$.steps[${i}].tool`,
        code: 'invalid',
        message: `${tool} runs a workflow; workflows cannot be nested in a workflow`,
      });
    });
  }
  if (!result.ok) {
    // A nested workflow's tool may be missing from the catalog too; the nesting says more.
    planIssues.push(...result.issues.filter((i) => !(i.code === 'unknown_tool' && nested.has(i.path))));
  }
  const located = nodeIndex
    ? planIssues.map((i) => ({ ...i, path: graphPathOf(i.path, nodeIndex) }))
    : planIssues;
  issues.push(...located);
  if (issues.length || !result.ok) return { ok: false, issues };
  return { ok: true, plan: result.plan, graph };
}

/** The refusal of a definition: every issue listed, the first one in the message. */
export function definitionRefused(issues: readonly PlanIssue[]): AppError {
  return planRefusal('the workflow is invalid', issues);
}
