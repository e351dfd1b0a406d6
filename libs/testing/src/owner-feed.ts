import { describeIssues, OwnerFeedEvent, OwnerFeedResync, toFieldIssues } from '@switchyard/contracts';
import { sseBlocks } from './sse';

export type OwnerFeedFrameOf =
  | { readonly event: OwnerFeedEvent['kind']; readonly id: string; readonly data: OwnerFeedEvent }
  | { readonly event: 'resync'; readonly id: string | undefined; readonly data: Record<string, never> };

export interface OwnerFeedStream {
  readonly res: Response;
  /** Every frame with an event so far, each checked against the contracts. */
  readonly frames: OwnerFeedFrameOf[];
  readonly comments: string[];
  /** The last `id:` the server sent (what an EventSource would send back as Last-Event-ID). */
  lastId(): string | undefined;
  /** The feed events so far (run and task frames). */
  events(): OwnerFeedEvent[];
  close(): void;
  /** Settles when the stream ends or is closed; rejects if a frame did not fit the contracts. */
  readonly reading: Promise<void>;
  /** Resolves once `ok(frames)` holds, or rejects after `timeoutMs` (or on a bad frame). */
  until(ok: (frames: readonly OwnerFeedFrameOf[]) => boolean, timeoutMs?: number): Promise<void>;
}

/**
 * A minimal client of `GET /api/events` over fetch. Every frame must fit the contracts: `run` and
 * `task` frames carry an OwnerFeedEvent of that kind under an `<epoch>-<n>` id, `resync` carries
 * `{}`; one that does not makes `reading` and `until` reject. An id-only frame (no event) moves
 * `lastId` as it moves an EventSource's.
 */
export async function openOwnerFeed(
  url: string,
  headers: Record<string, string> = {},
): Promise<OwnerFeedStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: OwnerFeedFrameOf[] = [];
  const comments: string[] = [];
  const listeners = new Set<() => void>();
  let lastId: string | undefined;
  let invalid: Error | undefined;
  let ended = false;

  const check = (
    block: string,
    id: string | undefined,
    event: string,
    data: string | undefined,
  ): OwnerFeedFrameOf => {
    let json: unknown;
    try {
      json = data === undefined ? undefined : JSON.parse(data);
    } catch {
      throw new Error(`an owner feed frame's data is not JSON: ${block}`);
    }
    if (event === 'resync') {
      const parsed = OwnerFeedResync.safeParse(json);
      if (!parsed.success) throw new Error(`a resync frame's data is not {}: ${block}`);
      return { event, id, data: parsed.data };
    }
    const parsed = OwnerFeedEvent.safeParse(json);
    if (!parsed.success)
      throw new Error(
        `an owner feed frame does not fit OwnerFeedEvent (${describeIssues(toFieldIssues(parsed.error))}): ${block}`,
      );
    if (event !== parsed.data.kind)
      throw new Error(`an owner feed frame's event line disagrees with its data: ${block}`);
    if (!id || !/^[0-9a-f]{16}-\d+$/.test(id))
      throw new Error(`an owner feed frame has no <epoch>-<n> id: ${block}`);
    return { event: parsed.data.kind, id, data: parsed.data };
  };

  const reading = (async () => {
    if (!res.body) return;
    try {
      for await (const { block, id, event, data, comments: said } of sseBlocks(res.body)) {
        comments.push(...said);
        if (id !== undefined) lastId = id;
        if (event === undefined) {
          if (data !== undefined) throw (invalid = new Error(`an owner feed frame without event: ${block}`));
          continue;
        }
        try {
          frames.push(check(block, id, event, data));
        } catch (err) {
          invalid = err instanceof Error ? err : new Error(String(err));
          controller.abort();
          throw invalid;
        }
        listeners.forEach((l) => l());
      }
      ended = true;
    } catch {
      if (invalid) throw invalid;
    } finally {
      listeners.forEach((l) => l());
    }
  })();
  reading.catch(() => undefined);

  const until = (ok: (f: readonly OwnerFeedFrameOf[]) => boolean, timeoutMs = 60_000) =>
    new Promise<void>((resolve, reject) => {
      const look = () => {
        if (invalid) {
          done();
          reject(invalid);
        } else if (ok(frames)) {
          done();
          resolve();
        } else if (ended) {
          done();
          reject(new Error(`the feed ended; got ${JSON.stringify(frames.map((f) => f.data))}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`not within ${timeoutMs} ms; got ${JSON.stringify(frames.map((f) => f.data))}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(look);
      };
      listeners.add(look);
      look();
    });

  return {
    res,
    frames,
    comments,
    lastId: () => lastId,
    events: () => frames.flatMap((f) => (f.event === 'resync' ? [] : [f.data])),
    close: () => controller.abort(),
    reading,
    until,
  };
}
