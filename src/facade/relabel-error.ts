/**
 * The error the facade (and so the CLI and the HTTP API) raises: a public
 * failure type, a message naming what and where, and optional details.
 */
import type { FailureType } from '../core/failure-types.ts';

/** An error with a public {@link FailureType}; each edge maps the type once. */
export class RelabelError extends Error {
  override name = 'RelabelError';
  readonly type: FailureType | string;
  readonly details: unknown;

  constructor(type: FailureType | string, message: string, details?: unknown) {
    super(message);
    this.type = type;
    this.details = details;
  }
}
