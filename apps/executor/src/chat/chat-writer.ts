import {
  AppError,
  ChatEventBody,
  chatEventsSubject,
  describeIssues,
  toFieldIssues,
  type ChatEvent,
  type ChatEventData,
  type ChatEventType,
} from '@switchyard/contracts';
import type { BusPort } from '@switchyard/server-bus';
import { type ChatRepository, type ChatRowChanges, type ChatSessionUpdate } from '@switchyard/server-db-runs';

/** What the writer needs of the chat log: the repository, or an in-memory log in unit tests. */
export type ChatLog = Pick<ChatRepository, 'append'>;

interface Pending {
  readonly event: ChatEventBody;
  readonly update: ChatSessionUpdate | undefined;
  readonly rows: ChatRowChanges | undefined;
  readonly settled: { resolve: (e: ChatEvent) => void; reject: (err: unknown) => void };
}

/**
 * The one writer of a session's events on the replica driving its turn: each event is parsed against
 * the catalog, stored (with the session row's change, and the tool calls' rows and tool messages that go
 * with it) and then published, in order. What is emitted
 * while a write is in flight goes into the next write, and consecutive tokens merge into one event:
 * the first token of an answer leaves at once, the rest in as few rows as the database's pace allows.
 * A failed write stops the writer (everything after it is refused).
 */
export class ChatWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private failure: unknown;
  private readonly subject: string;

  constructor(
    private readonly log: ChatLog,
    private readonly bus: BusPort,
    private readonly ownerId: string,
    readonly sessionId: string,
    private readonly replica: string,
  ) {
    this.subject = chatEventsSubject(sessionId);
  }

  /** Resolves with the stored event once it is stored (with `rows`, in the same statement) and published. */
  emit<T extends ChatEventType>(
    type: T,
    data: ChatEventData<T>,
    update?: ChatSessionUpdate,
    rows?: ChatRowChanges,
  ): Promise<ChatEvent> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    const parsed = ChatEventBody.safeParse({ type, data });
    if (!parsed.success) {
      const err = new AppError(
        'internal',
        `a ${type} event does not fit the chat event catalog: ${describeIssues(toFieldIssues(parsed.error))}`,
      );
      return Promise.reject(err);
    }
    return new Promise<ChatEvent>((resolve, reject) => {
      this.queue.push({ event: parsed.data, update, rows, settled: { resolve, reject } });
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  /** A streamed piece of the answer: merged into a token event not yet being written, if there is one. */
  token(text: string): void {
    if (!text || this.failure !== undefined) return;
    const last = this.queue[this.queue.length - 1];
    if (last?.event.type === 'token' && !last.update && !last.rows) {
      last.event.data.text += text;
      return;
    }
    this.emit('token', { text }).catch(() => undefined);
  }

  /** Resolves once everything emitted so far is written (or the writer stopped). */
  async drained(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.queue.length && this.failure === undefined) {
      const batch = this.queue.splice(0);
      const update = batch.reduce<ChatSessionUpdate | undefined>(
        (acc, p) => (p.update ? { ...acc, ...p.update } : acc),
        undefined,
      );
      try {
        const stored: ChatEvent[] = await this.log.append(
          this.ownerId,
          this.sessionId,
          batch.map((p) => p.event),
          this.replica,
          update,
          batch.map((p) => p.rows),
        );
        for (const e of stored) this.bus.publish(this.subject, e);
        batch.forEach((p, i) => p.settled.resolve(stored[i] as ChatEvent));
      } catch (err) {
        this.failure = err;
        for (const p of [...batch, ...this.queue.splice(0)]) p.settled.reject(err);
      }
    }
    this.flushing = undefined;
  }
}
