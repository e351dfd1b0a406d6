import { useQuery } from '@tanstack/react-query';
import type { Agent } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';

/** The caller's agents for the picker (one page of 200 is more than a person keeps). */
export function useAgents(): { agents: readonly Agent[]; allowed: boolean; error: unknown } {
  const { can } = useAuth();
  const allowed = can('agent:agent:list');
  const list = useQuery({
    queryKey: ['settings', 'agents', 'picker'],
    queryFn: ({ signal }) => call(Routes.agentList, { query: { pageNum: 1, pageSize: 200 }, signal }),
    enabled: allowed,
    staleTime: 60_000,
  });
  return { agents: list.data?.items ?? [], allowed, error: list.error };
}

/** Agent names by id, for a session's header. */
export function useAgentNames(): ReadonlyMap<number, string> {
  const { agents } = useAgents();
  return new Map(agents.map((a) => [a.id, a.name]));
}
