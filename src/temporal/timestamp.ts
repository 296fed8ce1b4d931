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

/**
 * Epoch milliseconds `ms` as a protobuf timestamp, for a request. The seconds
 * go as a number: protobufjs writes an int64 given as one (exact below 2^53),
 * though the generated type names only Long.
 */
export function msTimestamp(ms: number): Timestamp {
  const seconds = Math.floor(ms / 1000);
  return { seconds: seconds as unknown as Timestamp['seconds'], nanos: (ms - seconds * 1000) * 1_000_000 };
}
