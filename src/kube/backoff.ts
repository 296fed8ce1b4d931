/**
 * The one backoff of relabel's Kubernetes clients: exponential from a base,
 * doubling each attempt, capped, optionally with full jitter. Two policies
 * use it: a write refused as stale, before the node is read again
 * ({@link CONFLICT_BACKOFF}), and the node informer's LIST and watch after an
 * error, before it lists again ({@link RELIST_BACKOFF}).
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** How long to wait between attempts. */
export interface BackoffPolicy {
  /** The wait after the first failed attempt, in milliseconds. */
  baseMs: number;
  /** The longest wait, in milliseconds. */
  maxMs: number;
  /**
   * A uniform draw below the wait instead of the wait itself, so clients
   * that met each other (writers on one node) do not meet again in step.
   */
  jitter: boolean;
}

/** A write refused as stale: from 100 ms, capped at 2 s, with full jitter. */
export const CONFLICT_BACKOFF: BackoffPolicy = { baseMs: 100, maxMs: 2_000, jitter: true };

/** A LIST or watch of Nodes that failed: from 500 ms, capped at 30 s (one client per worker: nothing to spread). */
export const RELIST_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 30_000, jitter: false };

/** Milliseconds to wait after failed attempt `attempt` (1-based) under `policy`; `random` in [0, 1). */
export function backoffMs(attempt: number, policy: BackoffPolicy, random: number = Math.random()): number {
  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return policy.jitter ? Math.floor(random * cap) : cap;
}

/** Waits {@link backoffMs}; resolves early, without throwing, when `signal` aborts. */
export async function backoff(attempt: number, policy: BackoffPolicy, signal?: AbortSignal): Promise<void> {
  await sleep(backoffMs(attempt, policy), undefined, signal ? { signal } : {}).catch(() => undefined);
}

/** Waits {@link CONFLICT_BACKOFF} for `attempt`: the node steps' and the Promenade route's wait after a stale write. */
export function conflictBackoff(attempt: number): Promise<void> {
  return backoff(attempt, CONFLICT_BACKOFF);
}
