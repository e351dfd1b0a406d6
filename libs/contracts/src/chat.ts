import { z } from 'zod';
import {
  ElicitationAction,
  ElicitationAsk,
  ElicitationContent,
  ElicitationMode,
  InputAnswerControl,
  InputAnsweredBy,
  InputRequest,
  RequestedSchema,
} from './elicitation';
import { ErrorCode } from './errors';
import { FlowProposal, FlowSnapshot } from './flow-assistant';
import { PermissionDecision } from './permissions';
import { Budget, BudgetUsage, PermissionMode } from './runs';
import { ToolEffect } from './tools';

/**
 * AI chat: a conversation with a model that may call catalog tools, one turn at a time. Every call
 * passes the same permission gate as a run's steps; an "ask" pauses the turn on a confirmation card.
 * Wire-stable names (the issue pins them): sessions, messages, and the turn's SSE frames `token`,
 * `tool_call`, `approval_requested`, `tool_result`, `message_complete`, `error`.
 */

export const ChatSessionId = z.string().uuid();
export const ChatCallId = z.string().min(1).max(200);

/** Where a session's latest turn stands. */
export const ChatTurnStatus = z.enum([
  'idle',
  'running',
  'awaiting_approval',
  'completed',
  'failed',
  'cancelled',
]);
export type ChatTurnStatus = z.infer<typeof ChatTurnStatus>;

export const CreateChatSessionBody = z
  .object({
    agentId: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('the agent whose system prompt, model settings and tool set this chat uses'),
    permissionMode: PermissionMode.default('ask'),
    title: z.string().trim().max(200).optional().describe('default: the first message, shortened'),
    budget: Budget.optional().describe('limits per turn, within the platform limits (CHAT_MAX_*)'),
  })
  .strict();
export type CreateChatSessionBody = z.infer<typeof CreateChatSessionBody>;

export const UpdateChatSessionBody = z
  .object({
    permissionMode: PermissionMode.optional(),
    title: z.string().trim().min(1).max(200).optional(),
    budget: Budget.nullable().optional(),
  })
  .strict();
export type UpdateChatSessionBody = z.infer<typeof UpdateChatSessionBody>;

