/**
 * The store's errors: one class carrying a `code` from the failure
 * vocabulary, so callers (activities, CLI, API) map failures by code, never
 * by message.
 */
import { FailureType } from '../core/plan/failure-types.ts';

/** The failure types a {@link StoreError} can carry. */
export const StoreErrorCode = {
  /** A revision or run (or a bucket asked to be committed) does not exist. */
  NotFound: FailureType.NotFound,
  /** `commit` was called with nothing staged (or nothing staged for the named buckets). */
  EmptyBuffer: FailureType.EmptyBuffer,
  /** A bucket, source or tag name breaks the naming rules. */
  InvalidName: FailureType.InvalidName,
  /** Any other bad argument: a revision id, tag data, file text, a store URL. */
  InvalidArgument: FailureType.InvalidArgument,
  /** The buffer changed since the caller read it (a conditional stage). */
  Conflict: FailureType.Conflict,
  /** The store was used after `close()`. */
  Closed: FailureType.Closed,
  /** The database was written by a newer relabel with a schema this one does not know. */
  SchemaVersion: FailureType.SchemaVersion,
} as const;

/** One of the {@link StoreErrorCode} strings. */
export type StoreErrorCode = (typeof StoreErrorCode)[keyof typeof StoreErrorCode];

/**
 * A failure the store reports deliberately. The message names what and where
 * (bucket, source, revision id); `code` is the stable contract. Errors from the
 * database driver itself (connection lost, disk full) are not wrapped: they are
 * transient from the caller's point of view and propagate unchanged.
 */
export class StoreError extends Error {
  /** Stable machine-readable reason. */
  readonly code: StoreErrorCode;

  /**
   * @param code - stable reason, from {@link StoreErrorCode}
   * @param message - human-readable message naming the offending input
   */
  constructor(code: StoreErrorCode, message: string) {
    super(message);
    this.name = 'StoreError';
    this.code = code;
  }
}

/** True when `error` is a {@link StoreError}, optionally with the given code. */
export function isStoreError(error: unknown, code?: StoreErrorCode): error is StoreError {
  return error instanceof StoreError && (code === undefined || error.code === code);
}
