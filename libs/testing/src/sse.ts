import { request as httpRequest } from 'node:http';
import {
  describeIssues,
  RunEvent,
  toFieldIssues,
  type RunEventOf,
  type RunEventType,
} from '@switchyard/contracts';
import { headersOf } from './http';

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
 * A minimal SSE client (over fetch, or node:http for a benchmark): frames as they arrive, and
 * whether the server ended the stream.
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

/**
 * The frames of an SSE response body as they arrive (blocks end at a blank line): a fetch body, or a
 * node:http response (its chunks bytes, or text once it has an encoding).
 */
export async function* sseBlocks(
  body: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array | string>,
): AsyncGenerator<SseBlock> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
    buffer += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
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
  /**
   * How the stream is read: `fetch` (the default, as a browser's code would), or `http` (node:http,
   * a fraction of fetch's CPU per frame): a benchmark's client shares the cores with what it measures.
   */
  readonly transport?: 'fetch' | 'http';
  /** POST this JSON text (a route that starts something and streams it), instead of a GET. */
  readonly post?: string;
}

/** A response being read, whichever way it came: its status and headers, its body, and how to stop it. */
interface Opened {
  readonly res: Response;
  readonly body: AsyncIterable<Uint8Array | string> | null;
  readonly abort: () => void;
}

async function openByFetch(url: string, headers: Record<string, string>, post?: string): Promise<Opened> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers,
    signal: controller.signal,
    ...(post === undefined ? {} : { method: 'POST', body: post }),
  });
  return {
    res,
    body: res.body as unknown as AsyncIterable<Uint8Array> | null,
    abort: () => controller.abort(),
  };
}

function openByHttp(url: string, headers: Record<string, string>, post?: string): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      post === undefined
        ? { headers }
        : {
            method: 'POST',
            headers: { 'content-length': String(Buffer.byteLength(post)), ...headers },
          },
      (res) => {
        res.setEncoding('utf8');
        resolve({
          res: new Response(null, { status: res.statusCode ?? 0, headers: headersOf(res.headers) }),
          body: res,
          abort: () => req.destroy(),
        });
      },
    );
    req.on('error', reject);
    req.end(post);
  });
}

export async function openStream(
  url: string,
  headers: Record<string, string> = {},
  opts: OpenStreamOptions = {},
): Promise<SseStream> {
  const checked = opts.checked ?? true;
  const open = opts.transport === 'http' ? openByHttp : openByFetch;
  const sent = {
    accept: 'text/event-stream',
    ...(opts.post === undefined ? {} : { 'content-type': 'application/json' }),
    ...headers,
  };
  const { res, body, abort } = await open(url, sent, opts.post);
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
    if (!body) return;
    try {
      for await (const { block, id, event, data, comments: said } of sseBlocks(body)) {
        const receivedAt = performance.now();
        comments.push(...said);
        if (event === undefined) continue;
        let parsed: RunEvent;
        try {
          parsed = check(block, id, event, data);
        } catch (err) {
          invalid = err instanceof Error ? err : new Error(String(err));
          abort();
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
      let seen = 0;
      const check = () => {
        // Only the frames that came since the last look (a stream of many frames is read once).
        let found: SseFrame<RunEventOf<T>> | undefined;
        for (; seen < frames.length && !found; seen++) {
          const f = frames[seen] as SseFrame;
          if (f.id > after && isOf(type)(f)) found = f;
        }
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
    close: abort,
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
