import { pgPoolProviders } from '@switchyard/server-db';

/** The run log's raw pg pool (RunsRepository's hot path: appends and creates as prepared statements). */
export const RUNS_POOL = Symbol('RUNS_POOL');

/** The pool and its closer: providers of the executor's module. */
export const RUNS_POOL_PROVIDERS = pgPoolProviders(RUNS_POOL, 'runs');
