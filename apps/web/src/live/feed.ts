import { useEffect, useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { OwnerFeedEvent } from '@switchyard/contracts';
import { tokenStore } from '../api/client';
import { inboxKey } from '../api/inbox';
import { parseJson } from './run-stream';

export type FeedState = 'connecting' | 'open' | 'reconnecting';
const RETRY_MS = [1_000, 2_000, 5_000, 10_000];

/**
 * The owner's one multiplexed stream (run status changes, approvals waiting, task changes): live
 * lists and the inbox count refresh from it instead of each holding a connection of its own. After
 * a drop it resumes from the last event id; when the server cannot replay that far it says `resync`
 * and every live list is fetched again.
 */
export function useOwnerFeed(): FeedState {
  const queries = useQueryClient();
  const [state, setState] = useState<FeedState>('connecting');
  useEffect(() => {
    let source: EventSource | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let stopped = false;
    let last = '';
    const refreshAll = () => {
      void queries.invalidateQueries({ queryKey: ['runs'] });
      void queries.invalidateQueries({ queryKey: inboxKey });
      void queries.invalidateQueries({ queryKey: ['tasks'] });
    };
    const open = () => {
      const token = encodeURIComponent(tokenStore.get() ?? '');
      source = new EventSource(
        `/api/events?token=${token}${last ? `&lastEventId=${encodeURIComponent(last)}` : ''}`,
      );
      source.onopen = () => {
        failures = 0;
        setState('open');
      };
      source.addEventListener('resync', () => refreshAll());
      const onChange = (msg: MessageEvent<string>) => {
        if (msg.lastEventId) last = msg.lastEventId;
        const parsed = OwnerFeedEvent.safeParse(parseJson(msg.data));
        if (!parsed.success) return;
        const e = parsed.data;
        if (e.kind === 'run') {
          void queries.invalidateQueries({ queryKey: ['runs'] });
          // Marked stale for the next page that opens the run, not fetched again: a page showing it
          // follows the run's own stream (a refetch of its whole history mid-stream was wasted work).
          void queries.invalidateQueries({ queryKey: ['run', e.runId], refetchType: 'none' });
          // …except a page whose first read of it failed: it tries again.
          void queries.refetchQueries({
            queryKey: ['run', e.runId],
            type: 'active',
            predicate: (q) => q.state.status === 'error',
          });
          void queries.invalidateQueries({ queryKey: inboxKey });
        } else if (e.kind === 'input') {
          void queries.invalidateQueries({ queryKey: inboxKey });
        } else {
          void queries.invalidateQueries({ queryKey: ['tasks'] });
        }
      };
      source.addEventListener('run', onChange as EventListener);
      source.addEventListener('task', onChange as EventListener);
      source.addEventListener('input', onChange as EventListener);
      source.onerror = () => {
        source?.close();
        if (stopped) return;
        setState('reconnecting');
        timer = setTimeout(open, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
      };
    };
    open();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      source?.close();
    };
  }, [queries]);
  return state;
}
