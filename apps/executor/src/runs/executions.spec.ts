import type { AgentPlan, PermissionDecision, StepRunEvent } from '@switchyard/contracts';
import { foldExecutions, reusableSteps } from './executions';

const plan: AgentPlan = {
  steps: [
    { id: 'a', tool: 'wait', arguments: { ms: 0 }, dependsOn: [], description: '' },
    { id: 'b', tool: 'wait', arguments: { ms: 1 }, dependsOn: ['a'], description: '' },
    { id: 'c', tool: 'write_file', arguments: {}, dependsOn: ['b'], description: '' },
    { id: 'd', tool: 'wait', arguments: {}, dependsOn: [], description: '' },
  ],
};
const allow: PermissionDecision = { decision: 'allow', reason: 'full-access' };
let seq = 0;
const ev = <E extends Pick<StepRunEvent, 'type' | 'data'>>(e: E) => ({
  ...e,
  runId: '00000000-0000-4000-8000-000000000000',
  seq: ++seq,
  at: new Date(1_700_000_000_000 + seq * 1000).toISOString(),
});
const start = (stepId: string, attempt: number, args: unknown = {}) =>
  ev({
    type: 'step_start',
    data: {
      stepId,
      tool: 'wait',
      effect: 'read',
      attempt,
      description: '',
      arguments: args,
      permission: allow,
    },
  });

describe('step executions folded from events', () => {
  const events: StepRunEvent[] = [
    start('a', 1, { ms: 0 }),
    ev({
      type: 'step_complete',
      data: { stepId: 'a', tool: 'wait', attempt: 1, result: { n: 1 }, truncated: false },
    }),
    start('b', 1),
    ev({
      type: 'step_retry',
      data: { stepId: 'b', tool: 'wait', attempt: 1, code: 'tool_failed', error: 'flaky', delayMs: 10 },
    }),
    start('b', 2),
    ev({
      type: 'step_failed',
      data: {
        stepId: 'b',
        tool: 'wait',
        attempt: 2,
        cancelled: false,
        code: 'timeout',
        error: 'still flaky',
      },
    }),
    ev({
      type: 'step_approval_requested',
      data: {
        gate: 'step',
        stepId: 'c',
        tool: 'write_file',
        effect: 'write',
        arguments: {},
        reason: 'ask',
        permission: { decision: 'ask', reason: 'ask' },
      },
    }),
    start('d', 1),
    ev({
      type: 'step_failed',
      data: { stepId: 'd', tool: 'wait', attempt: 1, cancelled: true, error: 'cancelled: by the user' },
    }),
  ];

  it('gives each step its latest state, attempt, result and error, in plan order', () => {
    const x = foldExecutions(plan, events);
    expect(x.map((e) => [e.stepId, e.status, e.attempt, e.error, e.code])).toEqual([
      ['a', 'completed', 1, null, null],
      ['b', 'failed', 2, 'still flaky', 'timeout'],
      ['c', 'awaiting_approval', 0, null, null],
      ['d', 'cancelled', 1, 'cancelled: by the user', null],
    ]);
    expect(x[0]).toMatchObject({ result: { n: 1 }, reused: false, truncated: false });
    expect(x[0]?.startedAt).not.toBeNull();
    expect(x[0]?.finishedAt).not.toBeNull();
  });

  it('lists a step no plan mentions (an edit dropped it) after the plan steps', () => {
    const x = foldExecutions({ steps: [plan.steps[0] as AgentPlan['steps'][number]] }, [start('z', 1)]);
    expect(x.map((e) => [e.stepId, e.status])).toEqual([
      ['a', 'waiting'],
      ['z', 'running'],
    ]);
  });

  it('gives back results and arguments the log kept as JSON text', () => {
    const [x] = foldExecutions({ steps: [plan.steps[0] as AgentPlan['steps'][number]] }, [
      ev({
        type: 'step_start',
        data: {
          stepId: 'a',
          tool: 'wait',
          effect: 'read',
          attempt: 1,
          description: '',
          arguments: '{"value":"a\\u0000"}',
          argumentsEncoded: 'json',
          permission: allow,
        },
      }),
      ev({
        type: 'step_complete',
        data: {
          stepId: 'a',
          tool: 'wait',
          attempt: 1,
          result: '"bin\\u0000\\ud800"',
          truncated: false,
          encoded: 'json',
        },
      }),
    ]);
    expect(x).toMatchObject({
      arguments: { value: 'a\u0000' },
      result: 'bin\u0000\ud800',
      status: 'completed',
    });
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
