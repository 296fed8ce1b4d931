/**
 * How a client of Temporal (facade, CLI, API, an activity awaiting a run)
 * reads a failure: the one place that looks under `WorkflowFailedError`,
 * `WorkflowUpdateFailedError` and Temporal's activity and child wrappers
 * for the ApplicationFailure a workflow ended with, and turns it (or an
 * unreachable server) into relabel's `{type, message, details}`.
 */
import { isGrpcServiceError, WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ActivityFailure, ApplicationFailure, ChildWorkflowFailure, rootCause } from '@temporalio/common';
import { FailureType, isFailureType } from '../core/plan/failure-types.ts';

/** A failure in relabel's vocabulary, as the facade raises it. */
export interface ClientFailure {
  type: FailureType;
  message: string;
  /** The failure's details: for DocumentValidationFailed, the document errors themselves. */
  details?: unknown;
  /** How many problems there were in all, when `details` lists only some. */
  problemCount?: number;
}

/** gRPC's UNAVAILABLE status code. */
const GRPC_UNAVAILABLE = 14;

/** The failure under the client's error and every activity or child wrapper (`err` itself when unwrapped). */
export function innermostFailure(err: unknown): unknown {
  let cause = err instanceof WorkflowFailedError || err instanceof WorkflowUpdateFailedError ? (err.cause ?? err) : err;
  while ((cause instanceof ChildWorkflowFailure || cause instanceof ActivityFailure) && cause.cause) cause = cause.cause;
  return cause;
}

/** The ApplicationFailure a workflow (or Update) ended with, under its wrappers; undefined for any other failure. */
export function applicationFailureOf(err: unknown): ApplicationFailure | undefined {
  const cause = innermostFailure(err);
  return cause instanceof ApplicationFailure ? cause : undefined;
}

/**
 * Type and message of any failure, for reports that show a type outside
 * relabel's vocabulary as it is: the ApplicationFailure's (`Error` without
 * a type), else `Error` and the innermost message (the SDK's `rootCause`).
 */
export function failureSummary(err: unknown): { type: string; message: string } {
  const app = applicationFailureOf(err);
  if (app) return { type: app.type ?? 'Error', message: app.message };
  const cause = innermostFailure(err);
  return { type: 'Error', message: rootCause(cause) ?? String(cause) };
}

/** Whether `err` (or the error it wraps) is gRPC UNAVAILABLE: the Temporal server cannot be reached. */
export function isUnreachable(err: unknown): boolean {
  const unavailable = (e: unknown) => isGrpcServiceError(e) && Number(e.code) === GRPC_UNAVAILABLE;
  return unavailable(err) || unavailable((err as { cause?: unknown } | null)?.cause);
}

/** DocumentValidationFailed's one detail, `{revision, errorCount, errors}`, as the activities raise it. */
function documentErrors(details: unknown): { errorCount: number; errors: unknown[] } | undefined {
  const d = Array.isArray(details) && details.length === 1 ? (details[0] as { errorCount?: unknown; errors?: unknown } | null) : undefined;
  return d && typeof d.errorCount === 'number' && Array.isArray(d.errors) ? { errorCount: d.errorCount, errors: d.errors } : undefined;
}

/**
 * `err` in relabel's vocabulary, or undefined when it is not a relabel
 * failure: a workflow's (or Update's) ApplicationFailure of a known type,
 * with its details (DocumentValidationFailed's: the document errors and
 * their full count), or Unavailable for an unreachable Temporal server.
 */
export function clientFailure(err: unknown): ClientFailure | undefined {
  const app = applicationFailureOf(err);
  if (app && isFailureType(app.type)) {
    const docs = app.type === FailureType.DocumentValidationFailed ? documentErrors(app.details) : undefined;
    if (docs) return { type: app.type, message: app.message, details: docs.errors, problemCount: docs.errorCount };
    const details = Array.isArray(app.details) && app.details.length > 0 ? { details: app.details } : {};
    return { type: app.type, message: app.message, ...details };
  }
  if (isUnreachable(err)) return { type: FailureType.Unavailable, message: `Temporal is unreachable: ${(err as Error).message}` };
  return undefined;
}
