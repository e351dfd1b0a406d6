import { isTransient, type ErrorCode, type ToolDescriptor } from '@switchyard/contracts';
import { retrySafe } from '@switchyard/plan';

/**
 * Whether a failed tool call may be tried again. Only a retry-safe tool (it reads, or declares itself
 * idempotent: a second call cannot repeat an effect), and only for a failure another try can fix:
 * the tool itself reported it (`tool_failed`) or it is transient (`isTransient`: timeout,
 * unavailable, capacity_exceeded). Refusals — validation_failed, not_found, forbidden, a permission
 * denial, conflict — fail the same way every time, and `internal` is a bug: none is retried.
 */
export function mayRetry(tool: Pick<ToolDescriptor, 'effect' | 'idempotent'>, code: ErrorCode): boolean {
  return retrySafe(tool) && (code === 'tool_failed' || isTransient(code));
}
