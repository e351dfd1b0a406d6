import { pgPoolProviders } from '@switchyard/server-db';

/** The task table's raw pg pool: the task hot path as prepared statements (Prisma compiled each query). */
export const TASKS_POOL = Symbol('TASKS_POOL');

/** The pool and its closer: providers of the scheduler's module. */
export const TASKS_POOL_PROVIDERS = pgPoolProviders(TASKS_POOL, 'tasks');
