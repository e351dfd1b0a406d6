/** Nest injection tokens for the infrastructure every service shares. */
export const LOGGER = Symbol('LOGGER');
export const METRICS = Symbol('METRICS');
export const CONTEXT = Symbol('CONTEXT');
export const BUS = Symbol('BUS');
export { PRISMA } from '@switchyard/server-db';
export const REDIS = Symbol('REDIS');
export const SERVICE_INFO = Symbol('SERVICE_INFO');
export { APP_CONFIG } from '@switchyard/server-config';

export interface ServiceInfo {
  readonly instanceId: string;
  readonly startedAt: number;
  readonly uses: { readonly postgres: boolean; readonly redis: boolean };
  /** Set when shutdown begins: readiness turns false so load balancers stop sending work. */
  draining: boolean;
}
