/**
 * The Nest token of a service's Prisma client (provided by the service kit). Repositories are injected
 * with it; an app reaches its tables only through its repositories (lint: eslint.config.mjs).
 */
export const PRISMA = Symbol('PRISMA');
