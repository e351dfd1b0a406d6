import type { RouteIndex, Routes as Table } from '@switchyard/contracts';
import index from 'virtual:switchyard/routes';

/**
 * The contract's route table as the console calls it: every route's method, path and media types,
 * typed by its full definition. The data comes from `routeIndexOf(Routes)` when the bundle is built
 * (vite.config.mts), so the console never builds the contract's schemas just to know where to send
 * a request: on a slow machine that took most of the bundle's start-up time.
 */
export const Routes: RouteIndex<typeof Table> = index as RouteIndex<typeof Table>;
