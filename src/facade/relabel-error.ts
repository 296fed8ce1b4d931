/**
 * The error the facade (and so the CLI and the HTTP API) raises: a public
 * failure type, a message naming what and where, and optional details.
 */
import { FailureType } from '../core/failure-types.ts';
import { documentErrorsMessage, type SiteError } from '../core/site-error.ts';

/** An error with a public {@link FailureType}; each edge maps the type once. */
export class RelabelError extends Error {
  override name = 'RelabelError';
  readonly type: FailureType;
  readonly details: unknown;

  constructor(type: FailureType, message: string, details?: unknown) {
    super(message);
    this.type = type;
    this.details = details;
  }
}

/** DocumentValidationFailed for `what` (a revision, a staged bucket), every error listed and kept as details. */
export function documentValidationError(what: string, errors: SiteError[]): RelabelError {
  return new RelabelError(FailureType.DocumentValidationFailed, documentErrorsMessage(what, errors), errors);
}
