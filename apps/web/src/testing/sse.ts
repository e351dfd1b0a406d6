import type { ChatEvent, ChatEventBody } from '@switchyard/contracts';

/** For component tests that stub `fetch`: a chat turn's SSE body, fed frame by frame by the test. */

/** A response body the test writes to: SSE text, then an end or a broken connection. */
export class FakeStream {
  private readonly chunks: Array<{ text: string } | 'end' | 'fail'> = [];
  private wake: (() => void) | undefined;
  cancelled = false;

  push(...events: ChatEvent[]): void {
    this.chunks.push(
      ...events.map((e) => ({ text: `event: ${e.type}\nid: ${e.seq}\ndata: ${JSON.stringify(e)}\n\n` })),
    );
    this.wake?.();
  }
  /** Pushes raw text (a frame split across two network packets, a heartbeat comment). */
  raw(text: string): void {
    this.chunks.push({ text });
    this.wake?.();
  }
  end(): void {
    this.chunks.push('end');
    this.wake?.();
  }
  fail(): void {
    this.chunks.push('fail');
    this.wake?.();
  }

  response() {
    const encoder = new TextEncoder();
    const read = async (): Promise<{ done: boolean; value?: Uint8Array }> => {
      while (!this.chunks.length && !this.cancelled) await new Promise<void>((r) => (this.wake = r));
      const next = this.chunks.shift();
      if (this.cancelled || next === 'end' || next === undefined) return { done: true };
      if (next === 'fail') throw new TypeError('network error');
      return { done: false, value: encoder.encode(next.text) };
    };
    return {
      ok: true,
      status: 200,
      statusText: 'OK',
      headers: { get: (h: string) => (h.toLowerCase() === 'content-type' ? 'text/event-stream' : null) },
      body: {
        getReader: () => ({
          read,
          cancel: () => {
            this.cancelled = true;
            this.wake?.();
            return Promise.resolve();
          },
        }),
      },
    };
  }
}

/** A stored chat event of session `id`. */
export function ev(id: string, seq: number, body: ChatEventBody): ChatEvent {
  return { ...body, sessionId: id, seq, at: new Date().toISOString() } as ChatEvent;
}
