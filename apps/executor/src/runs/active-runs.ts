import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import {
  Events,
  RunControl,
  runControlSubject,
  type ElicitationReply,
  type InputAnswerReply,
  type RunControlReply,
  type RunEvent,
} from '@switchyard/contracts';
import type { AppConfig } from '@switchyard/server-config';
import type { Bus } from '@switchyard/server-bus';
import { RunsRepository } from '@switchyard/server-db-runs';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER, SERVICE_INFO, type ServiceInfo } from '@switchyard/server-runtime';
import type { RunDriver } from './run-driver';
import { InputWaits } from '../inputs/input-waits';
import { RunEventOutbox } from './engine/run-event-outbox';

/** What each control message is answered with. */
export type ControlReply<M extends RunControl> = M extends { action: 'elicit' }
  ? ElicitationReply
  : M extends { action: 'input' }
    ? InputAnswerReply
    : RunControlReply;

/** What the replica needs of a run it drives (the RunDriver; a stand-in in tests). */
export type DrivenRun = Pick<
  RunDriver,
  'runId' | 'approve' | 'cancel' | 'abandon' | 'writerFailed' | 'input'
>;

/**
 * The runs this replica drives. Each one answers its own control subject (approve, cancel), and the
 * replica keeps a lease on each of them in Postgres, renewed every third of RUN_LEASE_MS for the runs
 * it still drives (a run its driver dropped is not renewed). Every replica also
 * sweeps for runs whose owner stopped renewing and marks them `interrupted`: a run whose replica
 * died is reported within RUN_LEASE_MS + RUN_SWEEP_MS. Nothing is replayed; the user resumes.
 */
@Injectable()
export class ActiveRuns implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** This process's instance id (host, pid, a random part): what `run.owner_replica` names. */
  readonly replica: string;
  private readonly drivers = new Map<string, { driver: DrivenRun; unsubscribe: () => void }>();
  private timers: NodeJS.Timeout[] = [];
  private stopping = false;

  constructor(
    private readonly repo: RunsRepository,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
    @Inject(SERVICE_INFO) info: Pick<ServiceInfo, 'instanceId'>,
    private readonly inputs: InputWaits,
    /** The replica's one way out for run events: an interruption leaves after what it holds. */
    private readonly outbox: RunEventOutbox,
  ) {
    this.replica = info.instanceId;
  }

  onApplicationBootstrap(): void {
    const { leaseMs, sweepMs } = this.config.runs;
    this.timers.push(
      setInterval(() => void this.renew(), Math.max(100, Math.floor(leaseMs / 3))),
      setInterval(() => void this.sweep(), sweepMs),
    );
    void this.sweep();
  }

  get(runId: string): DrivenRun | undefined {
    return this.drivers.get(runId)?.driver;
  }

  get size(): number {
    return this.drivers.size;
  }

  /** Starts answering the run's control subject (before anyone is told its id). */
  async register(driver: DrivenRun): Promise<void> {
    const unsubscribe = await this.bus.respond(runControlSubject(driver.runId), (payload) =>
      this.act(driver, RunControl.parse(payload)),
    );
    this.drivers.set(driver.runId, { driver, unsubscribe });
  }

  /** The driver is done with the run (or gave it up). */
  closed(runId: string): void {
    const entry = this.drivers.get(runId);
    if (!entry) return;
    this.drivers.delete(runId);
    entry.unsubscribe();
  }

  /** Forwards a control message to whichever replica drives the run. */
  async control<M extends RunControl>(runId: string, msg: M): Promise<ControlReply<M>> {
    const local = this.get(runId);
    if (local) return this.act(local, msg);
    return (await this.bus.request(runControlSubject(runId), msg)) as ControlReply<M>;
  }

  private act<M extends RunControl>(driver: DrivenRun, msg: M): Promise<ControlReply<M>>;
  private act(driver: DrivenRun, msg: RunControl): Promise<unknown> {
    switch (msg.action) {
      case 'approve':
        return driver.approve(msg.stepId, msg.plan);
      case 'cancel':
        return driver.cancel(msg.reason);
      case 'elicit':
        return driver.input(msg);
      case 'input':
        // The wait is this replica's (it drives the run): settle it.
        return this.inputs.answer(msg.elicitationId, msg.reply, msg.answeredBy);
    }
  }

  private async renew(): Promise<void> {
    if (!this.drivers.size || this.stopping) return;
    try {
      await this.repo.renewLeases(this.replica, this.config.runs.leaseMs, [...this.drivers.keys()]);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'could not renew run leases');
    }
  }

  private async sweep(): Promise<void> {
    if (this.stopping) return;
    try {
      const events = await this.repo.interrupt(
        'the executor replica running this run stopped responding (its lease expired); resume the run to continue',
      );
      void this.publish(events);
      for (const e of events) {
        this.logger.warn({ runId: e.runId }, 'run interrupted: its replica stopped renewing the lease');
        this.get(e.runId)?.abandon();
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'run lease sweep failed');
    }
  }

  /** Resolves once the owners' feeds are told too. */
  private publish(events: readonly RunEvent[]): Promise<void> {
    this.outbox.publishUnchecked(events);
    return this.tellOwners(events);
  }

  /** The owner feed hears of runs interrupted here too (a rare path: one row read per run). */
  private async tellOwners(events: readonly RunEvent[]): Promise<void> {
    for (const e of events) {
      try {
        const run = await this.repo.get(e.runId);
        if (run)
          this.bus.emit(Events.ownerFeed(run.ownerId), {
            kind: 'run',
            runId: e.runId,
            status: 'interrupted',
            type: e.type,
          });
      } catch (err) {
        this.logger.warn({ runId: e.runId, err: (err as Error).message }, 'owner feed not told of a run');
      }
    }
  }

  /** Graceful stop: in-flight work is abandoned and its runs are reported interrupted right away. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.timers.forEach((t) => clearInterval(t));
    this.timers = [];
    if (!this.drivers.size) return;
    for (const { driver } of [...this.drivers.values()]) driver.abandon();
    try {
      const events = await this.repo.interrupt(
        'the executor replica running this run shut down; resume the run to continue',
        { replica: this.replica, limit: 10_000 },
      );
      await this.publish(events);
      this.logger.info({ runs: events.length }, 'runs interrupted by shutdown');
    } catch (err) {
      this.logger.error({ err: (err as Error).message }, 'could not mark runs interrupted at shutdown');
    }
  }
}
