import type { RunDetail, RunEvent, RunEventBody, RunStatus } from '@switchyard/contracts';
import { viewOf } from './model';

const RUN = '00000000-0000-4000-8000-000000000001';

function detail(status: RunStatus, bodies: RunEventBody[], eventsTruncated = false): RunDetail {
  const events = bodies.map(
    (b, i) => ({ ...b, runId: RUN, seq: i + 1, at: '2026-12-03T00:00:00.000Z' }) as RunEvent,
  );
  return {
    id: RUN,
    ownerId: RUN,
    status,
    goal: 'g',
    summary: null,
    error: null,
    sourceRunId: null,
    batchId: null,
    createdAt: '2026-12-03T00:00:00.000Z',
    updatedAt: '2026-12-03T00:00:00.000Z',
    finishedAt: null,
    config: {},
    inputs: {},
    plan: null,
    executions: [],
    events,
    eventsTruncated,
    agentId: null,
    budget: null,
    usage: { tokens: 0, toolCalls: 0, wallMs: 0 },
    sandboxPosture: null,
  };
}

const started: RunEventBody = { type: 'run_started', data: { steps: 1, reused: 0 } };
const complete: RunEventBody = { type: 'complete', data: { summary: 'done', result: null, results: {} } };
const resumed: RunEventBody = { type: 'resumed', data: { from: 'completed', reusedSteps: [] } };

describe('viewOf (a run page drawn from the run detail)', () => {
  it('takes the status from the row while the run goes on', () => {
    expect(viewOf(detail('running', [started])).status).toBe('running');
  });

  it("believes a log that ends with the run's end over a row read just before it finished", () => {
    // The row said running, the log (read after it) already holds the end: the page must know the
    // run is over, or it waits on a stream the server has nothing more to send on.
    const view = viewOf(detail('running', [started, complete]));
    expect(view.status).toBe('completed');
    expect(view.lastSeq).toBe(2);
  });

  it('keeps the row when the run was resumed after its end, or the log was cut', () => {
    expect(viewOf(detail('running', [started, complete, resumed])).status).toBe('running');
    expect(viewOf(detail('running', [started, complete], true)).status).toBe('running');
  });
});

describe("a step's input request on the run page", () => {
  const plan = {
    steps: [{ id: 'ask', tool: 'mcp__forms__ask', arguments: {}, dependsOn: [], description: '' }],
  };
  const ID = '00000000-0000-4000-8000-0000000000e1';
  const requested: RunEventBody = {
    type: 'step_input_requested',
    data: {
      stepId: 'ask',
      tool: 'mcp__forms__ask',
      elicitationId: ID,
      server: 'forms',
      mode: 'form',
      message: 'Who?',
      // As read back from a jsonb log: keys sorted. fieldOrder keeps the server's order.
      requestedSchema: { type: 'object', properties: { age: { type: 'integer' }, name: { type: 'string' } } },
      fieldOrder: ['name', 'age'],
      expiresAt: '2026-12-03T00:10:00.000Z',
    },
  };
  const answered: RunEventBody = {
    type: 'step_input_answered',
    data: { stepId: 'ask', tool: 'mcp__forms__ask', elicitationId: ID, action: 'decline', by: 'person' },
  };
  const ready: RunEventBody = { type: 'plan_ready', data: { plan } };

  it('shows a waiting request (and its step waiting), and drops it once answered', () => {
    const waiting = viewOf(detail('running', [ready, started, requested]));
    expect([...waiting.inputs.values()]).toEqual([
      {
        id: ID,
        stepId: 'ask',
        tool: 'mcp__forms__ask',
        server: 'forms',
        mode: 'form',
        message: 'Who?',
        requestedSchema: (requested.data as { requestedSchema: unknown }).requestedSchema,
        fieldOrder: ['name', 'age'],
        expiresAt: '2026-12-03T00:10:00.000Z',
      },
    ]);
    expect(waiting.steps.get('ask')?.waitingForInput).toBe(true);
    const done = viewOf(detail('running', [ready, started, requested, answered]));
    expect(done.inputs.size).toBe(0);
    expect(done.steps.get('ask')?.waitingForInput).toBe(false);
  });

  it("takes what waits from the detail's input requests (the table's word)", () => {
    const d = detail('running', [ready, started, requested]);
    d.inputRequests = [];
    expect(viewOf(d).inputs.size).toBe(0);
    expect(viewOf(d).steps.get('ask')?.waitingForInput).toBe(false);
  });
});
