import { randomUUID } from 'node:crypto';
import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  AppError,
  Events,
  type ElicitationAction,
  type ElicitationParams,
  type ElicitationReply,
  type InputAnsweredBy,
  type InputAnswerReply,
  type InputRequest,
  type InputRequestStatus,
} from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import type { AppConfig } from '@switchyard/server-config';
import { InputRequestsRepository } from '@switchyard/server-db-runs';
import type { Logger } from '@switchyard/server-observability';
import { APP_CONFIG, BUS, LOGGER } from '@switchyard/server-runtime';

/** What is asked, and for whom. */
export interface InputAsk {
  readonly ownerId: string;
  readonly target:
    | { readonly runId: string; readonly stepId: string }
    | { readonly sessionId: string; readonly callId: string };
  /** The run's goal or the chat's title. */
  readonly label: string;
  readonly invocationId: string;
  readonly tool: string;
  readonly server: string;
  readonly request: ElicitationParams;
}

/** How a request was settled. */
export interface InputSettled {
  readonly reply: ElicitationReply;
  readonly by: InputAnsweredBy;
  readonly reason?: string;
  readonly answeredByOwner?: string;
}

/** What the run engine and the chat turn need of the waits (a stand-in in unit tests). */
export interface InputPort {
  /** How long a wait lasts at most (ELICITATION_TIMEOUT_MS). */
  readonly timeoutMs: number;
  /**
   * Records the request, lets `announce` write its event (the request can be answered from then
   * on) and waits for the answer, the timeout, or `signal` (the run or chat stopped: cancel, with
   * `stopReason`). The row is settled before this resolves.
   */
  ask(
    a: InputAsk,
    opts: {
      readonly signal: AbortSignal;
      readonly stopReason: () => string;
      readonly announce: (request: InputRequest) => Promise<unknown>;
    },
  ): Promise<{ readonly request: InputRequest; readonly settled: InputSettled }>;
  /** Records a request the platform declines at once (nobody can answer it). */
  declined(a: InputAsk, reason: string): Promise<InputRequest>;
}

export function statusOf(action: ElicitationAction): Exclude<InputRequestStatus, 'pending'> {
  return action === 'accept' ? 'accepted' : action === 'decline' ? 'declined' : 'cancelled';
}

