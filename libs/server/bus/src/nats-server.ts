import { ServerNats } from '@nestjs/microservices';
import { JSONCodec, type MsgHdrs, type NatsConnection, type Subscription } from 'nats';
import { Headers, type ErrorCode, type Role } from '@switchyard/contracts';
import { correlationIdFrom, type CallContext, type ContextStore } from '@switchyard/server-observability';

const codec = JSONCodec<unknown>();

/** The caller's context from NATS headers (set by Bus.request): identity never comes from a body. */
export function callContextFromHeaders(h: MsgHdrs | undefined): CallContext {
  const header = h?.get(Headers.role);
  const role: Role | undefined = header === 'admin' || header === 'user' ? header : undefined;
  const ownerId = h?.get(Headers.ownerId) || undefined;
  return {
    correlationId: correlationIdFrom(h?.get(Headers.correlationId) || undefined),
    ...(ownerId ? { ownerId } : {}),
    ...(role ? { role } : {}),
  };
}

export interface SwitchyardNatsServerOptions {
  readonly servers: string[];
  /** Queue group: replicas of one service share the load of each subject. */
  readonly queue: string;
  readonly name: string;
  readonly subjectPrefix: string;
  /** How long shutdown waits for in-flight handlers before closing anyway. */
  readonly graceMs: number;
  readonly onShutdownTimeout?: (inFlight: number) => void;
  /** Handlers run inside the caller's context (correlation id in logs and onward calls). */
  readonly context?: ContextStore;
  /** Called once per request when its reply is sent: subject without prefix, `ok` or error code. */
  readonly onRequestDone?: (subject: string, outcome: 'ok' | ErrorCode, seconds: number) => void;
}

/**
 * Nest's NATS transport with what production needs on top:
 * - every subject gets the deployment's prefix, every subscription the service's queue group;
 * - handlers in flight are counted, and `close()` stops taking work (unsubscribe), waits for them to
 *   finish and flush their replies, then drains the connection. Nest's own close() drops in-flight
 *   replies unless a fixed grace period is configured;
 * - the caller's context and the request metrics are handled here, once per message, rather than in
 *   a Nest interceptor: Nest binds an AsyncResource per interceptor call, which halved throughput
 *   in the rpc benchmark.
 */
export class SwitchyardNatsServer extends ServerNats {
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly subs: Subscription[] = [];

  constructor(private readonly sy: SwitchyardNatsServerOptions) {
    super({
      servers: sy.servers,
      queue: sy.queue,
      name: sy.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      // Nest's defaults wrap every packet in a NatsRecord and re-spread it; ours is plain JSON both ways.
      serializer: { serialize: (packet: unknown) => ({ data: codec.encode(packet), headers: undefined }) },
      deserializer: {
        deserialize: (value: Uint8Array, options?: { channel?: string }) => {
          const decoded = codec.decode(value);
          // A message from a non-Nest publisher is an event on its channel, as Nest would read it.
          return decoded !== null && typeof decoded === 'object' && 'pattern' in decoded
            ? decoded
            : { pattern: options?.channel, data: decoded };
        },
      },
    });
  }

  get inFlightCount(): number {
    return this.inFlight;
  }

  /** The underlying connection (for readiness checks). */
  connection(): NatsConnection | null {
    return (this as unknown as { natsClient: NatsConnection | null }).natsClient ?? null;
  }

  override bindEvents(client: NatsConnection): void {
    for (const channel of this.messageHandlers.keys()) {
      const handlerRef = this.messageHandlers.get(channel);
      const queue = (handlerRef?.extras?.['queue'] as string | undefined) ?? this.sy.queue;
      const sub = client.subscribe(this.sy.subjectPrefix + channel, {
        queue,
        callback: this.getMessageHandler(channel).bind(this),
      });
      this.subs.push(sub);
    }
  }

  /**
   * A request is in flight from its arrival until its last reply packet is published. (Nest's
   * handleMessage resolves as soon as the handler's observable exists, long before the reply.)
   */
  override async handleMessage(
    channel: string,
    natsMsg: Parameters<ServerNats['handleMessage']>[1],
  ): Promise<unknown> {
    if (natsMsg.reply) this.inFlight++;
    const context = this.sy.context;
    if (!context) return super.handleMessage(channel, natsMsg);
    return context.run(callContextFromHeaders(natsMsg.headers), () => super.handleMessage(channel, natsMsg));
  }

  /** Our patterns are plain strings: skip Nest's per-message JSON normalisation of the pattern. */
  override getHandlerByPattern(pattern: string): ReturnType<ServerNats['getHandlerByPattern']> {
    return this.messageHandlers.get(pattern) ?? super.getHandlerByPattern(pattern);
  }

  /**
   * A request is in flight from its arrival until its last reply packet is published. (Nest's
   * handleMessage resolves as soon as the handler's observable exists, long before the reply.)
   */
  override getPublisher(
    ...args: Parameters<ServerNats['getPublisher']>
  ): ReturnType<ServerNats['getPublisher']> {
    const publish = super.getPublisher(...args);
    const natsMsg = args[0];
    if (!natsMsg.reply) return publish;
    const started = process.hrtime.bigint();
    let done = false;
    return (packet: { err?: unknown; isDisposed?: boolean }) => {
      const result = publish(packet);
      if (!done && (packet.isDisposed || packet.err !== undefined)) {
        done = true;
        this.inFlight--;
        if (this.sy.onRequestDone) {
          const err = packet.err as { code?: ErrorCode } | undefined;
          const outcome = err === undefined || err === null ? 'ok' : (err.code ?? 'internal');
          const seconds = Number(process.hrtime.bigint() - started) / 1e9;
          this.sy.onRequestDone(natsMsg.subject.slice(this.sy.subjectPrefix.length), outcome, seconds);
        }
        if (this.inFlight === 0) this.idleWaiters.splice(0).forEach((w) => w());
      }
      return result;
    };
  }

  override async close(): Promise<void> {
    const nc = this.connection();
    if (!nc) return;
    for (const sub of this.subs.splice(0)) sub.unsubscribe();
    if (this.inFlight > 0) {
      const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), this.sy.graceMs);
      });
      const outcome = await Promise.race([idle, timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout') this.sy.onShutdownTimeout?.(this.inFlight);
    }
    if (!nc.isClosed()) await nc.drain().catch(() => nc.close());
    (this as unknown as { natsClient: NatsConnection | null }).natsClient = null;
  }
}
