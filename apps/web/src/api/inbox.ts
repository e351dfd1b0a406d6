import { useQuery } from '@tanstack/react-query';
import { Routes } from './routes';
import { useAuth } from './auth';
import { call } from './client';

export const inboxKey = ['inbox'] as const;

/** Everything waiting for this person: runs at a plan gate or a step gate, and tools' input requests. */
export function useInbox() {
  const { can } = useAuth();
  return useQuery({
    queryKey: inboxKey,
    queryFn: () => call(Routes.inbox),
    enabled: can('agent:run:approve'),
  });
}

export function useInboxCount(): number {
  const data = useInbox().data;
  return (data?.items.length ?? 0) + (data?.inputRequests.length ?? 0);
}
