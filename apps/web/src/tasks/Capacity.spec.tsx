import { render, screen } from '@testing-library/react';
import type { Task, TaskCapacity } from '@switchyard/contracts';
import { I18nProvider, translate } from '../i18n/i18n';
import { CapacityPanel, warningsOf } from './Capacity';
import { liveFigures } from './TaskRows';

/** The seed's warnings are derived from the capacity route's figures, not invented by the page. */

function capacity(over: Partial<TaskCapacity> = {}): TaskCapacity {
  return {
    policy: 'owner-round-robin-weighted-priority',
    weights: { interactive: 4, normal: 2, batch: 1 },
    running: 2,
    runningLimit: 16,
    queued: 3,
    globalQueueLimit: 128,
    queuedByPriority: { interactive: 0, normal: 1, batch: 2 },
    batchGlobalLimit: 64,
    nonInteractiveGlobalLimit: 96,
    activeOwners: 1,
    saturated: false,
    oldestQueueWaitMs: 4_000,
    oldestInteractiveQueueWaitMs: null,
    oldestNormalQueueWaitMs: 4_000,
    oldestBatchQueueWaitMs: 1_000,
    owner: {
      queued: 3,
      running: 2,
      queuedByPriority: { interactive: 0, normal: 1, batch: 2 },
      ownerQueueLimit: 32,
      ownedQueueAvailable: 29,
      batchOwnerLimit: 16,
      nonInteractiveOwnerLimit: 24,
      ownerSaturated: false,
    },
    ...over,
  };
}
const t = (key: Parameters<typeof translate>[1], vars?: Record<string, string | number>) =>
  translate('en', key, vars);

test('a calm queue raises no warning', () => {
  expect(warningsOf(capacity(), t)).toEqual([]);
});

test('a full bound and a class waiting 30 s or more are named', () => {
  const c = capacity({
    queuedByPriority: { interactive: 0, normal: 1, batch: 64 },
    queued: 65,
    oldestBatchQueueWaitMs: 31_500,
    oldestNormalQueueWaitMs: 29_999,
  });
  const warnings = warningsOf(c, t);
  expect(warnings).toEqual([
    'Queue bound full: Batch, all owners holds 64 of 64; new tasks it covers are refused.',
    'The oldest batch task has waited 31 s: batch work is aging.',
  ]);
  render(
    <I18nProvider lang="en">
      <CapacityPanel capacity={c} />
    </I18nProvider>,
  );
  expect(screen.getByTestId('task-warnings').textContent).toContain('batch work is aging');
  expect(screen.getByRole('meter', { name: 'Batch, all owners' }).getAttribute('aria-valuenow')).toBe('64');
});

test('an own bound full and a saturated platform are both said', () => {
  const c = capacity({
    saturated: true,
    owner: { ...capacity().owner, queued: 32, ownerQueueLimit: 32, ownerSaturated: true },
  });
  const warnings = warningsOf(c, t);
  expect(warnings[0]).toBe('Every running slot is busy and the global queue is full.');
  expect(warnings).toContain('Queue bound full: My queue holds 32 of 32; new tasks it covers are refused.');
});

test('waits and durations advance from the server’s figures while a task is active', () => {
  const base: Task = {
    id: '00000000-0000-4000-8000-000000000001',
    ownerId: '00000000-0000-4000-8000-000000000002',
    workflowId: '00000000-0000-4000-8000-000000000003',
    priority: 'batch',
    state: 'queued',
    queued: true,
    runId: null,
    createdAt: '2026-12-03T08:00:00.000Z',
    queueWaitMs: 5_000,
    startedAt: null,
    runDurationMs: null,
    finishedAt: null,
    output: null,
    outputTruncated: false,
    error: null,
  };
  expect(liveFigures(base, 1_000, 4_000)).toEqual({ wait: 8_000, duration: null });
  const running = { ...base, state: 'running' as const, queued: false, runDurationMs: 2_000 };
  expect(liveFigures(running, 1_000, 4_000)).toEqual({ wait: 5_000, duration: 5_000 });
  const done = { ...running, state: 'completed' as const };
  expect(liveFigures(done, 1_000, 9_000)).toEqual({ wait: 5_000, duration: 2_000 });
});
