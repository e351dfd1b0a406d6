import type { z } from 'zod';
import { ChatEvent, chatEventsSubject } from './chat';
import { OwnerFeedMessage, ownerFeedSubject } from './feed';
import { MemorySettingChanged, MEMORY_SETTING_CHANGED_SUBJECT } from './memory';
import { RecordChangedEvent, RECORD_CHANGED_SUBJECT } from './mcp-tools';
import {
  McpAccessChanged,
  MCP_ACCESS_CHANGED_SUBJECT,
  WorkflowsChanged,
  WORKFLOWS_CHANGED_SUBJECT,
} from './mcp-server';
import { PluginChangedEvent, PLUGIN_CHANGED_SUBJECT } from './plugins';
import { PermissionsChanged, PERMISSIONS_CHANGED_SUBJECT } from './permissions';
import { HeardRunEventBatch, RunEventBatch, runEventsSubject } from './run-events';
import { PlanTokens, planTokensSubject } from './runs';
import { TASK_KILL_SUBJECT, TaskKill } from './tasks';
import { CancelInvocation, TOOL_CANCEL_SUBJECT } from './tools';

/**
 * A NATS event: its subject and the schema of its payload. Every subscriber hears every message
 * (no queue group), at most once (plain NATS). The bus parses the payload when it is sent, and a
 * subscriber drops a message that does not fit (it may come from another version): it checks
 * `heard` when the contract has one (a lighter check of a payload its sender parsed), else `schema`.
 */
export interface EventContract<S extends z.ZodType = z.ZodType> {
  readonly subject: string;
  readonly schema: S;
  readonly heard?: z.ZodType<z.output<S>>;
}

export type EventPayload<E extends EventContract> = z.output<E['schema']>;

export function event<S extends z.ZodType>(
  subject: string,
  schema: S,
  heard?: z.ZodType<z.output<S>>,
): EventContract<S> {
  return heard ? { subject, schema, heard } : { subject, schema };
}

/** Every event sent over NATS. Wire-stable like `Rpc`. */
export const Events = {
  /** Stop a tool call (the registry replica running it aborts it; a workflow tool cancels its run). */
  toolCancel: event(TOOL_CANCEL_SUBJECT, CancelInvocation),
  /** A tool record changed: every registry replica drops its client and cache. */
  recordChanged: event(RECORD_CHANGED_SUBJECT, RecordChangedEvent),
  /** A plugin changed: every registry replica forgets its cached list and stops its server. */
  pluginChanged: event(PLUGIN_CHANGED_SUBJECT, PluginChangedEvent),
  /** An owner's (or the global) rules or hooks changed: every executor replica reloads them. */
  permissionsChanged: event(PERMISSIONS_CHANGED_SUBJECT, PermissionsChanged),
  /** An owner turned memory on or off: registry replicas drop the cached setting (memory tools). */
  memorySettingChanged: event(MEMORY_SETTING_CHANGED_SUBJECT, MemorySettingChanged),
  /** A workflow was published, unpublished or deleted: MCP sessions of its owner re-list their tools. */
  workflowsChanged: event(WORKFLOWS_CHANGED_SUBJECT, WorkflowsChanged),
  /** An owner's MCP access changed: gateways drop the cached setting, sessions re-list their tools. */
  mcpAccessChanged: event(MCP_ACCESS_CHANGED_SUBJECT, McpAccessChanged),
  /** A task was killed: the executor running its body cancels the run. */
  taskKill: event(TASK_KILL_SUBJECT, TaskKill),
  /** A run's events, published live once stored, in batches (the SSE relay follows them). */
  run: (runId: string) => event(runEventsSubject(runId), RunEventBatch, HeardRunEventBatch),
  /** A chat session's events, published live once stored (the chat SSE relay follows them). */
  chat: (sessionId: string) => event(chatEventsSubject(sessionId), ChatEvent),
  /** Token chunks of a plan being drafted, from the planner to the executor that owns the run. */
  planTokens: (runId: string) => event(planTokensSubject(runId), PlanTokens),
  /** What changed for one owner (run status and gates, task states), for live lists: the owner feed. */
  ownerFeed: (ownerId: string) => event(ownerFeedSubject(ownerId), OwnerFeedMessage),
} as const;
