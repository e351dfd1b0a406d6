import { createParser } from 'eventsource-parser';
import { ChatEvent, isTerminalChatEvent, type FlowSnapshot } from '@switchyard/contracts';
import { Routes } from '../api/routes';
import { ApiError, request } from '../api/client';
import { parseJson } from '../live/run-stream';

export type TurnStreamState = 'open' | 'reconnecting' | 'closed';

/** Waits before the n-th reconnect in a row: the first at once (a dropped connection), then slower. */
const RETRY_MS = [0, 500, 1_000, 2_000, 5_000];

export interface FollowTurn {
  readonly sessionId: string;
  /** A message to send: the turn is started by POSTing it. Absent: follow the turn in progress. */
  readonly content?: string;
  /** The flow builder's canvas, sent with the message: the turn gets the flow assistant's tools. */
  readonly flow?: FlowSnapshot;
  /** The newest event the page holds: nothing at or below it is delivered again. */
  readonly afterSeq: number;
  readonly onEvent: (e: ChatEvent) => void;
  readonly onState?: (state: TurnStreamState) => void;
  readonly signal: AbortSignal;
}

/**
 * Sends a message (or joins the turn in progress) and delivers the turn's events until one ends it.
 * EventSource cannot POST, so the body of a `fetch` is read and parsed as SSE. When the connection
 * drops before the turn ends, the stream is resumed with `GET …/stream` after the newest sequence
 * seen: each event arrives once, in order. Resolves when the turn ended (or the session's stream
 * closed with nothing left to say); rejects with the server's refusal (409 while a turn runs,
 * `model_not_configured`, …) or an AbortError.
 */
export async function followTurn(opts: FollowTurn): Promise<void> {
  let last = opts.afterSeq;
  let ended = false;
  let failures = 0;
  const deliver = (e: ChatEvent) => {
    if (e.seq <= last) return;
    last = e.seq;
    if (isTerminalChatEvent(e)) ended = true;
    opts.onEvent(e);
  };

  // A refusal of the message itself is the caller's to show: no retry.
  let res: Response | undefined =
    opts.content === undefined
      ? undefined
      : await request(Routes.chatMessage, {
          params: { id: opts.sessionId },
          body: { content: opts.content, ...(opts.flow ? { flow: opts.flow } : {}) },
          headers: { accept: 'text/event-stream' },
          signal: opts.signal,
        });

  for (;;) {
    if (!res) {
      try {
        res = await request(Routes.chatStream, {
          params: { id: opts.sessionId },
          query: { lastEventId: last },
          headers: { accept: 'text/event-stream', 'last-event-id': String(last) },
          signal: opts.signal,
        });
      } catch (err) {
        // Gone, refused or signed out: nothing to resume. Unreachable or failing: try again.
        if (!(err instanceof ApiError) || (err.status > 0 && err.status < 500)) throw err;
        opts.onState?.('reconnecting');
        await pause(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)] ?? 0, opts.signal);
        continue;
      }
    }
    opts.onState?.('open');
    const before = last;
    const clean = await readEvents(res, deliver, () => ended, opts.signal);
    res = undefined;
    if (opts.signal.aborted) throw abortError();
    if (ended) break;
    // The server ended the stream with nothing new: as far as it knows, the turn is over (it ended
    // between the page's detail and this stream). A broken connection is resumed.
    if (clean && last === before) break;
    if (last > before) failures = 0;
    opts.onState?.('reconnecting');
    await pause(RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)] ?? 0, opts.signal);
  }
  opts.onState?.('closed');
}

/**
 * Reads one response body as SSE frames until it ends or a frame ends the turn. True when it ended
 * so, false when the connection broke; an abort rejects.
 */
async function readEvents(
  res: Response,
  deliver: (e: ChatEvent) => void,
  finished: () => boolean,
  signal: AbortSignal,
): Promise<boolean> {
  const parser = createParser({
    onEvent(msg) {
      const parsed = ChatEvent.safeParse(parseJson(msg.data));
      if (parsed.success) deliver(parsed.data);
    },
  });
  const body = res.body;
  if (!body) return true;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const stop = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
      if (finished()) {
        // The server closes after the turn's last frame; the page need not wait for it.
        stop();
        return true;
      }
    }
    parser.feed(decoder.decode());
    return true;
  } catch {
    if (signal.aborted) throw abortError();
    return false;
  } finally {
    signal.removeEventListener('abort', stop);
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError());
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function abortError(): Error {
  const err = new Error('aborted');
  err.name = 'AbortError';
  return err;
}
