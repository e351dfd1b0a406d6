/**
 * NATS subjects: `<service>.<aggregate>.<verb>` for requests (see `Rpc` in rpc.ts, which pairs each
 * subject with its schemas), past tense under `events.` for events. Wire-stable: renaming one is a
 * breaking change between service versions. Deployments may put a prefix in front of every subject
 * (NATS_SUBJECT_PREFIX) so several stacks can share one NATS; the bus adds it.
 */

/** NATS headers carried on every request. Identity is only ever read from here, never from a body. */
export const Headers = {
  ownerId: 'x-switchyard-owner',
  role: 'x-switchyard-role',
  correlationId: 'x-correlation-id',
} as const;