/** "10 min", "1.5 s": for reasons people read. */
export function humanMs(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${Math.round(ms / 100) / 10} s`;
}

interface Waiter {
  /** Settles the wait once; false when it was settled already. */
  readonly finish: (s: InputSettled) => boolean;
  /** Resolves once the settled row is written. */
  readonly written: Promise<InputRequest | undefined>;
}

/**
 * The input requests this replica waits on (for the runs and chat turns it drives): each is written
 * to Postgres first (the inbox, the run and chat pages and the answer's checks read it there), then
 * waits here for its answer, which reaches this replica on the run's or chat's control subject.
 */
@Injectable()
export class InputWaits implements InputPort, BeforeApplicationShutdown {
  private readonly waiting = new Map<string, Waiter>();

  constructor(
    private readonly repo: InputRequestsRepository,
    @Inject(BUS) private readonly bus: BusPort,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * A chat's request opened or was settled: its owner's feed hears it (the inbox count). A run's
   * are told by its run events.
   */
  private tell(r: InputRequest | undefined): void {
    if (!r?.sessionId) return;
    try {
      this.bus.emit(Events.ownerFeed(r.ownerId), { kind: 'input', id: r.id, status: r.status });
    } catch {
      // A hint for the inbox count: a lost one costs a refetch later.
    }
  }

  get timeoutMs(): number {
    return this.config.elicitation.timeoutMs;
  }

  async declined(a: InputAsk, reason: string): Promise<InputRequest> {
    const r = await this.repo.create({
      id: randomUUID(),
      ...a,
      expiresAt: new Date(),
      settled: { status: 'declined', reason, answeredBy: 'platform' },
    });
    this.tell(r);
    return r;
  }

  async ask(
    a: InputAsk,
    opts: {
      readonly signal: AbortSignal;
      readonly stopReason: () => string;
      readonly announce: (request: InputRequest) => Promise<unknown>;
    },
  ): Promise<{ request: InputRequest; settled: InputSettled }> {
    const id = randomUUID();
    const timeoutMs = this.timeoutMs;
    let settle!: (s: InputSettled) => void;
    const outcome = new Promise<InputSettled>((resolve) => (settle = resolve));
    let done = false;
    let written!: (r: InputRequest | undefined) => void;
    const waiter: Waiter = {
      finish: (s) => {
        if (done) return false;
        done = true;
        settle(s);
        return true;
      },
      written: new Promise((resolve) => (written = resolve)),
    };
    // Waiting before the row exists: an answer may come as soon as the event is out.
    this.waiting.set(id, waiter);
    let timer: NodeJS.Timeout | undefined;
    const onStop = () =>
      waiter.finish({ reply: { action: 'cancel' }, by: 'platform', reason: opts.stopReason() });
    try {
      const request = await this.repo.create({
        id,
        ...a,
        expiresAt: new Date(Date.now() + timeoutMs),
      });
      await opts.announce(request);
      this.tell(request);
      timer = setTimeout(
        () =>
          waiter.finish({
            reply: { action: 'cancel' },
            by: 'platform',
            reason: `nobody answered within ${humanMs(timeoutMs)} (ELICITATION_TIMEOUT_MS)`,
          }),
        timeoutMs,
      );
      opts.signal.addEventListener('abort', onStop, { once: true });
      if (opts.signal.aborted) onStop();
      const settled = await outcome;
      const row = await this.repo
        .settle(id, {
          status: statusOf(settled.reply.action),
          answeredBy: settled.by,
          ...(settled.reply.content ? { content: settled.reply.content } : {}),
          ...(settled.reason ? { reason: settled.reason } : {}),
          ...(settled.answeredByOwner ? { answeredByOwner: settled.answeredByOwner } : {}),
        })
        .catch((err: Error) => {
          this.logger.warn({ id, err: err.message }, 'could not record how an input request was settled');
          return undefined;
        });
      written(row);
      this.tell(row);
      return { request: row ?? request, settled };
    } catch (err) {
      // Not recorded or not announced: nobody can answer it, so it does not stay pending.
      if (waiter.finish({ reply: { action: 'cancel' }, by: 'platform' }))
        await this.repo
          .settle(id, {
            status: 'cancelled',
            answeredBy: 'platform',
            reason: `it could not be shown: ${(err as Error).message}`,
          })
          .catch(() => undefined);
      throw err;
    } finally {
      clearTimeout(timer);
      opts.signal.removeEventListener('abort', onStop);
      this.waiting.delete(id);
      written(undefined);
    }
  }

  /** The person's answer (checked already), on the replica holding the wait. */
  async answer(id: string, reply: ElicitationReply, answeredByOwner?: string): Promise<InputAnswerReply> {
    const waiter = this.waiting.get(id);
    const accepted = waiter?.finish({
      reply,
      by: 'person',
      ...(answeredByOwner ? { answeredByOwner } : {}),
    });
    if (!waiter || !accepted)
      throw new AppError(
        'conflict',
        `input request ${id} is not waiting any more (answered, timed out, or its call ended)`,
      );
    const row = await waiter.written;
    return { id, status: row?.status ?? statusOf(reply.action) };
  }

  /** Whether this replica waits on `id`. */
  holds(id: string): boolean {
    return this.waiting.has(id);
  }

  /** The replica stops: every wait ends with cancel (the runs and turns are stopping too). */
  beforeApplicationShutdown(): void {
    for (const w of this.waiting.values())
      w.finish({ reply: { action: 'cancel' }, by: 'platform', reason: 'the executor replica shut down' });
  }
}
