import { useEffect, useRef, useState } from 'react';
import { isTerminalRunEvent, RUN_EVENT_TYPE_LIST, RunEvent } from '@switchyard/contracts';
import { tokenStore } from '../api/client';

export type StreamState = 'connecting' | 'open' | 'reconnecting' | 'closed';

const RETRY_MS = [500, 1_000, 2_000, 5_000];

/**
 * One run's SSE stream, resumable: it starts after `afterSeq` and, when the connection drops, comes
 * back with the last sequence it saw, so no frame is lost and none arrives twice (`onEvent` also
 * gets only frames newer than any before). One stream per tab: the page that shows a run owns it.
 *
 * The server ends the stream after the run's terminal event: the stream then stays `closed` instead
 * of reconnecting forever, until `opts.wake` changes (the page resumed the run).
 */
export function useRunStream(
  runId: string,
  afterSeq: number | undefined,
  onEvent: (e: RunEvent) => void,
  opts: {
    /** The run had already finished when the page drew it (its terminal event came with the detail). */
    readonly finished?: boolean;
    /** Changing it opens the stream again (after the page resumed the run). */
    readonly wake?: number;
  } = {},
): StreamState {
  const [state, setState] = useState<StreamState>('connecting');
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const finishedAtStart = useRef(opts.finished ?? false);
  finishedAtStart.current = opts.finished ?? false;
  const wake = opts.wake ?? 0;

  useEffect(() => {
    if (afterSeq === undefined) return undefined;
    let last = afterSeq;
    /** The newest frame applied ended the run: the server closes the stream after it. */
    let ended = finishedAtStart.current;
    let source: EventSource | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let stopped = false;

    const open = () => {
      const token = tokenStore.get() ?? '';
      const url = `/api/agent/stream?runId=${encodeURIComponent(runId)}&lastEventId=${last}&token=${encodeURIComponent(token)}`;
      const es = new EventSource(url);
      source = es;
      es.onopen = () => {
        failures = 0;
        setState('open');
      };
      es.onmessage = () => undefined; // every frame is named by its type
      const receive = (msg: Event) => {
        // A run's `error` event shares its name with EventSource's own error (no data): skip that.
        if (!(msg instanceof MessageEvent) || typeof msg.data !== 'string') return;
        const parsed = RunEvent.safeParse(parseJson(msg.data));
        if (!parsed.success || parsed.data.seq <= last) return;
        last = parsed.data.seq;
        ended = isTerminalRunEvent(parsed.data);
        handler.current(parsed.data);
      };
      for (const type of RUN_EVENT_TYPE_LIST) es.addEventListener(type, receive);
      es.onerror = () => {
        // The browser's own retry would resend Last-Event-ID too; ours also survives a refused
        // reconnect, and always resumes from what this page has applied.
        es.close();
        if (stopped) return;
        if (ended) {
          setState('closed');
          return;
        }
        setState('reconnecting');
        timer = setTimeout(open, RETRY_MS[Math.min(failures++, RETRY_MS.length - 1)]);
      };
    };
    open();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      source?.close();
      setState('closed');
    };
  }, [runId, afterSeq, wake]);

  return state;
}

/** A frame's data as JSON, or undefined when it is not JSON (then the frame is dropped). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
