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

/** A limiter that never waits (`qps` ≤ 0 means no limit). */
export const UNLIMITED: RateLimiter = { acquire: () => Promise.resolve() };

/**
 * A token bucket of `burst` tokens refilled at `qps` a second. `now` and
 * `sleep` are injectable for tests. Waiters are served in FIFO order, with
 * one timer at a time (no busy loop).
 */
export function tokenBucket(
  qps: number,
  burst: number,
  clock: { now(): number; sleep(ms: number): Promise<void> } = { now: () => performance.now(), sleep: (ms) => new Promise((r) => setTimeout(r, ms)) },
): RateLimiter {
  if (!(qps > 0)) return UNLIMITED;
  const capacity = Math.max(1, Math.floor(burst));
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