export const ChatSession = z.object({
  id: ChatSessionId,
  ownerId: z.string().uuid(),
  agentId: z.number().int().nullable(),
  permissionMode: PermissionMode,
  title: z.string(),
  budget: Budget.nullable(),
  status: ChatTurnStatus,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ChatSession = z.infer<typeof ChatSession>;

export const CreatedChatSession = ChatSession;

/** A chat's default title: its first message on one line, at most 80 characters (server and page agree). */
export function chatTitleOf(content: string): string {
  const line = content.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

export const ChatSessionListQuery = z
  .object({
    cursor: z.string().max(200).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(30),
    q: z.string().trim().max(200).optional(),
  })
  .strict();
export type ChatSessionListQuery = z.infer<typeof ChatSessionListQuery>;

export const ChatSessionPage = z.object({
  items: z.array(ChatSession),
  nextCursor: z.string().nullable(),
});
export type ChatSessionPage = z.infer<typeof ChatSessionPage>;

/** A tool call the model asked for, as the model sent it (arguments may be edited at the card). */
export const ChatToolCallRequest = z.object({
  callId: ChatCallId,
  tool: z.string(),
  arguments: z.record(z.string(), z.unknown()),
});
export type ChatToolCallRequest = z.infer<typeof ChatToolCallRequest>;

export const ChatToolCallStatus = z.enum([
  'pending',
  'awaiting_approval',
  'running',
  'completed',
  'failed',
  'denied',
  'cancelled',
]);
export type ChatToolCallStatus = z.infer<typeof ChatToolCallStatus>;

export const ChatError = z.object({
  code: ErrorCode,
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ChatError = z.infer<typeof ChatError>;

/** A persisted tool call with its outcome. */
export const ChatToolCall = ChatToolCallRequest.extend({
  messageId: z.string().uuid().describe('the assistant message that asked for it'),
  status: ChatToolCallStatus,
  effect: ToolEffect.optional(),
  decision: PermissionDecision.optional(),
  /** The arguments the person approved, when they edited them at the card. */
  editedArguments: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  error: ChatError.optional(),
  durationMs: z.number().min(0).optional(),
});
export type ChatToolCall = z.infer<typeof ChatToolCall>;

export const ChatRole = z.enum(['user', 'assistant', 'tool']);
export type ChatRole = z.infer<typeof ChatRole>;

export const ChatMessage = z.object({
  id: z.string().uuid(),
  seq: z.number().int().positive().describe('order within the session'),
  role: ChatRole,
  content: z.string(),
  /** assistant: the calls it asked for (see the session's toolCalls for their outcomes). */
  callIds: z.array(ChatCallId).optional(),
  /** tool: the call this message answers. */
  callId: ChatCallId.optional(),
  createdAt: z.string(),
  usage: BudgetUsage.optional().describe('assistant: what the turn had spent when this message ended'),
});
export type ChatMessage = z.infer<typeof ChatMessage>;

export const ChatSessionDetail = ChatSession.extend({
  messages: z.array(ChatMessage),
  toolCalls: z.array(ChatToolCall),
  /** The newest event's sequence number: resume the live stream after it. */
  lastEventId: z.number().int().min(0),
  inputRequests: z
    .array(InputRequest)
    .optional()
    .describe("the chat's input requests still waiting for an answer (MCP elicitation)"),
});
export type ChatSessionDetail = z.infer<typeof ChatSessionDetail>;

export const ChatMessageBody = z
  .object({
    content: z.string().trim().min(1, 'a message needs some text').max(100_000),
    flow: FlowSnapshot.optional().describe(
      "the flow builder's canvas as it is now (also unsaved or invalid): the turn's model gets the flow " +
        'assistant tools inspect_current_flow, diagnose_current_flow, edit_current_flow and run_current_flow over it',
    ),
  })
  .strict();
export type ChatMessageBody = z.infer<typeof ChatMessageBody>;

export const ChatApproveBody = z
  .object({
    arguments: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("edited arguments to call the tool with (checked against the tool's schema)"),
  })
  .strict();
export type ChatApproveBody = z.infer<typeof ChatApproveBody>;

export const ChatDenyBody = z
  .object({ reason: z.string().trim().max(2_000).optional().describe('told to the model') })
  .strict();
export type ChatDenyBody = z.infer<typeof ChatDenyBody>;

export const ChatSessionParam = z.object({ id: ChatSessionId });
export const ChatCallParam = z.object({ id: ChatSessionId, callId: ChatCallId });

export const ChatStreamQuery = z.object({ lastEventId: z.coerce.number().int().min(0).optional() }).strict();

/** A reply to approve, deny and cancel. */
export const ChatControlReply = z.object({ accepted: z.boolean(), status: ChatTurnStatus });
export type ChatControlReply = z.infer<typeof ChatControlReply>;

// ---- the turn's events (SSE frames; stored per session with a gapless sequence) ----------------

export const ChatTurnStarted = z.object({ messageId: z.string().uuid(), content: z.string() });
export const ChatToken = z.object({ text: z.string() });
export const ChatToolCallEvent = ChatToolCallRequest.extend({ effect: ToolEffect.optional() });
export const ChatApprovalRequested = ChatToolCallRequest.extend({
  effect: ToolEffect.optional(),
  reason: z.string().describe('why the gate asks'),
});
export const ChatApproved = z.object({
  callId: ChatCallId,
  editedArguments: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("the arguments the person approved instead of the model's"),
});
export const ChatFlowProposal = z.object({ callId: ChatCallId, proposal: FlowProposal });
export const ChatFlowSaved = z.object({
  callId: ChatCallId,
  workflowId: z.string().uuid(),
  revision: z.number().int(),
  runId: z.string().uuid().optional(),
});
export const ChatToolResult = z.object({
  callId: ChatCallId,
  tool: z.string().optional(),
  result: z.unknown().optional(),
  error: ChatError.optional(),
  denied: z.literal(true).optional().describe('the gate or a person refused: error.message is the reason'),
  durationMs: z.number().min(0).optional(),
});
/** A call's MCP server asked for input: the call waits for the person (answer at /api/elicitations/{id}). */
export const ChatInputRequested = z.object({
  callId: ChatCallId,
  tool: z.string(),
  elicitationId: z.string().uuid(),
  server: z.string(),
  mode: ElicitationMode,
  message: z.string(),
  requestedSchema: RequestedSchema.optional(),
  fieldOrder: z
    .array(z.string())
    .optional()
    .describe("form mode: the fields' names in the server's order (the stored log does not keep key order)"),
  url: z
    .string()
    .optional()
    .describe('url mode: the page for the person to open (never fetched by the platform)'),
  expiresAt: z.string(),
});
export const ChatInputAnswered = z.object({
  callId: ChatCallId,
  elicitationId: z.string().uuid(),
  action: ElicitationAction,
  content: ElicitationContent.optional(),
  by: InputAnsweredBy,
  reason: z.string().optional(),
});
export const ChatMemoryInjected = z.object({
  memories: z.array(z.object({ id: z.string(), text: z.string(), score: z.number() })),
});
export const ChatMessageComplete = z.object({
  messageId: z.string().uuid().optional(),
  content: z.string(),
  usage: BudgetUsage.optional(),
});
export const ChatCancelled = z.object({ message: z.string() });
export const ChatFailed = ChatError;

function body<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), data });
}
const stamp = { sessionId: ChatSessionId, seq: z.number().int().positive(), at: z.string() };
function stored<T extends string, D extends z.ZodType>(type: T, data: D) {
  return z.object({ type: z.literal(type), data, ...stamp });
}

export const ChatEventBody = z.discriminatedUnion('type', [
  body('turn_started', ChatTurnStarted),
  body('memory_injected', ChatMemoryInjected),
  body('token', ChatToken),
  body('tool_call', ChatToolCallEvent),
  body('approval_requested', ChatApprovalRequested),
  body('approved', ChatApproved),
  body('input_requested', ChatInputRequested),
  body('input_answered', ChatInputAnswered),
  body('tool_result', ChatToolResult),
  body('flow_proposal', ChatFlowProposal),
  body('flow_saved', ChatFlowSaved),
  body('message_complete', ChatMessageComplete),
  body('cancelled', ChatCancelled),
  body('error', ChatFailed),
]);
export type ChatEventBody = z.infer<typeof ChatEventBody>;

export const ChatEvent = z.discriminatedUnion('type', [
  stored('turn_started', ChatTurnStarted),
  stored('memory_injected', ChatMemoryInjected),
  stored('token', ChatToken),
  stored('tool_call', ChatToolCallEvent),
  stored('approval_requested', ChatApprovalRequested),
  stored('approved', ChatApproved),
  stored('input_requested', ChatInputRequested),
  stored('input_answered', ChatInputAnswered),
  stored('tool_result', ChatToolResult),
  stored('flow_proposal', ChatFlowProposal),
  stored('flow_saved', ChatFlowSaved),
  stored('message_complete', ChatMessageComplete),
  stored('cancelled', ChatCancelled),
  stored('error', ChatFailed),
]);
export type ChatEvent = z.infer<typeof ChatEvent>;
export type ChatEventType = ChatEventBody['type'];
export const CHAT_EVENT_TYPE_LIST: readonly ChatEventType[] = ChatEventBody.options.map(
  (o) => o.shape.type.value,
);
export type ChatEventOf<T extends ChatEventType> = Extract<ChatEvent, { type: T }>;

/** A turn's stream ends after one of these. */
export const TERMINAL_CHAT_EVENTS = [
  'message_complete',
  'cancelled',
  'error',
] as const satisfies readonly ChatEventType[];
const terminalChat: ReadonlySet<string> = new Set(TERMINAL_CHAT_EVENTS);
export function isTerminalChatEvent<E extends { type: string }>(e: E): boolean {
  return terminalChat.has(e.type);
}

/** Where a session's events are published live (after they are stored). */
export function chatEventsSubject(sessionId: string): string {
  return `events.chat.${sessionId}`;
}

/** Where the replica driving a session's turn answers approve, deny and cancel (like a run's control subject). */
export function chatControlSubject(sessionId: string): string {
  return `executor.chat.${sessionId}.control`;
}

/** A message to the replica driving a turn. `ping` asks whether it still drives it. */
export const ChatControl = z.discriminatedUnion('action', [
  z.object({
    action: z.literal('approve'),
    callId: ChatCallId,
    arguments: z.record(z.string(), z.unknown()).optional(),
  }),
  z.object({ action: z.literal('deny'), callId: ChatCallId, reason: z.string().optional() }),
  z.object({ action: z.literal('cancel'), reason: z.string() }),
  /** The session's permission mode changed: it applies from the turn's next call. */
  z.object({ action: z.literal('mode'), permissionMode: PermissionMode }),
  z.object({ action: z.literal('ping') }),
  /** From the registry replica running a call: its server asks for input. */
  ElicitationAsk,
  /** The person's answer to it, checked already. */
  InputAnswerControl,
]);
export type ChatControl = z.infer<typeof ChatControl>;

type ChatEventByType = { [T in ChatEventType]: Extract<ChatEvent, { type: T }> };
export type ChatEventData<T extends ChatEventType> = ChatEventByType[T]['data'];
