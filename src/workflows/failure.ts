/**
 * How workflow code reads a failure: the one place that looks under
 * Temporal's `ActivityFailure` and `ChildWorkflowFailure` wrappers (as the
 * SDK's `rootCause` does for a message) for the ApplicationFailure a call
 * ended with, so its type, message and details are kept on every path.
 * Pure and deterministic: it reads error objects and issues no command.
 */
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure } from '@temporalio/workflow';
import { FailureType } from '../core/plan/failure-types.ts';

/** A failure as relabel records it: its type, message and (when it has any) details. */
export interface FailureInfo {
  type: string;
  message: string;
  details?: unknown[];
}

/**
 * The failure under every `ActivityFailure` and `ChildWorkflowFailure`
 * wrapping `err` (`err` itself when it is not wrapped). Stops at the first
 * other failure, so a child's own ApplicationFailure is found, not the
 * activity failure it was made from.
 */
export function innermostFailure(err: unknown): unknown {
  let cause = err;
  while ((cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) && cause.cause) cause = cause.cause;
  return cause;
}

/** The ApplicationFailure under the wrappers of `err`; undefined when the innermost failure is another kind (timeout, cancellation, a plain Error). */
export function applicationCause(err: unknown): ApplicationFailure | undefined {
  const cause = innermostFailure(err);
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/**
 * `err` as {@link FailureInfo}: an ApplicationFailure's type (`Error`
 * without one), message and details; another Error's name and message; any
 * other value as `Error` and its text. `details` is left out when empty.
 */
export function failureInfo(err: unknown): FailureInfo {
  const cause = innermostFailure(err);
  if (cause instanceof ApplicationFailure) {
    const details = Array.isArray(cause.details) && cause.details.length > 0 ? { details: cause.details } : {};
    return { type: cause.type ?? 'Error', message: cause.message, ...details };
  }
  if (cause instanceof Error) return { type: cause.name, message: cause.message };
  return { type: 'Error', message: String(cause) };
}

/**
 * `err` as the workflow's own non-retryable ApplicationFailure: the
 * innermost ApplicationFailure's type, message and details on top (not
 * buried under an ActivityFailure); any other failure as InternalError
 * naming it. Never returns a retryable failure, so the run ends.
 */
export function ensureRelabelFailure(err: unknown): ApplicationFailure {
  const cause = applicationCause(err);
  const info = failureInfo(err);
  return ApplicationFailure.create({
    type: cause ? (cause.type ?? undefined) : FailureType.InternalError,
    message: cause ? info.message : `${info.type}: ${info.message}`,
    nonRetryable: true,
    ...(info.details ? { details: info.details } : {}),
  });
}

/**
 * A rejection of the call behind `err`: when its innermost failure is a
 * non-retryable ApplicationFailure (or any ApplicationFailure, with
 * `anyApplicationFailure`), that failure as the workflow's own
 * ({@link ensureRelabelFailure}); otherwise undefined and the caller
 * rethrows `err` as it is (cancellation stays cancellation).
 */
export function rejectionOf(err: unknown, options: { anyApplicationFailure?: boolean } = {}): ApplicationFailure | undefined {
  const cause = applicationCause(err);
  if (!cause || (!cause.nonRetryable && !options.anyApplicationFailure)) return undefined;
  return ensureRelabelFailure(cause);
}
