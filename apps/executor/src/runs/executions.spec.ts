import type { AgentPlan } from '@switchyard/contracts';
import type { StoredRunEvent } from '@switchyard/server-db';
import { foldExecutions, reusableSteps } from './executions';

const plan: AgentPlan = {
  steps: [
    { id: 'a', tool: 'wait', arguments: { ms: 0 }, dependsOn: [], description: '' },
    { id: 'b', tool: 'wait', arguments: { ms: 1 }, dependsOn: ['a'], description: '' },
    { id: 'c', tool: 'write_file', arguments: {}, dependsOn: ['b'], description: '' },
    { id: 'd', tool: 'wait', arguments: {}, dependsOn: [], description: '' },
  ],
};
let seq = 0;
const ev = (type: string, data: Record<string, unknown>): StoredRunEvent => ({
  runId: '00000000-0000-4000-8000-000000000000',
  seq: ++seq,
  type,
  data,
  at: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
});

describe('step executions folded from events', () => {
  const events = [
    ev('step_start', { stepId: 'a', attempt: 1, arguments: { ms: 0 } }),
    ev('step_complete', { stepId: 'a', attempt: 1, result: { n: 1 }, truncated: false }),
    ev('step_start', { stepId: 'b', attempt: 1 }),
    ev('step_retry', { stepId: 'b', attempt: 1, error: 'flaky' }),
    ev('step_start', { stepId: 'b', attempt: 2 }),
    ev('step_failed', { stepId: 'b', attempt: 2, error: 'still flaky' }),
    ev('step_approval_requested', { stepId: 'c' }),
    ev('step_start', { stepId: 'd', attempt: 1 }),
    ev('step_failed', { stepId: 'd', error: 'cancelled: by the user', cancelled: true }),
  ];

  it('gives each step its latest state, attempt, result and error, in plan order', () => {
    const x = foldExecutions(plan, events);
    expect(x.map((e) => [e.stepId, e.status, e.attempt, e.error])).toEqual([
      ['a', 'completed', 1, null],
      ['b', 'failed', 2, 'still flaky'],
      ['c', 'awaiting_approval', 0, null],
      ['d', 'cancelled', 1, 'cancelled: by the user'],
    ]);
    expect(x[0]).toMatchObject({ result: { n: 1 }, reused: false, truncated: false });
    expect(x[0]?.startedAt).not.toBeNull();
    expect(x[0]?.finishedAt).not.toBeNull();
  });

  it('lists a step no plan mentions (an edit dropped it) after the plan steps', () => {
    const x = foldExecutions({ steps: [plan.steps[0] as AgentPlan['steps'][number]] }, [
      ev('step_start', { stepId: 'z', tool: 'wait' }),
    ]);
    expect(x.map((e) => [e.stepId, e.status])).toEqual([
      ['a', 'waiting'],
      ['z', 'running'],
    ]);
  });

  it('offers only completed steps for reuse, remembering what they were planned with', () => {
    const reuse = reusableSteps(plan, foldExecutions(plan, events));
    expect([...reuse.keys()]).toEqual(['a']);
    expect(reuse.get('a')).toEqual({
      tool: 'wait',
      plannedArguments: '{"ms":0}',
      result: { n: 1 },
      truncated: false,
    });
  });
});
