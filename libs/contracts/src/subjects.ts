/**
 * NATS subjects: `<service>.<aggregate>.<verb>` for requests, past tense under `events.` for events.
 * Wire-stable: renaming one is a breaking change between service versions.
 * Deployments may put a prefix in front of every subject (NATS_SUBJECT_PREFIX); the bus adds it.
 */
export const Subjects = {
  gateway: { healthCheck: 'gateway.health.check' },
  planner: { healthCheck: 'planner.health.check' },
  executor: { healthCheck: 'executor.health.check' },
  toolRegistry: { healthCheck: 'tool-registry.health.check' },
  scheduler: { healthCheck: 'scheduler.health.check' },
} as const;

export function healthSubject(service: 'gateway' | 'planner' | 'executor' | 'tool-registry' | 'scheduler'): string {
  return `${service}.health.check`;
}

/** NATS headers carried on every request. Identity is only ever read from here, never from a body. */
export const Headers = {
  ownerId: 'x-switchyard-owner',
  role: 'x-switchyard-role',
  correlationId: 'x-correlation-id',
} as const;
