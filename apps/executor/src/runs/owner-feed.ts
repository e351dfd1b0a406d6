import { Events, isOwnerFeedRunEvent, type RunEvent, type RunStatus } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { RunUpdate } from '@switchyard/server-db-runs';

/**
 * Tells the run's owner feed (`Events.ownerFeed`) about the events that change what a list or an
 * inbox shows, once they are stored and published. The status sent is the run row's status after
 * the batch that carried the event (a batch's events are stored in one statement). The feed is at
 * most once, like all plain NATS: clients refetch on `resync` and on reload.
 */
export function ownerFeedOf(
  bus: BusPort,
  ownerId: string,
  runId: string,
  status: RunStatus,
): (events: readonly RunEvent[], update: RunUpdate | undefined) => void {
  let current = status;
  const feed = Events.ownerFeed(ownerId);
  return (events, update) => {
    if (update?.status) current = update.status;
    for (const e of events) {
      if (!isOwnerFeedRunEvent(e.type)) continue;
      try {
        bus.emit(feed, { kind: 'run', runId, status: current, type: e.type });
      } catch {
        // A hint for live lists: a lost one costs a refetch later, never the run's own writer.
      }
    }
  };
}
