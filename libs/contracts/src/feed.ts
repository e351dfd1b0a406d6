import { z } from 'zod';
import { InputRequestStatus } from './elicitation';
import { RunEventBody } from './run-events';
import { RunStatus } from './runs';
import { TaskState } from './tasks';

/** Every run event type of the catalog, as an enum. */
export const RunEventTypeName = z.enum(
  RunEventBody.options.map((o) => o.shape.type.value) as [
    RunEventBody['type'],
    ...Array<RunEventBody['type']>,
  ],
);

/** The run events that change what a list or an inbox shows: a status, a gate or an input request. */
export const OWNER_FEED_RUN_EVENTS = [
  'run_created',
  'plan_ready',
  'plan_approval_requested',
  'plan_approved',
  'run_started',
  'step_approval_requested',
  'step_approved',
  'step_input_requested',
  'step_input_answered',
  'resumed',
  'complete',
  'error',
  'cancelled',
  'interrupted',
] as const satisfies ReadonlyArray<RunEventBody['type']>;

const feedRunEvents: ReadonlySet<string> = new Set(OWNER_FEED_RUN_EVENTS);
export function isOwnerFeedRunEvent(type: string): type is (typeof OWNER_FEED_RUN_EVENTS)[number] {
  return feedRunEvents.has(type);
}

/**
 * What changed for an owner, for live lists and the inbox count: a hint to refetch, not a copy of
 * the state (the run's own stream and the list routes are the truth). `status` is the run's status
 * (or the task's state) once the change was stored.
 */
export const OwnerFeedEvent = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('run'),
    runId: z.string().uuid(),
    status: RunStatus,
    type: RunEventTypeName,
  }),
  z.object({ kind: z.literal('task'), taskId: z.string().uuid(), status: TaskState }),
  /** An input request in a chat opened or was settled (a run's come as its run events). */
  z.object({ kind: z.literal('input'), id: z.string().uuid(), status: InputRequestStatus }),
]);
export type OwnerFeedEvent = z.infer<typeof OwnerFeedEvent>;

/** The most events one owner-feed message carries. */
export const OWNER_FEED_BATCH_LIMIT = 256;

/**
 * An owner-feed message on the bus: one event, or the events of one owner told in the same turn
 * (a stored batch of run events, a batch of task transitions), in order. Gateways relay each event
 * as a frame of its own, so clients see the same frames either way. Gateways of versions before
 * 2026-12-06 read single events only and drop a batch: upgrade the gateways first.
 */
export const OwnerFeedMessage = z.discriminatedUnion('kind', [
  ...OwnerFeedEvent.options,
  z.object({
    kind: z.literal('batch'),
    events: z.array(OwnerFeedEvent).min(2).max(OWNER_FEED_BATCH_LIMIT),
  }),
]);
export type OwnerFeedMessage = z.infer<typeof OwnerFeedMessage>;

/** The events an owner-feed message carries, in order. */
export function ownerFeedEventsOf(m: OwnerFeedMessage): readonly OwnerFeedEvent[] {
  return m.kind === 'batch' ? m.events : [m];
}

/**
 * The data of an `event: resync` frame: events may have been missed (another gateway replica, a
 * restart, a reconnect after too long), so the client refetches what it shows.
 */
export const OwnerFeedResync = z.object({}).strict();

/** The data of any frame of the owner feed: `event: run|task` carry an OwnerFeedEvent, `resync` `{}`. */
export const OwnerFeedFrame = z.union([OwnerFeedEvent, OwnerFeedResync]);
export type OwnerFeedFrame = z.infer<typeof OwnerFeedFrame>;

export const OwnerFeedQuery = z.object({
  lastEventId: z
    .string()
    .max(64)
    .optional()
    .describe('for clients that cannot send the Last-Event-ID header: resume after this frame id'),
});
export type OwnerFeedQuery = z.infer<typeof OwnerFeedQuery>;

/** Where an owner's feed events are published: `events.owner.<ownerId>`. */
export function ownerFeedSubject(ownerId: string): string {
  return `events.owner.${ownerId}`;
}
