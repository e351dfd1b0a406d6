import type { z } from 'zod';
import {
  AppError,
  describeIssues,
  toFieldIssues,
  type EventContract,
  type RpcContract,
  type RpcRequest,
  type RpcResponse,
} from '@switchyard/contracts';
import {
  checkedReply,
  decodeJson,
  encodeJson,
  eventPayload,
  heardPayload,
  errorBodyOf,
  refusedMessage,
  type BusPort,
  type RequestOptions,
} from '@switchyard/server-bus';
import type { CallContext } from '@switchyard/server-observability';

/** Answers one RPC contract in a test: typed request in, typed reply out (or an AppError thrown). */
export type RpcAnswer<C extends RpcContract> = (
  request: z.output<C['request']>,
  ctx: CallContext | undefined,
) => z.input<C['response']> | Promise<z.input<C['response']>>;

type Responder = (payload: unknown, ctx: CallContext | undefined) => Promise<unknown>;

/** What went over the bus, for assertions: requests by subject and events in order. */
export interface BusTraffic {
  readonly requests: Array<{ readonly subject: string; readonly payload: unknown }>;
  readonly events: Array<{ readonly subject: string; readonly payload: unknown }>;
}

/**
 * The bus in one process, for unit tests (like a queue's sync driver). It keeps what the wire does:
 * every payload crosses as JSON (encoded and decoded with the bus's own codec), nobody answering is
 * `unavailable` with reason `no_responders`, an error crosses as its body (an AppError keeps its
 * code, anything else becomes `internal`), and events arrive asynchronously. It is stricter than
 * the wire in one way: `answer` parses each request against the contract (→ `validation_failed`,
 * as the Nest pipe does) and each reply against the contract's response schema, so a fake that
 * drifts from the contract fails the test instead of passing it.
 */
export class InMemoryBus implements BusPort {
  private readonly responders = new Map<string, Responder>();
  private readonly listeners = new Map<string, Set<(payload: unknown) => void>>();
  readonly traffic: BusTraffic = { requests: [], events: [] };

  /** Answers `contract` with `answer` (one responder per subject, like a queue group). */
  answer<C extends RpcContract>(contract: C, answer: RpcAnswer<C>): () => void {
    return this.bind(contract.subject, async (payload, ctx) => {
      const request = contract.request.safeParse(payload);
      if (!request.success)
        throw new AppError(
          'validation_failed',
          `invalid ${contract.subject} request: ${describeIssues(toFieldIssues(request.error))}`,
          { issues: toFieldIssues(request.error) },
        );
      const reply = await answer(request.data as z.output<C['request']>, ctx);
      const checked = contract.response.safeParse(reply);
      if (!checked.success)
        throw new Error(
          `the test's reply to ${contract.subject} does not fit its contract: ${describeIssues(toFieldIssues(checked.error))}`,
        );
      return checked.data;
    });
  }

  async call<C extends RpcContract>(
    contract: C,
    payload: RpcRequest<C>,
    opts: RequestOptions = {},
  ): Promise<RpcResponse<C>> {
    const reply = await this.request(contract.subject, payload, opts);
    // Checked always here; the NATS bus checks replies only under NODE_ENV=test.
    return checkedReply(contract, reply);
  }

  async request(subject: string, payload: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const sent = decodeJson(encodeJson(payload, `the ${subject} request`), 'the request');
    this.traffic.requests.push({ subject, payload: sent });
    const responder = this.responders.get(subject);
    if (!responder) {
      const service = subject.split('.')[0];
      throw new AppError('unavailable', `service ${service} is unavailable: nobody answers ${subject}`, {
        details: { service, subject, reason: 'no_responders' },
      });
    }
    let reply: unknown;
    try {
      const refused = refusedMessage(sent);
      if (refused) throw refused;
      reply = await responder(sent, opts.ctx);
    } catch (err) {
      // Over the wire a bug answers a bare `internal`; a test wants to know which bug.
      if (err instanceof AppError) throw AppError.fromBody(errorBodyOf(err));
      throw new AppError(
        'internal',
        `${subject} failed: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
    return decodeJson(encodeJson(reply, `the reply on ${subject}`), `the reply to ${subject}`, 'internal');
  }

  async respond(subject: string, handler: (payload: unknown) => Promise<unknown>): Promise<() => void> {
    return this.bind(subject, (payload) => handler(payload));
  }

  emit<S extends z.ZodType>(contract: EventContract<S>, payload: z.input<S>): void {
    this.publish(contract.subject, eventPayload(contract, payload));
  }

  on<S extends z.ZodType>(contract: EventContract<S>, handler: (payload: z.output<S>) => void): () => void {
    return this.subscribe(contract.subject, (payload) => {
      const heard = heardPayload(contract, payload);
      if (heard !== undefined) handler(heard);
    });
  }

  publish(subject: string, payload: unknown): void {
    this.deliver(subject, decodeJson(encodeJson(payload, `the ${subject} event`), 'an event'));
  }

  publishJson(subject: string, json: string): void {
    this.deliver(subject, decodeJson(new TextEncoder().encode(json), 'an event'));
  }

  private deliver(subject: string, sent: unknown): void {
    this.traffic.events.push({ subject, payload: sent });
    const heard = [...(this.listeners.get(subject) ?? [])];
    // Delivered later, as over the wire: a sender never runs its receivers inside its own call.
    queueMicrotask(() => {
      for (const handler of heard) {
        try {
          handler(sent);
        } catch {
          // a receiver's failure must not take the others down
        }
      }
    });
  }

  subscribe(subject: string, handler: (payload: unknown) => void): () => void {
    let set = this.listeners.get(subject);
    if (!set) this.listeners.set(subject, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Resolves once every event sent so far has been delivered. */
  async flush(): Promise<void> {
    await new Promise<void>((resolve) => queueMicrotask(resolve));
  }

  /** The events sent on `contract`'s subject so far, as their receivers see them. */
  sent<S extends z.ZodType>(contract: EventContract<S>): Array<z.output<S>> {
    return this.traffic.events
      .filter((e) => e.subject === contract.subject)
      .map((e) => contract.schema.parse(e.payload) as z.output<S>);
  }

  private bind(subject: string, responder: Responder): () => void {
    if (this.responders.has(subject)) throw new Error(`${subject} already has a responder in this test`);
    this.responders.set(subject, responder);
    return () => this.responders.delete(subject);
  }
}
