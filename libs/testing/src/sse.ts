import {
  describeIssues,
  RunEvent,
  toFieldIssues,
  type RunEventOf,
  type RunEventType,
} from '@switchyard/contracts';

export interface SseFrame<E extends RunEvent = RunEvent> {
  /** performance.now() when the frame arrived (before it is checked). */
  receivedAt: number;
  id: number;
  event: E['type'];
  /** The frame's data, parsed against the run event catalog. */
  data: E;
}

export interface SseStream {
  readonly res: Response;
  /** Every frame so far, each checked against the catalog (a frame that does not fit fails the stream). */
  readonly frames: SseFrame[];
  readonly comments: string[];
  /** The server ended the stream. */
  ended(): boolean;
  close(): void;
  /** Settles when the stream ends or is closed; rejects if a frame did not fit the catalog. */
  readonly reading: Promise<void>;
  /** Resolves with the first frame of `type` (already received or to come), or rejects after `timeoutMs`. */
  next<T extends RunEventType>(type: T, timeoutMs?: number, after?: number): Promise<SseFrame<RunEventOf<T>>>;
  /** The frames of `type` so far, in order. */
  all<T extends RunEventType>(type: T): Array<SseFrame<RunEventOf<T>>>;
}

function isOf<T extends RunEventType>(type: T) {
  return (f: SseFrame): f is SseFrame<RunEventOf<T>> => f.data.type === type;
}

/**
 * A minimal SSE client over fetch: frames as they arrive, and whether the server ended the stream.
 * Every frame must be a run event of the catalog with matching `id` and `event` lines: one that is
 * not makes `next` and `reading` reject, so every test that streams a run checks the whole stream.
 */
/** One SSE frame as sent: the block of lines, its fields, and the comment lines in it. */
export interface SseBlock {
  readonly block: string;
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: string | undefined;
  readonly comments: readonly string[];
}

/** The frames of an SSE response body as they arrive (blocks end at a blank line). */
export async function* sseBlocks(body: ReadableStream<Uint8Array>): AsyncGenerator<SseBlock> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, i);
      buffer = buffer.slice(i + 2);
      let id: string | undefined;
      let event: string | undefined;
      let data: string | undefined;
      const comments: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data = line.slice(6);
      }
      yield { block, id, event, data, comments };
    }
  }
}

export interface OpenStreamOptions {
  /**
   * Parse every frame against the run event catalog (the default). A benchmark turns it off: its
   * client then costs what a plain EventSource client does (a JSON.parse per frame, and the id and
   * event lines checked against the data), not a test's full check of every frame.
   */
  readonly checked?: boolean;
}

export async function openStream(
  url: string,
  headers: Record<string, string> = {},
  opts: OpenStreamOptions = {},
): Promise<SseStream> {
  const checked = opts.checked ?? true;
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const listeners = new Set<() => void>();
  let ended = false;
  let invalid: Error | undefined;
  const check = (
    block: string,
    id: string | undefined,
    event: string | undefined,
    data: string | undefined,
  ) => {
    let json: unknown;
    try {
      json = data === undefined ? undefined : JSON.parse(data);
    } catch {
      throw new Error(`an SSE frame's data is not JSON: ${block}`);
    }
    const parsed = checked ? RunEvent.safeParse(json) : { success: true as const, data: json as RunEvent };
    if (!parsed.success)
      throw new Error(
        `an SSE frame does not fit the run event catalog (${describeIssues(toFieldIssues(parsed.error))}): ${block.slice(0, 2_000)}`,
      );
    if (event !== parsed.data?.type || Number(id) !== parsed.data.seq)
      throw new Error(`an SSE frame's id/event lines disagree with its data: ${block.slice(0, 2_000)}`);
    return parsed.data;
  };
  const reading = (async () => {
    if (!res.body) return;
    try {
      for await (const { block, id, event, data, comments: said } of sseBlocks(res.body)) {
        const receivedAt = performance.now();
        comments.push(...said);
        if (event === undefined) continue;
        let parsed: RunEvent;
        try {
          parsed = check(block, id, event, data);
        } catch (err) {
          invalid = err instanceof Error ? err : new Error(String(err));
          controller.abort();
          throw invalid;
        }
        frames.push({ receivedAt, id: parsed.seq, event: parsed.type, data: parsed });
        listeners.forEach((l) => l());
      }
      ended = true;
    } catch {
      if (invalid) throw invalid;
      // closed by the caller, or the connection dropped: ended() stays false
    } finally {
      listeners.forEach((l) => l());
    }
  })();
  reading.catch(() => undefined); // reported through `next` and to whoever awaits `reading`
  const next = <T extends RunEventType>(type: T, timeoutMs = 60_000, after = 0) =>
    new Promise<SseFrame<RunEventOf<T>>>((resolve, reject) => {
      const check = () => {
        const found = frames.filter(isOf(type)).find((f) => f.id > after);
        if (invalid) {
          done();
          reject(invalid);
        } else if (found) {
          done();
          resolve(found);
        } else if (ended) {
          done();
          reject(new Error(`the stream ended without ${type}; got ${frames.map((f) => f.event).join(', ')}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`no ${type} within ${timeoutMs} ms; got ${frames.map((f) => f.event).join(', ')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return {
    res,
    frames,
    comments,
    ended: () => ended,
    close: () => controller.abort(),
    reading,
    next,
    all: (type) => frames.filter(isOf(type)),
  };
}

/** Event types whose payload names a step. */
export type StepEventType = Extract<RunEvent, { data: { stepId: string } }>['type'];

/** The frames of `type` about one step, in order. */
export function stepFrames<T extends StepEventType>(
  frames: readonly SseFrame[],
  type: T,
  stepId: string,
): Array<SseFrame<RunEventOf<T>>> {
  return frames.filter((f) => 'stepId' in f.data.data && f.data.data.stepId === stepId).filter(isOf(type));
}
