/**
 * Key prefixes of the background-task queues, derived from the NATS subject prefix so that stacks
 * sharing one NATS and one Redis (tests, staging) never see each other's tasks.
 */
export function taskQueueNames(subjectPrefix: string): {
  bullPrefix: string;
  queue: string;
  fairPrefix: string;
} {
  const scope = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '') || 'default';
  return { bullPrefix: `sy:${scope}:bull`, queue: 'bg-tasks', fairPrefix: `sy:${scope}:fq` };
}
