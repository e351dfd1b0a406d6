/**
 * A deadline that stops counting while something it should not charge for is going on (a tool call
 * waiting for a person's answer to its server's input request). `pause()` may nest; the clock runs
 * again once every pause is resumed. `onExpire` is called at most once.
 */
export class PausableDeadline {
  private timer: NodeJS.Timeout | undefined;
  private left: number;
  private since = 0;
  private pauses = 0;
  private done = false;

  constructor(
    ms: number,
    private readonly onExpire: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.left = ms;
    this.arm();
  }

  /** Stops the clock until the returned function is called (once; later calls do nothing). */
  pause(): () => void {
    if (this.done) return () => undefined;
    if (this.pauses++ === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.left -= this.now() - this.since;
    }
    let resumed = false;
    return () => {
      if (resumed) return;
      resumed = true;
      if (--this.pauses === 0 && !this.done) this.arm();
    };
  }

  /** The deadline no longer matters (the work ended). */
  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    this.since = this.now();
    // A guard, not work: the work it bounds keeps the process alive (a step's call abandoned with its
    // run by a replica that stops must not hold the process for the rest of the tool's timeout).
    this.timer = setTimeout(
      () => {
        if (this.done || this.pauses) return;
        this.done = true;
        this.onExpire();
      },
      Math.max(0, this.left),
    ).unref();
  }
}

/**
 * A deadline, and a promise to race the work against that rejects with `reason()` when the deadline
 * expires (after `onExpire`, which may stop the work). The promise never rejects unhandled.
 */
export function expiringDeadline(
  ms: number,
  reason: () => Error,
  onExpire?: () => void,
): { deadline: PausableDeadline; expired: Promise<never> } {
  let reject: (err: Error) => void = () => undefined;
  const expired = new Promise<never>((_, r) => (reject = r));
  expired.catch(() => undefined);
  const deadline = new PausableDeadline(ms, () => {
    onExpire?.();
    reject(reason());
  });
  return { deadline, expired };
}
