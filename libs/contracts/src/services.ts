import { z } from 'zod';

/** The five services. Each name is also its NATS queue group and the first token of its subjects. */
export const ServiceName = z.enum(['gateway', 'planner', 'executor', 'tool-registry', 'scheduler']);
export type ServiceName = z.infer<typeof ServiceName>;
export const SERVICE_NAMES = ServiceName.options;

export const Dependency = z.enum(['nats', 'postgres', 'redis']);
export type Dependency = z.infer<typeof Dependency>;

export const DependencyCheck = z.object({
  status: z.enum(['up', 'down']),
  latencyMs: z.number().nonnegative(),
  error: z.string().optional(),
});
export type DependencyCheck = z.infer<typeof DependencyCheck>;

/** A capability a service offers or cannot offer here (not a dependency: the platform stays up). */
export const FeatureCheck = z.object({
  status: z.enum(['available', 'unavailable']),
  detail: z.string(),
});
export type FeatureCheck = z.infer<typeof FeatureCheck>;

export const ServiceHealth = z.object({
  service: ServiceName,
  status: z.enum(['up', 'degraded']).describe('degraded when one of its own dependencies is down'),
  instanceId: z.string(),
  version: z.string(),
  uptimeSeconds: z.number().nonnegative(),
  checks: z.partialRecord(Dependency, DependencyCheck),
  features: z.record(z.string(), FeatureCheck).optional(),
});
export type ServiceHealth = z.infer<typeof ServiceHealth>;

export const ServiceStatus = z.object({
  status: z.enum(['up', 'degraded', 'down']),
  latencyMs: z.number().nonnegative(),
  error: z.string().optional(),
  instanceId: z.string().optional(),
  version: z.string().optional(),
  uptimeSeconds: z.number().optional(),
});
export type ServiceStatus = z.infer<typeof ServiceStatus>;

export const PlatformHealth = z.object({
  status: z.enum(['up', 'down']),
  down: z.array(z.string()).describe('names of the services and dependencies that are not up'),
  services: z.record(ServiceName, ServiceStatus),
  dependencies: z.record(Dependency, DependencyCheck),
  features: z
    .record(z.string(), FeatureCheck)
    .describe(
      'capabilities reported by the services, e.g. commandSandbox; unavailable ones do not make the platform down',
    ),
  checkedAt: z.string(),
});
export type PlatformHealth = z.infer<typeof PlatformHealth>;

export const ServiceNameParam = z.object({ name: ServiceName });
export type ServiceNameParam = z.infer<typeof ServiceNameParam>;
