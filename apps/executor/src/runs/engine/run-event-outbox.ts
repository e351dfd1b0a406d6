import { Events, isOwnerFeedRunEvent, RUN_EVENT_BATCH_BYTES, type RunEvent } from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';

/**
 * Where a replica's stored run events leave for the gateways' live streams (RUN_EVENT_WINDOW_MS).
 *
 * Every bus write wakes the bus and a gateway, and on these VMs that write is the costliest part of
 * a fast step. So after a write, what the replica stores in the next `windowMs` (its runs' steps,
 * however many runs) is held and leaves together when the window closes: a chain of fast steps costs
 * one write per window instead of one per step, and a thousand parallel steps a few writes instead
 * of hundreds. An event after a quiet spell leaves at once, and so does an event that changes a run's
 * status or gate (a start, an approval asked for, an end: what the owner feed announces), with
 * everything held before it: nobody waits on an end or a gate, and the owner feed, told of such an
 * event as it is stored, never runs ahead of the run's own stream. Order within a run is kept.
 *
 * Held events are durable already (the writer publishes what the log has stored): a replica that
 * dies holding some leaves a gap in a gateway's feed, which the gateway fills from the log when the
 * run's next event arrives (StreamRelay), as it does for any event the bus lost.
 *
 * What leaves together leaves as one message per run (`RunEventBatch`): the NATS client frames,
 * and a gateway parses and dispatches, each message once, so a write of fifty step starts is one
 * message, not fifty. A batch is cut before RUN_EVENT_BATCH_BYTES of JSON (NATS refuses a message
 * over its max payload, 1 MiB by default).
 */
export class RunEventOutbox {
  private held: RunEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastWrite = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly bus: BusPort,
    /** How long after a write the next one is held back; 0 sends each batch as it comes. */
    private readonly windowMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Sends (or holds) events of one run, in order, whose bodies the writer parsed against the catalog
   * already (so the bus does not parse them again).
   */
  publish(events: readonly RunEvent[]): void {
    if (!events.length) return;
    this.held.push(...events);
    const urgent = events.some((e) => isOwnerFeedRunEvent(e.type));
    if (this.timer && !urgent) return;
    const wait = this.lastWrite + this.windowMs - this.now();
    if (wait <= 0 || urgent) this.flush();
    else this.timer = setTimeout(() => this.flush(), wait);
  }

  /**
   * Sends events stored elsewhere (a run's first events, written with its row) at once, after what
   * is held: the bus checks them against the catalog here, in the caller's turn.
   */
  publishUnchecked(events: readonly RunEvent[]): void {
    this.flush();
    for (const [runId, ofRun] of byRun(events)) this.bus.emit(Events.run(runId), { events: ofRun });
    if (events.length) this.lastWrite = this.now();
  }

  /** A replica shutting down sends what it holds while its bus is still open. */
  beforeApplicationShutdown(): void {
    this.flush();
  }

  /** Sends whatever is held now. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.held.length) return;
    this.lastWrite = this.now();
    const out = this.held;
    this.held = [];
    for (const [runId, events] of byRun(out)) this.send(Events.run(runId).subject, events);
  }

  /** One run's events as few messages as RUN_EVENT_BATCH_BYTES allows (an event is never split). */
  private send(subject: string, events: readonly RunEvent[]): void {
    let parts: string[] = [];
    let size = 0;
    for (const e of events) {
      const json = JSON.stringify(e);
      if (parts.length && size + json.length > RUN_EVENT_BATCH_BYTES) {
        this.sendBatch(subject, parts);
        parts = [];
        size = 0;
      }
      parts.push(json);
      size += json.length + 1;
    }
    this.sendBatch(subject, parts);
  }

  private sendBatch(subject: string, parts: readonly string[]): void {
    try {
      this.bus.publishJson(subject, `{"events":[${parts.join(',')}]}`);
    } catch {
      // Refused by the client (one event over the server's max payload, a closed connection): the
      // events are stored, and a gateway reads them from the log at the run's next event.
    }
  }
}

/** Events grouped by run, each run's in the order given. */
function byRun(events: readonly RunEvent[]): Map<string, RunEvent[]> {
  const runs = new Map<string, RunEvent[]>();
  for (const e of events) {
    const list = runs.get(e.runId);
    if (list) list.push(e);
    else runs.set(e.runId, [e]);
  }
  return runs;
}
