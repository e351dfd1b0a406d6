import { isOwnerFeedRunEvent, type RunEvent, type RunStatus } from '@switchyard/contracts';
import type { RunUpdate } from '@switchyard/server-db-runs';
import type { OwnerFeedOutbox } from '@switchyard/server-runtime';

/**
 * Tells the run's owner feed about the events that change what a list or an inbox shows, once they
 * are stored and published. The status sent is the run row's status after the batch that carried
 * the event (a batch's events are stored in one statement). What one turn tells an owner leaves in
 * one message (`OwnerFeedOutbox`): a run's first events, and the batches of the runs stored together.
 */
export function ownerFeedOf(
  feed: OwnerFeedOutbox,
  ownerId: string,
  runId: string,
  status: RunStatus,
): (events: readonly RunEvent[], update: RunUpdate | undefined) => void {
  let current = status;
  return (events, update) => {
    if (update?.status) current = update.status;
    for (const e of events)
      if (isOwnerFeedRunEvent(e.type))
        feed.tell(ownerId, { kind: 'run', runId, status: current, type: e.type });
  };
}
