export interface SseFrame {
  /** performance.now() when the frame was parsed. */
  receivedAt: number;
  id?: number;
  event?: string;
  data?: { runId: string; seq: number; type: string; data: Record<string, unknown>; at: string };
}

export interface SseStream {
  readonly res: Response;
  readonly frames: SseFrame[];
  readonly comments: string[];
  /** The server ended the stream. */
  ended(): boolean;
  close(): void;
  /** Settles when the stream ends or is closed. */
  readonly reading: Promise<void>;
  /** Resolves with the first frame of `type` (already received or to come), or rejects after `timeoutMs`. */
  next(type: string, timeoutMs?: number, after?: number): Promise<SseFrame>;
}

/** A minimal SSE client over fetch: frames as they arrive, and whether the server ended the stream. */
export async function openStream(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  const controller = new AbortController();
  const res = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const listeners = new Set<() => void>();
  let ended = false;
  const reading = (async () => {
    if (!res.body) return;
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let i;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const frame: SseFrame = { receivedAt: performance.now() };
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) frame.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) frame.event = line.slice(7);
            else if (line.startsWith('data: ')) frame.data = JSON.parse(line.slice(6)) as SseFrame['data'];
          }
          if (frame.event) {
            frames.push(frame);
            listeners.forEach((l) => l());
          }
        }
      }
      ended = true;
    } catch {
      // aborted by the caller
    } finally {
      listeners.forEach((l) => l());
    }
  })();
  const next = (type: string, timeoutMs = 15_000, after = 0) =>
    new Promise<SseFrame>((resolve, reject) => {
      const check = () => {
        const found = frames.find((f) => f.event === type && (f.id ?? 0) > after);
        if (found) {
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
  };
}
