import { z } from 'zod';

/** Where a run's events are published live (after they are stored): `events.run.<runId>`. */
export function runEventsSubject(runId: string): string {
  return `events.run.${runId}`;
}

/** Event types after which a run's stream ends. */
export const TERMINAL_RUN_EVENTS: ReadonlySet<string> = new Set([
  'complete',
  'error',
  'cancelled',
  'interrupted',
]);

export const RunEventMessage = z.object({
  runId: z.string().uuid(),
  seq: z.number().int().positive(),
  type: z.string().min(1).max(64),
  data: z.record(z.string(), z.unknown()),
  at: z.string(),
});
export type RunEventMessage = z.infer<typeof RunEventMessage>;

export const StreamQuery = z.object({
  runId: z.string().uuid(),
  /** For clients that cannot send the Last-Event-ID header: resume after this sequence number. */
  lastEventId: z.coerce.number().int().min(0).optional(),
});
export type StreamQuery = z.infer<typeof StreamQuery>;
