import { useQuery } from '@tanstack/react-query';
import type { WorkflowSummary } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { useAuth } from '../api/auth';
import { call } from '../api/client';

/** The largest page the workflow list serves. */
const PAGE_SIZE = 200;

/**
 * The caller's workflows, for pickers and for naming a schedule's or trigger's workflow. The list
 * route has no "published only" filter: the pickers filter on `publishedVersion` here.
 */
export function useWorkflows() {
  const { can } = useAuth();
  return useQuery({
    queryKey: ['workflows', 'all'],
    queryFn: async ({ signal }) => {
      const items: WorkflowSummary[] = [];
      for (let pageNum = 1; pageNum <= 10; pageNum++) {
        const page = await call(Routes.workflowList, { query: { pageNum, pageSize: PAGE_SIZE }, signal });
        items.push(...page.items);
        if (items.length >= page.total || !page.items.length) break;
      }
      return items;
    },
    enabled: can('workflow:list'),
    staleTime: 30_000,
  });
}

export function workflowName(list: readonly WorkflowSummary[] | undefined, id: string): string {
  return list?.find((w) => w.id === id)?.name ?? id.slice(0, 8);
}
