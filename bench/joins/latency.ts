/**
 * Latency figures of the join pass: percentiles of per-node milliseconds,
 * nearest rank, as the report's rows carry them.
 */

/** p50, p95, p99 and the largest of `ms` (whole milliseconds, nearest rank); nulls when `ms` is empty. */
export function percentiles(ms: readonly number[]): { p50Ms: number | null; p95Ms: number | null; p99Ms: number | null; maxMs: number | null } {
  const sorted = [...ms].sort((a, b) => a - b);
  const rank = (p: number) => (sorted.length === 0 ? null : Math.round(sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] as number));
  return { p50Ms: rank(0.5), p95Ms: rank(0.95), p99Ms: rank(0.99), maxMs: rank(1) };
}
