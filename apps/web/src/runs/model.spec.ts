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
