import {
  Events,
  ownerFeedEventsOf,
  RunConfig,
  type AgentPlan,
  type RunEvent,
  type RunEventBody,
} from '@switchyard/contracts';
import { createLogger } from '@switchyard/server-observability';
import { OwnerFeedOutbox } from '@switchyard/server-runtime';
import type { RunUpdate } from '@switchyard/server-db-runs';
import { InMemoryBus } from '@switchyard/testing';
import { RunWriter, type RunLog } from './engine/run-writer';
import { RunEventOutbox } from './engine/run-event-outbox';
import { ownerFeedOf } from './owner-feed';

const RUN = '00000000-0000-4000-8000-0000000000cc';
const OWNER = '00000000-0000-4000-8000-0000000000dd';

/** A log that stores each batch at once, numbering its events. */
function log(): RunLog {
  let seq = 0;
  return {
    append: async (runId: string, events: readonly RunEventBody[]): Promise<RunEvent[]> =>
      events.map((e) => ({ ...e, runId, seq: ++seq, at: '' })),
    fail: async () => [],
  };
}

describe('the owner feed of a run (RunWriter → Events.ownerFeed)', () => {
  it("sends the status and gate changes only, each with the run row's status once its batch is stored", async () => {
    const bus = new InMemoryBus();
    const feed = new OwnerFeedOutbox(
      bus,
      createLogger({ level: 'silent', service: 'executor', instanceId: 't' }),
    );
    const w = new RunWriter(
      log(),
      new RunEventOutbox(bus, 0),
      RUN,
      'replica',
      () => undefined,
      ownerFeedOf(feed, OWNER, RUN, 'planning'),
    );
    const created: RunEvent = {
      type: 'run_created',
      data: { goal: 'g', config: RunConfig.parse({}), source: 'workflow' },
      runId: RUN,
      seq: 1,
      at: '',
    };
    // The run's first events are stored with its row and published as they are.
    w.publish([created]);
    const plan: AgentPlan = {
      steps: [{ id: 'a', tool: 'wait', description: '', arguments: {}, dependsOn: [] }],
    };
    await w.emit('plan_ready', { plan }, { plan });
    await w.emit('plan_approval_requested', { gate: 'plan', steps: 1, nonReadSteps: [], reusedSteps: [] }, {
      status: 'awaiting_plan_approval',
    } satisfies RunUpdate);
    await w.emit('plan_approved', { edited: false });
    await w.emit('run_started', { steps: 1, reused: 0 }, { status: 'running' });
    // Not a status or gate change: not on the feed.
    await w.emit('plan_token', { text: 'x', attempt: 1 });
    await w.emit(
      'complete',
      { summary: 's', result: 1, results: { a: 1 } },
      { status: 'completed', finished: true },
    );

    // Every batch here was stored in the same turn (the log answers at once): one message for them all.
    await new Promise((r) => setImmediate(r));
    const messages = bus.sent(Events.ownerFeed(OWNER));
    expect(messages.map((m) => m.kind)).toEqual(['batch']);
    expect(
      messages.flatMap(ownerFeedEventsOf).map((e) => (e.kind === 'run' ? [e.runId, e.type, e.status] : e)),
    ).toEqual([
      [RUN, 'run_created', 'planning'],
      [RUN, 'plan_ready', 'planning'],
      [RUN, 'plan_approval_requested', 'awaiting_plan_approval'],
      [RUN, 'plan_approved', 'awaiting_plan_approval'],
      [RUN, 'run_started', 'running'],
      [RUN, 'complete', 'completed'],
    ]);
    // And the run's own stream still has every event.
    expect(bus.sent(Events.run(RUN)).flatMap((b) => b.events.map((e) => e.type))).toContain('plan_token');
  });
});
