import { Events } from './events';
import {
  HeardRunEventBatch,
  isTerminalRunEvent,
  RunEvent,
  RunEventBody,
  STEP_RUN_EVENTS,
  TERMINAL_RUN_EVENTS,
  type RunEventType,
} from './run-events';
import { RunConfig } from './runs';

const envelope = { runId: '00000000-0000-4000-8000-000000000001', seq: 1, at: '2026-01-01T00:00:00.000Z' };
const allow = { decision: 'allow', reason: 'full-access' };
const plan = { steps: [{ id: 'a', tool: 'wait', arguments: { ms: 0 }, dependsOn: [], description: '' }] };

/** One event of each type, as the executor emits it. */
const SAMPLES: Record<RunEventType, unknown> = {
  run_created: {
    goal: 'g',
    config: RunConfig.parse({}),
    source: 'workflow',
    workflowId: envelope.runId,
    version: null,
  },
  planning_started: {},
  plan_token: { text: '{"ste', attempt: 1 },
  memory_injected: {
    memories: [{ id: '00000000-0000-4000-8000-000000000002', text: 'I prefer metric units', score: 1 }],
  },
  plan_ready: { plan, attempts: 2 },
  plan_approval_requested: { gate: 'plan', steps: 1, nonReadSteps: [], reusedSteps: [] },
  plan_approved: { edited: true, plan },
  run_started: { steps: 1, reused: 0 },
  step_start: {
    stepId: 'a',
    tool: 'wait',
    effect: 'read',
    attempt: 1,
    description: '',
    arguments: {},
    permission: allow,
  },
  step_approval_requested: {
    gate: 'step',
    stepId: 'a',
    tool: 'write_file',
    effect: 'write',
    arguments: '{"content":"\\u0000"}',
    argumentsEncoded: 'json',
    reason: 'ask mode',
    permission: { decision: 'ask', reason: 'ask mode' },
  },
  step_approved: { stepId: 'a' },
  step_input_requested: {
    stepId: 'a',
    tool: 'mcp__forms__ask',
    elicitationId: '00000000-0000-4000-8000-000000000003',
    server: 'forms',
    mode: 'form',
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    expiresAt: '2026-01-01T00:10:00.000Z',
  },
  step_input_answered: {
    stepId: 'a',
    tool: 'mcp__forms__ask',
    elicitationId: '00000000-0000-4000-8000-000000000003',
    action: 'decline',
    by: 'platform',
    reason: 'nobody can answer during an unattended run',
  },
  step_retry: { stepId: 'a', tool: 'wait', attempt: 1, code: 'timeout', error: 'slow', delayMs: 1000 },
  step_complete: { stepId: 'a', tool: 'wait', attempt: 1, result: null, truncated: false, durationMs: 1.5 },
  step_failed: {
    stepId: 'a',
    tool: 'wait',
    attempt: 1,
    cancelled: false,
    code: 'tool_failed',
    error: 'boom',
  },
  cancel_requested: { message: 'cancelled by the user' },
  resumed: { from: 'interrupted', reusedSteps: ['a'] },
  cancelled: { message: 'cancelled by the user' },
  interrupted: { message: 'the replica stopped' },
  complete: { summary: 'done', result: 1, results: { a: 1 } },
  error: { message: 'step a (wait) failed: boom', code: 'tool_failed', stepId: 'a' },
};

describe('run event catalog', () => {
  it('has one schema for every event a run emits', () => {
    expect(RunEventBody.options.map((o) => o.shape.type.value).sort()).toEqual(Object.keys(SAMPLES).sort());
  });

  it('stores each body as it is emitted, with the same data schema', () => {
    expect(RunEvent.options.map((o) => [o.shape.type.value, o.shape.data])).toEqual(
      RunEventBody.options.map((o) => [o.shape.type.value, o.shape.data]),
    );
  });

  it.each(Object.entries(SAMPLES))('parses a stored %s event', (type, data) => {
    expect(RunEvent.parse({ ...envelope, type, data })).toEqual({ ...envelope, type, data });
  });

  it('refuses events that drifted from the catalog', () => {
    const bad = (type: string, data: unknown) => RunEvent.safeParse({ ...envelope, type, data }).success;
    expect(bad('plan_invalid', {})).toBe(false); // never emitted
    expect(bad('step_failed', { stepId: 'a', tool: 'wait', attempt: 1, cancelled: false, error: 'x' })).toBe(
      false,
    );
    expect(bad('error', { message: 'no code' })).toBe(false);
    expect(
      bad('step_retry', { stepId: 'a', tool: 'wait', attempt: 1, code: 'nope', error: 'x', delayMs: 0 }),
    ).toBe(false);
    expect(
      bad('step_complete', {
        stepId: 'a',
        tool: 'wait',
        attempt: 1,
        result: 1,
        truncated: false,
        encoded: 'base64',
      }),
    ).toBe(false);
    // A cancelled step carries no error code.
    expect(
      bad('step_failed', { stepId: 'a', tool: 'wait', attempt: 0, cancelled: true, error: 'cancelled' }),
    ).toBe(true);
    expect(RunEvent.safeParse({ ...envelope, seq: 0, type: 'planning_started', data: {} }).success).toBe(
      false,
    );
  });

  it('derives the terminal and step sets from the catalog', () => {
    expect([...TERMINAL_RUN_EVENTS].sort()).toEqual(['cancelled', 'complete', 'error', 'interrupted']);
    expect(STEP_RUN_EVENTS).toEqual([
      'step_approval_requested',
      'step_start',
      'step_retry',
      'step_complete',
      'step_failed',
    ]);
    expect(isTerminalRunEvent({ type: 'error' })).toBe(true);
    expect(isTerminalRunEvent({ type: 'cancel_requested' })).toBe(false);
  });

  it('checks the stamp and type of a batch a subscriber hears, not the data its sender parsed', () => {
    const stored = Object.entries(SAMPLES).map(([type, data], i) => ({
      ...envelope,
      seq: i + 1,
      type,
      data,
    }));
    // Every stored event of the catalog is heard as it was sent.
    expect(HeardRunEventBatch.parse({ events: stored })).toEqual({ events: stored });
    expect(Events.run(envelope.runId).heard).toBe(HeardRunEventBatch);
    const heard = (...events: unknown[]) => HeardRunEventBatch.safeParse({ events }).success;
    const one = { ...envelope, type: 'planning_started', data: {} };
    expect(heard(one)).toBe(true);
    // What another version may send, or nothing of the kind: the whole message is dropped.
    expect(heard()).toBe(false);
    expect(heard(one, { ...one, type: 'plan_token_v2' })).toBe(false);
    expect(heard({ ...one, seq: 0 })).toBe(false);
    expect(heard({ ...one, seq: 1.5 })).toBe(false);
    expect(heard({ ...one, seq: '1' })).toBe(false);
    expect(heard({ ...one, runId: 1 })).toBe(false);
    expect(heard({ ...one, at: undefined })).toBe(false);
    expect(heard({ ...one, data: [] })).toBe(false);
    expect(heard({ ...one, data: null })).toBe(false);
    expect(heard(null)).toBe(false);
    expect(HeardRunEventBatch.safeParse({ events: one }).success).toBe(false);
    expect(HeardRunEventBatch.safeParse('{"events":[]}').success).toBe(false);
  });
});
