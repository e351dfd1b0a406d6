import type { RouteIndex, RouteRef, Routes as Table } from '@switchyard/contracts';
import index from 'virtual:switchyard/routes';

/**
 * The contract's route table as the console calls it: every route's method, path and media types,
 * typed by its full definition. The data comes from `routeIndexOf(Routes)` when the bundle is built
 * (vite.config.mts), so the console never builds the contract's schemas just to know where to send
 * a request: on a slow machine that took most of the bundle's start-up time.
 */
export const Routes: RouteIndex<typeof Table> = index as RouteIndex<typeof Table>;

/** A route's URL: its `{param}`s filled in (encoded), the query's set values appended. */
export function routePath(def: RouteRef, params?: Record<string, unknown>, query?: Record<string, unknown>) {
  const path = def.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null || value === '')
      throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(String(value));
  });
  const search = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== null && v !== '') search.set(k, String(v));
  }
  const qs = search.toString();
  return qs ? `${path}?${qs}` : path;
}
