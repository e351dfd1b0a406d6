import { z } from 'zod';
import {
  AgentPlan,
  MAX_PLAN_STEPS,
  type DraftPlanRequest,
  type PlanIssue,
  type ToolDescriptor,
} from '@switchyard/contracts';

function withoutSchemaKeyword(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = schema;
  return rest;
}

/** The JSON Schema of what the model writes: the input side, so defaulted fields are optional. */
export function planJsonSchema(): Record<string, unknown> {
  return withoutSchemaKeyword(z.toJSONSchema(AgentPlan, { io: 'input' }) as Record<string, unknown>);
}

/** One tool as the model sees it: name, effect, description and argument schema on two lines. */
export function describeTool(tool: ToolDescriptor): string {
  const description = tool.description.trim().replace(/\s+/g, ' ') || '(no description)';
  const traits = tool.idempotent && tool.effect !== 'read' ? `${tool.effect}, idempotent` : tool.effect;
  return `- ${tool.name} [${traits}]: ${description}\n  arguments: ${JSON.stringify(withoutSchemaKeyword(tool.inputSchema))}`;
}

// Tool names in the example are made up on purpose: the rules say only listed tools exist.
export const EXAMPLE_PLAN = JSON.stringify({
  steps: [
    {
      id: 'find',
      tool: 'search_notes',
      arguments: { query: 'release date' },
      description: 'Find the notes that mention the release date',
    },
    {
      id: 'count',
      tool: 'count_items',
      arguments: { items: '{{node.find.result.matches}}' },
      description: 'Count the matches',
      dependsOn: ['find'],
    },
    {
      id: 'report',
      tool: 'save_text',
      arguments: {
        name: 'report.md',
        text: 'Found {{steps.1.result}} notes; first: {{steps.0.result.matches[0]}}',
      },
      description: 'Write the report',
      dependsOn: ['find', 'count'],
    },
  ],
});

/** What the planner model is told: the plan format, its rules, the tools, and to answer with JSON only. */
export function systemPrompt(tools: readonly ToolDescriptor[]): string {
  const toolList = tools.length ? tools.map(describeTool).join('\n') : '(no tools are available)';
  return `You are the planner of Switchyard, a plan-and-execute agent platform. Turn the user's goal into a plan: a JSON object whose steps are tool calls that the platform runs after you answer. You do not call tools yourself and you do not see their results while planning; a step uses the results of earlier steps through references.

# Plan format
The plan is one JSON object valid against this JSON Schema:
${JSON.stringify(planJsonSchema())}

# Rules
- Every step has an \`id\` that no other step of the plan uses (letters, digits, "_" or "-", at most 64 characters), and calls exactly one tool of the list below by its exact name, with \`arguments\` valid against that tool's arguments schema.
- \`dependsOn\` lists the ids of the steps that must finish before this step starts. Steps without a dependency between them (direct or through other steps) run in parallel. No step may depend on itself, and dependencies may not form a cycle.
- A plan has at least 1 and at most ${MAX_PLAN_STEPS} steps; use no more steps than the goal needs.
- \`description\` says in one sentence what the step does.
- Set \`requiresApproval\` to true on a step a person should confirm before it runs; set \`retry\` only on a call that may fail for a passing reason (network, rate limit) and whose tool is a read tool or marked idempotent, since a retry repeats the call.

# References
A string anywhere inside \`arguments\` may refer to step results and to the run's inputs:
- \`{{steps.N.result}}\`: the result of the step at position N of \`steps\`, counted from 0
- \`{{last.result}}\`: the result of the step right before this one in \`steps\`
- \`{{node.<id>.result.a.b[0]}}\`: the result of the step with that id, then a path into it
- \`{{inputs.name}}\`: a value the run was started with
Every form may be followed by a path of \`.name\` and \`[index]\` parts, e.g. \`{{steps.0.result.items[2].title}}\`.
A step that references another step must list that step in \`dependsOn\`, directly or transitively (through a step it depends on); otherwise the referenced step may not have finished yet.
An argument that is exactly one placeholder (e.g. "count": "{{steps.0.result.total}}") receives the referenced value with its JSON type (number, object, array…); a placeholder inside other text is replaced by the value as text.

Example of the shape only (these tools are made up; use only the tools listed below):
${EXAMPLE_PLAN}

# Tools
Only these tools exist. Each line: name [effect: read only reads; write changes files or data; external acts outside, e.g. runs a command or calls a service; "idempotent" when repeating a call has no further effect]: description, then the JSON Schema of its arguments.
${toolList}

# Answer
Answer with only the JSON object of the plan: no explanation before or after it, no Markdown code fence.`;
}

/**
 * The system prompt with the run's agent's own put first: the agent says who the model is, the
 * planner's rules (which come last and win) how it must answer.
 */
export function withAgentPrompt(system: string, agentPrompt: string | undefined): string {
  const own = agentPrompt?.trim();
  return own ? `${own}\n\n---\n\n${system}` : system;
}

/** The goal, with the files and the input names of the run when it has them. */
export function userPrompt(req: Pick<DraftPlanRequest, 'goal' | 'files' | 'inputNames' | 'grants'>): string {
  const parts = [`Goal:\n${req.goal.trim()}`];
  if (req.grants?.length) {
    const kinds = { refs: 'uploaded', native: 'from the workspace', shared: 'a shared folder for this run' };
    parts.push(
      'Files granted to the run: write "@file:<name>" in an argument to pass its path (also inside text, e.g. "@file:out/report.csv"):\n' +
        req.grants
          .map(
            (g) =>
              `- ${g.name}: ${g.directory ? 'a folder' : 'a file'}, ${kinds[g.kind]}${g.writable ? ', writable' : ', read-only'}`,
          )
          .join('\n'),
    );
  }
  if (req.files?.length) {
    const bound = !req.inputNames || req.inputNames.includes('files');
    parts.push(
      `Files the goal is about (paths relative to the workspace${bound ? '; the list is also the input {{inputs.files}}' : ''}):\n` +
        req.files.map((f) => `- ${f}`).join('\n'),
    );
  }
  if (req.inputNames) {
    parts.push(
      req.inputNames.length
        ? `Inputs of the run, usable as {{inputs.<name>}}: ${req.inputNames.join(', ')}`
        : 'The run has no inputs: do not use {{inputs.…}} references.',
    );
  }
  return parts.join('\n\n');
}

/** `path: message`, one issue a line. */
export function formatIssues(issues: readonly PlanIssue[]): string {
  return issues.map((i) => `- ${i.path}: ${i.message}`).join('\n');
}

/** Sent after an invalid answer: every issue, and a request for the whole plan again. */
export function correctionPrompt(issues: readonly PlanIssue[]): string {
  return `That plan is not valid:\n${formatIssues(issues)}\n\nCorrect every issue and answer with the complete corrected plan: only the JSON object, nothing else.`;
}
