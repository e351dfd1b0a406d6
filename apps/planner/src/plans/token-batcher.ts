export interface TokenBatcherOptions {
  /** Send as soon as this many characters are waiting. */
  readonly maxChars: number;
  /** Send what is waiting at most this long after its first character arrived. */
  readonly maxDelayMs: number;
}

/**
 * Coalesces a model's tiny stream chunks (often a few characters each) into fewer messages without
 * holding text back for long. Everything pushed is sent exactly once, in order.
 */
export class TokenBatcher {
  private buffer = '';
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly send: (text: string) => void,
    private readonly opts: TokenBatcherOptions = { maxChars: 256, maxDelayMs: 30 },
  ) {}

  push(text: string): void {
    if (!text) return;
    this.buffer += text;
    if (this.buffer.length >= this.opts.maxChars) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.opts.maxDelayMs);
  }

  /** Sends what is left; call once the stream has ended (or failed). */
  end(): void {
    this.flush();
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.buffer) return;
    const text = this.buffer;
    this.buffer = '';
    this.send(text);
  }
}
