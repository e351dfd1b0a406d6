import type { ElicitationMode, InputRequest, RequestedSchema } from '@switchyard/contracts';

/** An input request still waiting, as a page shows it (from an event or from the API). */
export interface PendingInput {
  readonly id: string;
  readonly stepId?: string;
  readonly callId?: string;
  readonly tool: string;
  readonly server: string;
  readonly mode: ElicitationMode;
  readonly message: string;
  readonly requestedSchema?: RequestedSchema;
  /** The fields' names in the server's order (a schema read back from the log has its keys sorted). */
  readonly fieldOrder?: readonly string[];
  readonly url?: string;
  readonly expiresAt: string;
}

/** What an input_requested event (a run's or a chat's) says. */
export interface InputRequestedData {
  readonly elicitationId: string;
  readonly stepId?: string;
  readonly callId?: string;
  readonly tool: string;
  readonly server: string;
  readonly mode: ElicitationMode;
  readonly message: string;
  readonly requestedSchema?: RequestedSchema;
  readonly fieldOrder?: string[];
  readonly url?: string;
  readonly expiresAt: string;
}

export function pendingOfEvent(d: InputRequestedData): PendingInput {
  return {
    id: d.elicitationId,
    ...(d.stepId !== undefined ? { stepId: d.stepId } : {}),
    ...(d.callId !== undefined ? { callId: d.callId } : {}),
    tool: d.tool,
    server: d.server,
    mode: d.mode,
    message: d.message,
    ...(d.requestedSchema ? { requestedSchema: d.requestedSchema } : {}),
    ...(d.fieldOrder ? { fieldOrder: d.fieldOrder } : {}),
    ...(d.url !== undefined ? { url: d.url } : {}),
    expiresAt: d.expiresAt,
  };
}

export function pendingOfRequest(r: InputRequest): PendingInput {
  return {
    id: r.id,
    ...(r.stepId !== null ? { stepId: r.stepId } : {}),
    ...(r.callId !== null ? { callId: r.callId } : {}),
    tool: r.tool,
    server: r.server,
    mode: r.mode,
    message: r.message,
    ...(r.requestedSchema ? { requestedSchema: r.requestedSchema } : {}),
    ...(r.url !== null ? { url: r.url } : {}),
    expiresAt: r.expiresAt,
  };
}
