/**
 * A token bucket for requests to the Kubernetes API, as client-go's
 * client-side limiter: `qps` tokens a second on average, at most `burst` at
 * once. @kubernetes/client-node has none of its own.
 */

/** Takes one token before each request. */
export interface RateLimiter {
  /** Resolves when a token is available (callers are served first come, first served). */
  acquire(): Promise<void>;
}

/** A limiter that never waits: what {@link tokenBucket} returns for `qps` ≤ 0 (or not finite). */
export const UNLIMITED: RateLimiter = { acquire: () => Promise.resolve() };

/**
 * A token bucket of `burst` tokens, full at the start, refilled at `qps` a
 * second. `qps` ≤ 0, NaN or Infinity means no limit ({@link UNLIMITED}).
 * `burst` is rounded down and at least 1 (NaN: 1). Waiters are served in
 * FIFO order: a caller never overtakes one already waiting, even when a
 * token has just come back. One timer at a time, and only while someone
 * waits (no busy loop, nothing pending when idle). `now` (ms) and `sleep`
 * are injectable for tests.
 */
export function tokenBucket(
  qps: number,
  burst: number,
  clock: { now(): number; sleep(ms: number): Promise<void> } = { now: () => performance.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
): RateLimiter {
  // Infinity would make the refill NaN (0 ms × Infinity) and stall every caller.
  if (!(qps > 0 && Number.isFinite(qps))) return UNLIMITED;
  const capacity = Math.max(1, Math.floor(burst)) || 1;
  let tokens = capacity;
  let last = clock.now();
  const waiting: (() => void)[] = [];
  let timer = false;

  const refill = () => {
    const now = clock.now();
    tokens = Math.min(capacity, tokens + ((now - last) * qps) / 1000);
    last = now;
  };
  const serve = async () => {
    timer = true;
    while (waiting.length > 0) {
      refill();
      while (tokens >= 1 && waiting.length > 0) {
        tokens -= 1;
        waiting.shift()?.();
      }
      if (waiting.length > 0) await clock.sleep(((1 - tokens) * 1000) / qps);
    }
    timer = false;
  };
  return {
    acquire() {
      refill();
      if (waiting.length === 0 && tokens >= 1) {
        tokens -= 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        waiting.push(resolve);
        if (!timer) void serve();
      });
    },
  };
}
