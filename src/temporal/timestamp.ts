/**
 * Protobuf timestamps of the Temporal API (history events, pollers) as
 * epoch milliseconds, without reaching into the SDK's internal modules.
 */
import type { Timestamp } from '@temporalio/common';

/** `ts` as epoch milliseconds (sub-millisecond precision dropped); undefined when absent. */
export function timestampMs(ts: Timestamp | null | undefined): number | undefined {
  if (ts === null || ts === undefined) return undefined;
  const s = ts.seconds;
  const seconds = s === null || s === undefined ? 0 : typeof s === 'number' ? s : s.toNumber();
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1_000_000);
}
