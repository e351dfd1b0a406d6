/**
 * Polls `probe` until it returns a truthy value or `timeoutMs` passes (then throws with the last error).
 * The timeout only guards a hang: it is never how a test measures speed, so keep it generous (a busy
 * machine is many times slower than a quiet one).
 */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 60_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `condition not met within ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
