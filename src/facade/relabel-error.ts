/**
 * The error the facade (and so the CLI and the HTTP API) raises: a public
 * failure type, a message naming what and where, and optional details.
 */
import { FailureType } from '../core/plan/failure-types.ts';
import { clientFailure } from '../temporal/failure.ts';
import { documentErrorsMessage, MAX_LISTED_ERRORS, type SiteError } from '../core/plan/site-error.ts';

/** An error with a public {@link FailureType}; each edge maps the type once. */
export class RelabelError extends Error {
  override name = 'RelabelError';
  readonly type: FailureType;
  readonly details: unknown;
  /** How many problems there were in all, when `details` lists only some. */
  readonly problemCount: number | undefined;

  constructor(type: FailureType, message: string, details?: unknown, problemCount?: number) {
    super(message);
    this.type = type;
    this.details = details;
    this.problemCount = problemCount;
  }
}

/**
 * DocumentValidationFailed for `what` (a revision, a staged bucket): the
 * message counts every error and lists the first ones; the details keep
 * those listed ({@link MAX_LISTED_ERRORS}), so no answer grows with the input.
 */
export function documentValidationError(what: string, errors: SiteError[]): RelabelError {
  return new RelabelError(FailureType.DocumentValidationFailed, documentErrorsMessage(what, errors), errors.slice(0, MAX_LISTED_ERRORS), errors.length);
}

/**
 * A Temporal client error (a workflow's or Update's failure, an
 * unreachable server) as a {@link RelabelError} with its type, message and
 * details (see `clientFailure`), the message passed through `reword` when
 * given; undefined when `err` is not a relabel failure.
 */
export function relabelErrorOf(err: unknown, reword: (message: string) => string = (m) => m): RelabelError | undefined {
  const failure = clientFailure(err);
  return failure && new RelabelError(failure.type, reword(failure.message), failure.details, failure.problemCount);
}
