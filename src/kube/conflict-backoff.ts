/**
 * The wait before a node is read again after a write refused as stale:
 * exponential from 100 ms, capped at 2 s, with full jitter, so writers that
 * met each other on one node do not meet again in step.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Longest wait between two attempts on one node, in milliseconds. */
export const MAX_CONFLICT_BACKOFF_MS = 2000;

/** Milliseconds to wait after attempt `attempt` (1-based) met a stale write; `random` in [0, 1). */
export function conflictBackoffMs(attempt: number, random: number = Math.random()): number {
  const cap = Math.min(MAX_CONFLICT_BACKOFF_MS, 100 * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random * cap);
}

/** Waits {@link conflictBackoffMs} for `attempt`. */
export async function conflictBackoff(attempt: number): Promise<void> {
  await sleep(conflictBackoffMs(attempt));
}
