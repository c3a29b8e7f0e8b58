/**
 * Waits until `check` returns a truthy value and returns it. A throw counts
 * as "not yet" (the apiserver or a watch may lag); the last error and the
 * optional `detail()` are part of the timeout message, so a failing test
 * says what it was waiting for and what it saw. The timeout is measured on
 * the monotonic clock: a wall-clock step (NTP, a paused VM) does not end a
 * wait early.
 */
export async function eventually<T>(
  what: string,
  check: () =>
    | T
    | undefined
    | null
    | false
    | Promise<T | undefined | null | false>,
  options: {
    timeoutMs?: number;
    intervalMs?: number;
    detail?: () => string;
  } = {},
): Promise<T> {
  const { timeoutMs = 30_000, intervalMs = 100, detail } = options;
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const parts = [`timed out after ${timeoutMs} ms waiting for ${what}`];
      if (lastError) parts.push(`last error: ${(lastError as Error).message}`);
      if (detail) parts.push(detail());
      throw new Error(parts.join('\n'));
    }
    await new Promise(resolve => setTimeout(resolve, intervalMs));
  }
}
