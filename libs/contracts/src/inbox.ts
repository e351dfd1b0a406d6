import { z } from 'zod';
import { InputRequest } from './elicitation';
import { PermissionDecision } from './permissions';
import { RunSummary } from './runs';
import { ToolEffect } from './tools';

/** Most items an inbox answers (oldest first): a person works from the oldest gate. */
export const INBOX_LIMIT = 200;

/**
 * One gate waiting for the caller: a run's plan (`gate: 'plan'`) or one step's tool call
 * (`gate: 'step'`, with what the step_approval_requested event said about it).
 */
export const InboxItem = z.object({
  run: RunSummary,
  gate: z.enum(['plan', 'step']),
  stepId: z.string().optional(),
  tool: z.string().optional(),
  effect: ToolEffect.optional(),
  reason: z.string().optional().describe('why the step asks (the rule, hook or mode that decided)'),
  arguments: z.unknown().optional().describe("the step's resolved arguments as stored (possibly cut)"),
  permission: PermissionDecision.optional(),
  since: z.string().describe('when the gate opened (ISO time)'),
});
export type InboxItem = z.infer<typeof InboxItem>;

export const Inbox = z.object({
  items: z
    .array(InboxItem)
    .describe(`everything waiting for the caller's approval, oldest first (at most ${INBOX_LIMIT})`),
  inputRequests: z
    .array(InputRequest)
    .describe(
      `MCP servers' input requests waiting for the caller, in their runs and chats, oldest first (at most ${INBOX_LIMIT})`,
    ),
});
export type Inbox = z.infer<typeof Inbox>;
