import type { QueryClient } from '@tanstack/react-query';
import { Routes } from '@switchyard/contracts';
import { call, tokenStore } from '../api/client';
import { lazyComponent } from '../ui/lazy';

/** The run page, loaded on demand (its module fetches the DAG's code as soon as it is here). */
export const RunPage = lazyComponent(() => import('../pages/RunPage'));

const RUN_PATH = /^\/runs\/([0-9a-f-]{36})$/;

/** On a run page's URL (and signed in), starts loading what that page needs, all at once. */
export function prefetchRunPage(queries: QueryClient, path: string): void {
  const runId = RUN_PATH.exec(path)?.[1];
  if (!runId || !tokenStore.get()) return;
  void RunPage.preload();
  void queries.prefetchQuery({
    queryKey: ['run', runId],
    queryFn: () => call(Routes.runGet, { params: { runId } }),
  });
}
