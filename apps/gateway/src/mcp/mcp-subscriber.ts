import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Redis } from '@switchyard/server-queue';
import type { Logger } from '@switchyard/server-observability';
import { LOGGER, REDIS } from '@switchyard/server-runtime';

/** Where Redis sends the invalidations of the keys a tracking connection has read (RESP2 redirect). */
export const INVALIDATE_CHANNEL = '__redis__:invalidate';

interface Channel {
  readonly listeners: Set<Listener>;
  readonly ready: Promise<void>;
}

interface Listener {
  readonly message: (payload: string) => void;
  /** The connection was lost: messages may have been missed, the listener is dropped. */
  readonly lost: () => void;
}

/**
 * The gateway's one Redis subscriber connection for MCP: the live messages of the session streams a
 * client resumed on this replica (one channel per stream, shared by its listeners), and the
 * invalidations of the session keys this replica caches (Redis client-side caching, redirect mode).
 *
 * When the connection drops, messages published meanwhile are lost: every listener is told (a
 * resumed stream then ends, and its client resumes again with its Last-Event-ID) and every
 * invalidation listener flushes. Nothing is resubscribed by ioredis: after a reconnect the
 * connection first learns its new client id (which tracking connections redirect to), then
 * subscribes again.
 */
@Injectable()
export class McpSubscriber implements OnModuleInit, OnModuleDestroy {
  private conn: Redis | undefined;
  /** This connection's CLIENT ID while it is subscribed to invalidations, else undefined. */
  private id: number | undefined;
  private generation = 0;
  private waiters: Array<{ resolve: () => void; reject: (err: Error) => void }> = [];
  private readonly channels = new Map<string, Channel>();
  private readonly invalidationListeners = new Set<(keys: string[] | null) => void>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const conn = this.redis.duplicate({
      connectionName: 'switchyard-gateway-mcp-subscriber',
      // Commands wait for nothing here: every one is sent once the connection is set up, and one in
      // flight when it drops fails (it is not re-sent before CLIENT ID on the new connection).
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    this.conn = conn;
    conn.on('ready', () => void this.setUp(conn));
    conn.on('close', () => this.lose());
    conn.on('error', () => undefined); // reconnects; readiness shows Redis's state
    conn.on('messageBuffer', (channel: Buffer, message: Buffer | Buffer[] | null) =>
      this.deliver(channel.toString(), message),
    );
    conn
      .connect()
      .catch((err: Error) => this.logger.warn({ err: err.message }, 'MCP subscriber not connected yet'));
  }

  onModuleDestroy(): void {
    this.conn?.disconnect();
    this.lose();
    const waiting = this.waiters;
    this.waiters = [];
    waiting.forEach((w) => w.reject(new Error('the gateway is shutting down')));
  }

  /** The client id tracking connections redirect their invalidations to, while subscribed. */
  get trackingId(): number | undefined {
    return this.id;
  }

  /** Calls `listener` with the keys invalidated (null: all of them) until the returned function is called. */
  onInvalidate(listener: (keys: string[] | null) => void): () => void {
    this.invalidationListeners.add(listener);
    return () => this.invalidationListeners.delete(listener);
  }

  /**
   * Calls `message` with each payload published on `channel` from now on; resolves once Redis has
   * the subscription, so nothing published after that is missed (until `lost` is called).
   */
  async subscribe(
    channel: string,
    message: (payload: string) => void,
    lost: () => void,
  ): Promise<() => void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      const created: Channel = {
        listeners: new Set(),
        ready: this.whenReady().then(async () => {
          await this.conn?.subscribe(channel);
          if (this.channels.get(channel) === created) return;
          // The connection was lost while subscribing: its listeners were told already.
          if (!this.channels.has(channel)) this.conn?.unsubscribe(channel).catch(() => undefined);
          throw new Error('the MCP subscriber connection was lost');
        }),
      };
      created.ready.catch(() => {
        if (this.channels.get(channel) === created) this.channels.delete(channel);
      });
      entry = created;
      this.channels.set(channel, entry);
    }
    const listener: Listener = { message, lost };
    const { listeners, ready } = entry;
    listeners.add(listener);
    try {
      await ready;
    } catch (err) {
      listeners.delete(listener);
      throw err;
    }
    return () => {
      listeners.delete(listener);
      if (!listeners.size && this.channels.get(channel)?.listeners === listeners) {
        this.channels.delete(channel);
        if (this.id !== undefined) this.conn?.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  private whenReady(): Promise<void> {
    if (this.id !== undefined) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private async setUp(conn: Redis): Promise<void> {
    const generation = ++this.generation;
    try {
      const id = Number(await conn.client('ID'));
      await conn.subscribe(INVALIDATE_CHANNEL);
      if (generation !== this.generation) return;
      this.id = id;
      const waiting = this.waiters;
      this.waiters = [];
      waiting.forEach((w) => w.resolve());
    } catch (err) {
      // The connection dropped meanwhile: the next 'ready' sets up again.
      this.logger.warn({ err: (err as Error).message }, 'MCP subscriber set-up failed');
    }
  }

  private lose(): void {
    this.generation++;
    this.id = undefined;
    const channels = [...this.channels.values()];
    this.channels.clear();
    for (const { listeners } of channels) for (const l of listeners) l.lost();
    this.invalidationListeners.forEach((l) => l(null));
  }

  private deliver(channel: string, message: Buffer | Buffer[] | null): void {
    if (channel === INVALIDATE_CHANNEL) {
      const keys = message === null ? null : (Array.isArray(message) ? message : [message]).map(String);
      this.invalidationListeners.forEach((l) => l(keys));
      return;
    }
    const entry = this.channels.get(channel);
    if (!entry || message === null || Array.isArray(message)) return;
    const payload = message.toString();
    for (const l of entry.listeners) l.message(payload);
  }
}
