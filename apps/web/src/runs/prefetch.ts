import type { QueryClient } from '@tanstack/react-query';
import { Routes } from '../api/routes';
import { call, tokenStore } from '../api/client';
import { runIdOfPath } from '../api/early';
import { lazyComponent } from '../ui/lazy';

/** The run page, loaded on demand (its module fetches the DAG's code as soon as it is here). */
export const RunPage = lazyComponent(() => import('../pages/RunPage'));
/** The DAG (its layout engine and canvas), loaded on demand. */
export const DagView = lazyComponent(() => import('./DagView'));

/** On a run page's URL (and signed in), starts loading what that page needs, all at once. */
export function prefetchRunPage(queries: QueryClient, path: string): void {
  const runId = runIdOfPath(path);
  if (!runId || !tokenStore.get()) return;
  // Side by side: the page's code would ask for the DAG's only once it had arrived and run.
  void RunPage.preload();
  void DagView.preload();
  void queries.prefetchQuery({
    queryKey: ['run', runId],
    queryFn: () => call(Routes.runGet, { params: { runId } }),
  });
}
