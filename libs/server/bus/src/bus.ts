import {
  connect,
  ErrorCode as NatsErrorCode,
  Events as NatsEvents,
  headers as natsHeaders,
  type NatsConnection,
  NatsError,
} from 'nats';
import type { z } from 'zod';
import {
  AppError,
  Headers,
  isErrorBody,
  type EventContract,
  type RpcContract,
  type RpcRequest,
  type RpcResponse,
} from '@switchyard/contracts';
import type { BusPort, RequestOptions } from './port';
import { checkedReply, eventPayload, heardPayload } from './contract-checks';
import { decodeJson, encodeJson, errorBodyOf, refusedMessage } from './wire';
import {
  coalesceWrites,
  confirmSent,
  natsConnectFailure,
  natsConnectionOptions,
  natsErrorsWithoutStacks,
  type NatsConnectionSettings,
} from './connection';

export interface BusOptions extends NatsConnectionSettings {
  /** Connection name shown by the NATS server (`nats server report connections`). */
  readonly name: string;
  readonly subjectPrefix: string;
  readonly defaultTimeoutMs: number;
  /**
   * Check every RPC reply against its contract's response schema; a reply that does not fit is a bug
   * of the answering service, thrown as `internal`. On in tests (NODE_ENV=test): it costs a parse per call.
   */
  readonly validateReplies?: boolean;
  /**
   * Parse every event's payload against its contract before sending it (`emit`); one that does not
   * fit is a bug of the sender, thrown as `internal`. On unless turned off: production turns it off
   * (a parse per event, most of them built from typed values; receivers parse what they hear anyway).
   */
  readonly validateEvents?: boolean;
}

const textEncoder = new TextEncoder();

/** Nest's NATS reply packet. */
interface ReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/**
 * The one wrapper over the NATS client for service RPC. Speaks Nest's NATS wire format
 * (`{pattern,data,id}` → `{id,response|err}`) so handlers are ordinary `@MessagePattern`s, and turns
 * every transport failure into an AppError: no responders or no answer in time → `unavailable`.
 */
export class Bus implements BusPort {
  private seq = 0;
  private readonly reconnectListeners = new Set<() => void>();
  private watchingStatus = false;
  private nextReconnect: Promise<void> | undefined;

  private constructor(
    readonly connection: NatsConnection,
    private readonly opts: BusOptions,
  ) {}

