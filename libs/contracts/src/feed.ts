import { z } from 'zod';
import { PermissionDecision } from './permissions';
import { RUN_EVENT_TYPE_LIST } from './run-events';
import { RunStatus, RunSummary } from './runs';
import { TaskState } from './tasks';
import { ToolEffect } from './tools';

// Interim shapes for the web client; the server side lands with the inbox and owner-feed work.
export const OwnerFeedEvent = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('run'),
    runId: z.string().uuid(),
    status: RunStatus,
    type: z.enum(RUN_EVENT_TYPE_LIST as [string, ...string[]]),
  }),
  z.object({ kind: z.literal('task'), taskId: z.string().uuid(), status: TaskState }),
]);
export type OwnerFeedEvent = z.infer<typeof OwnerFeedEvent>;

export const InboxItem = z.object({
  run: RunSummary,
  gate: z.enum(['plan', 'step']),
  stepId: z.string().optional(),
  tool: z.string().optional(),
  effect: ToolEffect.optional(),
  reason: z.string().optional(),
  arguments: z.unknown().optional(),
  permission: PermissionDecision.optional(),
  since: z.string(),
});
export const Inbox = z.object({ items: z.array(InboxItem) });
export type Inbox = z.infer<typeof Inbox>;
