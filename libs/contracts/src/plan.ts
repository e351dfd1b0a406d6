import { z } from 'zod';

/** Most steps one plan may have. */
export const MAX_PLAN_STEPS = 64;

export const StepId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'letters, digits, "_" or "-", at most 64');

export const RetryPolicy = z
  .object({
    attempts: z.number().int().min(1).max(5),
    backoffMs: z.number().int().min(0).max(600_000).default(1_000),
  })
  .strict();
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/**
 * One tool call of a plan. Arguments may hold references to earlier results and inputs:
 * `{{steps.N.result…}}` (N = 0-based position in `steps`), `{{last.result…}}` (the step right
 * before), `{{node.<id>.result.a.b[0]}}`, `{{inputs.name}}`. An argument that is exactly one
 * placeholder keeps the referenced value's JSON type; a placeholder inside text renders as text.
 */
export const PlanStep = z
  .object({
    id: StepId,
    tool: z.string().min(1).max(300),
    arguments: z.record(z.string(), z.unknown()).default({}),
    dependsOn: z.array(z.string()).max(MAX_PLAN_STEPS).default([]),
    description: z.string().max(4_000).default(''),
    requiresApproval: z.boolean().optional(),
    retry: RetryPolicy.optional(),
    pinned: z
      .object({ result: z.unknown() })
      .strict()
      .optional()
      .describe(
        'serve this result without calling the tool (debug scaffolding from the canvas); the step stays in the graph',
      ),
  })
  .strict();
export type PlanStep = z.infer<typeof PlanStep>;

export const AgentPlan = z
  .object({
    goal: z.string().max(20_000).optional(),
    steps: z.array(PlanStep).min(1, 'a plan needs at least one step'),
  })
  .strict();
export type AgentPlan = z.infer<typeof AgentPlan>;

/** One problem of a plan, located by a JSON path such as `$.steps[2].arguments.filePath`. */
export const PlanIssue = z.object({
  path: z.string(),
  code: z.enum([
    'invalid',
    'too_many_steps',
    'too_large',
    'duplicate_id',
    'missing_dependency',
    'self_dependency',
    'cycle',
    'unknown_tool',
    'invalid_arguments',
    'malformed_reference',
    'dangling_reference',
    'reference_not_a_dependency',
    'unknown_input',
    'not_read_only',
    'retry_not_allowed',
    'multiple_starts',
    'edge_into_start',
    'unknown_node',
  ]),
  message: z.string(),
});
export type PlanIssue = z.infer<typeof PlanIssue>;
