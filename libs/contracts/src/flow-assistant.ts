import { z } from 'zod';
import { FlowGraph, FlowNode } from './workflows';

/**
 * The flow-authoring assistant's view of a canvas: what the builder sends with each turn (also an
 * unsaved or invalid canvas), what its request-scoped tools read, and the edits it may propose.
 * Proposals never write: the person applies one, and it then goes through the normal compiler,
 * validation, revision check, undo history and save.
 */

/** The canvas as the builder holds it right now. */
export const FlowSnapshot = z
  .object({
    workflowId: z.string().uuid().optional().describe('absent for a flow never saved'),
    revision: z.number().int().min(0).optional().describe('the saved revision the canvas started from'),
    name: z.string().max(200).optional(),
    graph: z.unknown().describe('the graph as drawn; may be invalid'),
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    lastRun: z
      .object({
        runId: z.string().uuid(),
        status: z.string(),
        error: z
          .object({ message: z.string(), code: z.string().optional(), stepId: z.string().optional() })
          .optional(),
      })
      .optional(),
  })
  .strict();
export type FlowSnapshot = z.infer<typeof FlowSnapshot>;

/** The problem families the assistant's diagnosis names. */
export const FlowDiagnosticKind = z.enum([
  'unavailable_tool',
  'missing_argument',
  'invalid_argument',
  'malformed_reference',
  'dangling_connection',
  'cycle',
  'inputs',
  'structure',
  'last_run_error',
]);
export type FlowDiagnosticKind = z.infer<typeof FlowDiagnosticKind>;

export const FlowDiagnostic = z.object({
  kind: FlowDiagnosticKind,
  code: z.string().describe("the compiler's or validator's code"),
  path: z.string().describe('a JSON path into the definition: $.graph.nodes[3].data.arguments.x'),
  nodeId: z.string().optional(),
  message: z.string(),
});
export type FlowDiagnostic = z.infer<typeof FlowDiagnostic>;

const EdgeEnds = z.object({ source: z.string().max(64), target: z.string().max(64) }).strict();

/** One structural edit. Positions are the canvas's business: a node added without one is placed. */
export const FlowEditOp = z.discriminatedUnion('op', [
  z.object({ op: z.literal('add_node'), node: FlowNode }).strict(),
  z.object({ op: z.literal('remove_node'), id: z.string().max(64) }).strict(),
  z
    .object({
      op: z.literal('update_node'),
      id: z.string().max(64),
      data: z
        .record(z.string(), z.unknown())
        .describe(
          'fields of the node data to set (arguments replaces the whole argument object); null removes a field',
        ),
    })
    .strict(),
  z.object({ op: z.literal('add_edge'), ...EdgeEnds.shape }).strict(),
  z.object({ op: z.literal('remove_edge'), ...EdgeEnds.shape }).strict(),
  z.object({ op: z.literal('set_input_schema'), inputSchema: z.record(z.string(), z.unknown()) }).strict(),
]);
export type FlowEditOp = z.infer<typeof FlowEditOp>;

/** What `edit_current_flow` takes: a whole new flow, or edits of the current one. */
export const FlowEditRequest = z.discriminatedUnion('mode', [
  z
    .object({
      mode: z.literal('replace'),
      summary: z.string().max(2_000),
      graph: FlowGraph,
      inputSchema: z.record(z.string(), z.unknown()).optional(),
    })
    .strict(),
  z
    .object({
      mode: z.literal('edit'),
      summary: z.string().max(2_000),
      ops: z.array(FlowEditOp).min(1).max(200),
    })
    .strict(),
]);
export type FlowEditRequest = z.infer<typeof FlowEditRequest>;

export const FlowDiff = z.object({
  addedNodes: z.array(z.string()),
  removedNodes: z.array(z.string()),
  changedNodes: z.array(z.string()),
  addedEdges: z.array(EdgeEnds),
  removedEdges: z.array(EdgeEnds),
  inputsChanged: z.boolean(),
});
export type FlowDiff = z.infer<typeof FlowDiff>;

/** A proposal as the canvas shows it: the result, its diff from the base, and whether it is valid. */
export const FlowProposal = z.object({
  request: FlowEditRequest,
  /** `flowFingerprint` of the canvas it was made against: applying it elsewhere is refused as stale. */
  baseFingerprint: z.string(),
  baseRevision: z.number().int().min(0).optional(),
  graph: FlowGraph,
  inputSchema: z.record(z.string(), z.unknown()),
  diff: FlowDiff,
  diagnostics: z.array(FlowDiagnostic),
  valid: z.boolean().describe('the result compiles and validates against the catalog'),
});
export type FlowProposal = z.infer<typeof FlowProposal>;