  static async connect(opts: BusOptions): Promise<Bus> {
    natsErrorsWithoutStacks();
    try {
      const nc = await connect({
        ...natsConnectionOptions(opts),
        name: opts.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        timeout: 5_000,
        // nats.js otherwise builds an Error (stack capture) per request for async traces: a fifth
        // of the client's CPU in the rpc benchmark. Our errors carry subject and service instead.
        noAsyncTraces: true,
      });
      coalesceWrites(nc);
      return new Bus(nc, opts);
    } catch (err) {
      throw new AppError(
        'unavailable',
        `cannot connect to NATS at ${opts.servers.join(',')}: ${natsConnectFailure(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  subject(subject: string): string {
    return this.opts.subjectPrefix + subject;
  }

  async call<C extends RpcContract>(
    contract: C,
    payload: RpcRequest<C>,
    opts: RequestOptions = {},
  ): Promise<RpcResponse<C>> {
    const reply = await this.request(contract.subject, payload, opts);
    if (this.opts.validateReplies) checkedReply(contract, reply);
    return reply as RpcResponse<C>;
  }

  async request(subject: string, payload: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const timeout = opts.timeoutMs ?? this.opts.defaultTimeoutMs;
    const id = String(++this.seq);
    const h = natsHeaders();
    const ctx = opts.ctx;
    if (ctx) {
      h.set(Headers.correlationId, ctx.correlationId);
      if (ctx.ownerId) h.set(Headers.ownerId, ctx.ownerId);
      if (ctx.role) h.set(Headers.role, ctx.role);
    }
    const wireSubject = this.opts.subjectPrefix + subject;
    // Encoded before the try: a payload that cannot be encoded is not a transport failure.
    const data = encodeJson({ pattern: subject, data: payload, id }, `the ${subject} request`);
    let reply;
    try {
      reply = await this.connection.request(wireSubject, data, { timeout, headers: h });
    } catch (err) {
      throw this.transportError(err, subject, timeout);
    }
    const packet = decodeJson(reply.data, `the reply to ${subject}`, 'internal') as ReplyPacket;
    if (packet.err !== undefined && packet.err !== null) {
      if (isErrorBody(packet.err)) throw AppError.fromBody(packet.err);
      const message = typeof packet.err === 'string' ? packet.err : JSON.stringify(packet.err);
      throw new AppError('internal', `${subject} failed: ${message}`);
    }
    return packet.response;
  }

  /**
   * Fire-and-forget event to every subscriber (no queue group): cache invalidation and the like.
   * At most once, like all plain NATS: receivers must also recover from a missed event.
   */
  publish(subject: string, payload: unknown): void {
    this.connection.publish(this.opts.subjectPrefix + subject, encodeJson(payload, `the ${subject} event`));
  }

  publishJson(subject: string, json: string): void {
    this.connection.publish(this.opts.subjectPrefix + subject, textEncoder.encode(json));
  }

  /** Every replica receives every message (no queue group). Returns the unsubscribe function. */
  subscribe(subject: string, handler: (payload: unknown) => void): () => void {
    const sub = this.connection.subscribe(this.opts.subjectPrefix + subject, {
      callback: (err, msg) => {
        if (err) return;
        try {
          handler(decodeJson(msg.data, 'an event'));
        } catch {
          // a malformed event must not take the subscription down
        }
      },
    });
    return () => sub.unsubscribe();
  }

  /**
   * Sends an event of the catalog (`Events`), its payload parsed against the contract first (unless
   * `validateEvents` is off): one that does not fit is a bug here, thrown as `internal`, never sent.
   */
  emit<S extends z.ZodType>(contract: EventContract<S>, payload: z.input<S>): void {
    this.publish(
      contract.subject,
      this.opts.validateEvents === false ? payload : eventPayload(contract, payload),
    );
  }

  /** Hears an event of the catalog, typed; a message that does not fit the contract is dropped. */
  on<S extends z.ZodType>(contract: EventContract<S>, handler: (payload: z.output<S>) => void): () => void {
    return this.subscribe(contract.subject, (payload) => {
      const heard = heardPayload(contract, payload);
      if (heard !== undefined) handler(heard);
    });
  }

  /**
   * Answers requests on one subject from this process only (no queue group), in the same wire format
   * as the Nest handlers, so `request` works against it: per-entity subjects such as a run's control
   * subject. Resolves once the NATS server knows the subscription. Returns the unsubscribe function.
   */
  async respond(subject: string, handler: (payload: unknown) => Promise<unknown>): Promise<() => void> {
    const sub = this.connection.subscribe(this.opts.subjectPrefix + subject, {
      callback: (err, msg) => {
        if (err || !msg.reply) return;
        const reply = (packet: { id?: string; response?: unknown; err?: unknown }): void => {
          let data: Uint8Array;
          try {
            data = encodeJson({ ...packet, isDisposed: true }, `the reply on ${subject}`);
          } catch (e) {
            data = encodeJson({ id: packet.id, err: errorBodyOf(e), isDisposed: true }, 'an error');
          }
          msg.respond(data);
        };
        let packet: { id?: string; data?: unknown };
        try {
          packet = decodeJson(msg.data, 'the request') as { id?: string; data?: unknown };
        } catch (e) {
          reply({ err: errorBodyOf(e) });
          return;
        }
        const { id, data } = packet;
        const refused = refusedMessage(data);
        if (refused) {
          reply({ id, err: refused.toBody() });
          return;
        }
        void handler(data).then(
          (response) => reply({ id, response }),
          (e: unknown) => reply({ id, err: errorBodyOf(e) }),
        );
      },
    });
    await confirmSent(this.connection);
    return () => sub.unsubscribe();
  }

  /** Resolves once the NATS server has processed everything sent so far (subscriptions included). */
  async flush(): Promise<void> {
    await confirmSent(this.connection);
  }

  /** Round trip to the NATS server, in milliseconds. */
  async ping(): Promise<number> {
    return this.connection.rtt();
  }

  /**
   * Calls `listener` each time the connection comes back after a drop, once the NATS server has
   * every subscription again (nats.js sends them on reconnecting; a flush confirms it). What was
   * published while it was away is lost to them (plain NATS is at-most-once): a listener reads what
   * it keeps elsewhere. A drop during that flush is followed by another reconnect. Returns the
   * unsubscribe.
   */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener);
    if (!this.watchingStatus) {
      this.watchingStatus = true;
      void this.watchStatus();
    }
    return () => this.reconnectListeners.delete(listener);
  }

  /**
   * Resolves once the NATS server has every subscription made so far. A flush lost with the
   * connection is tried again once it is back (nats.js sends the subscriptions again on
   * reconnecting); rejects only when the connection is closed for good.
   */
  async subscribed(): Promise<void> {
    for (;;) {
      try {
        return await confirmSent(this.connection);
      } catch (err) {
        if (this.connection.isClosed()) throw err;
        await this.reconnected();
      }
    }
  }

  /** Resolves at the next reconnect (one promise for every waiter); rejects if the connection closes first. */
  private reconnected(): Promise<void> {
    this.nextReconnect ??= new Promise<void>((resolve, reject) => {
      const off = this.onReconnect(() => {
        off();
        this.nextReconnect = undefined;
        resolve();
      });
      void this.connection.closed().then(() => {
        off();
        reject(new AppError('unavailable', 'the NATS connection is closed'));
      });
    });
    return this.nextReconnect;
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.connection.status()) {
      if (s.type !== NatsEvents.Reconnect) continue;
      void this.connection.flush().then(
        () => [...this.reconnectListeners].forEach((listener) => listener()),
        () => undefined, // dropped again: the next reconnect tells them
      );
    }
  }

  isConnected(): boolean {
    return !this.connection.isClosed() && !this.connection.isDraining();
  }

  /** Flushes what is pending and closes. */
  async close(): Promise<void> {
    if (this.connection.isClosed()) return;
    await this.connection.drain().catch(() => this.connection.close());
  }

  private transportError(err: unknown, subject: string, timeout: number): AppError {
    const service = subject.split('.')[0];
    if (err instanceof NatsError) {
      if (err.code === NatsErrorCode.NoResponders) {
        return new AppError('unavailable', `service ${service} is unavailable: nobody answers ${subject}`, {
          details: { service, subject, reason: 'no_responders' },
        });
      }
      if (err.code === NatsErrorCode.Timeout) {
        return new AppError(
          'unavailable',
          `service ${service} did not answer ${subject} within ${timeout} ms`,
          {
            details: { service, subject, reason: 'timeout', timeoutMs: timeout },
          },
        );
      }
    }
    return new AppError('unavailable', `request to ${subject} failed: ${(err as Error).message}`, {
      details: { service, subject, reason: 'transport' },
      cause: err,
    });
  }
}
