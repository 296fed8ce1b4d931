/**
 * The one non-retryable failure an activity raises for a revision whose
 * documents are invalid, so every workflow that meets one (update run,
 * drift detection, plugin poll) carries the same details to the client.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { documentErrorsMessage, MAX_LISTED_ERRORS, type SiteError } from '../core/plan/site-error.ts';

/** What a DocumentValidationFailed failure carries as its one detail: every error up to {@link MAX_LISTED_ERRORS}, and the count of all. */
export interface DocumentErrorsDetail {
  revision: number;
  errorCount: number;
  errors: SiteError[];
}

/**
 * DocumentValidationFailed for `revision`, non-retryable: the message counts
 * every error and lists the first ones (`note`, when given, says what is
 * held back); the one detail ({@link DocumentErrorsDetail}) keeps at most
 * {@link MAX_LISTED_ERRORS} of them, so the failure stays bounded.
 */
export function documentValidationFailure(revision: number, errors: readonly SiteError[], note?: string): ApplicationFailure {
  const detail: DocumentErrorsDetail = { revision, errorCount: errors.length, errors: errors.slice(0, MAX_LISTED_ERRORS) };
  return ApplicationFailure.create({
    type: FailureType.DocumentValidationFailed,
    message: documentErrorsMessage(note ? `revision ${revision} (${note})` : `revision ${revision}`, errors),
    nonRetryable: true,
    details: [detail],
  });
}
