import type { FlowSnapshot } from '@switchyard/contracts';
import type { RunView } from '../../runs/model';
import { graphOf, type FlowDoc } from '../doc';

/**
 * The canvas as the assistant's turn sees it: the graph as drawn (also unsaved or invalid), the
 * inputs, which saved workflow and revision it started from, and the run shown on it when that failed.
 */
export function snapshotOf(
  doc: FlowDoc,
  meta: { readonly id: string | null; readonly name: string; readonly revision: number },
  run: RunView | undefined,
): FlowSnapshot {
  return {
    ...(meta.id ? { workflowId: meta.id, revision: meta.revision } : {}),
    ...(meta.name ? { name: meta.name.slice(0, 200) } : {}),
    graph: graphOf(doc),
    inputSchema: doc.inputSchema,
    ...(run && run.status === 'failed'
      ? {
          lastRun: {
            runId: run.runId,
            status: run.status,
            ...(run.error
              ? {
                  error: {
                    message: run.error.message,
                    code: run.error.code,
                    ...(run.error.stepId ? { stepId: run.error.stepId } : {}),
                  },
                }
              : {}),
          },
        }
      : {}),
  };
}
