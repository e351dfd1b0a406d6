import {
  workflowToolName,
  type AgentPlan,
  type ToolDescriptor,
  type ToolEffect,
} from '@switchyard/contracts';
import type { PublishedWorkflow } from '@switchyard/server-db-workflows';

/**
 * What running the workflow does to the world: read if every step reads, external if any step reaches
 * outside (a tool no longer in the catalog counts as external: we cannot tell), else write.
 */
export function workflowEffect(plan: AgentPlan, effects: ReadonlyMap<string, ToolEffect>): ToolEffect {
  const of = plan.steps.map((s) => effects.get(s.tool) ?? 'external');
  if (of.every((e) => e === 'read')) return 'read';
  return of.includes('external') ? 'external' : 'write';
}

/** A published workflow as the catalog shows it: `run_workflow_<id>`, its inputs as the arguments. */
export function workflowTool(workflow: PublishedWorkflow): ToolDescriptor {
  const about = workflow.description.trim();
  return {
    name: workflowToolName(workflow.workflowId),
    description: `Run the workflow "${workflow.name}"${about ? `: ${about}` : ''}`,
    inputSchema: workflow.inputSchema,
    effect: workflow.effect,
    // A run of several steps is not idempotent as a whole, whatever its steps are.
    idempotent: false,
    source: 'workflow',
  };
}
