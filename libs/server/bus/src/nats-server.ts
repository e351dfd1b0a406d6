import { ServerNats } from '@nestjs/microservices';
import type { NatsConnection, Subscription } from 'nats';

export interface SwitchyardNatsServerOptions {
  readonly servers: string[];
  /** Queue group: replicas of one service share the load of each subject. */
  readonly queue: string;
  readonly name: string;
  readonly subjectPrefix: string;
  /** How long shutdown waits for in-flight handlers before closing anyway. */
  readonly graceMs: number;
  readonly onShutdownTimeout?: (inFlight: number) => void;
}

/**
 * Nest's NATS transport with what production needs on top:
 * - every subject gets the deployment's prefix, every subscription the service's queue group;
 * - handlers in flight are counted, and `close()` stops taking work (unsubscribe), waits for them to
 *   finish and flush their replies, then drains the connection. Nest's own close() drops in-flight
 *   replies unless a fixed grace period is configured.
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
  override async handleMessage(channel: string, natsMsg: Parameters<ServerNats['handleMessage']>[1]): Promise<unknown> {
    if (natsMsg.reply) this.inFlight++;
    return super.handleMessage(channel, natsMsg);
  }

  override getPublisher(...args: Parameters<ServerNats['getPublisher']>): ReturnType<ServerNats['getPublisher']> {
    const publish = super.getPublisher(...args);
    if (!args[0].reply) return publish;
    let done = false;
    return (packet: { err?: unknown; isDisposed?: boolean }) => {
      const result = publish(packet);
      if (!done && (packet.isDisposed || packet.err !== undefined)) {
        done = true;
        this.inFlight--;
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
