/**
 * Airship's `Status` body, the one shape every error (and the plain
 * successes) of the HTTP API take, and the one table mapping failure types
 * to HTTP statuses.
 */
import { FailureType, isFailureType } from '../../core/plan/failure-types.ts';
import { formatError, MAX_LISTED_ERRORS, unlistedLine, type SiteError } from '../../core/plan/site-error.ts';
import { RelabelError } from '../../facade/relabel-error.ts';
import { clientFailure } from '../../temporal/failure.ts';
import type { MessageLevel, StatusBody, StatusMessage } from './response-schemas.ts';

/** HTTP status of a failure type, and whether the same request may succeed later. */
export type HttpMapping = { code: number; retry: boolean };

const bad: HttpMapping = { code: 400, retry: false };
const notFound: HttpMapping = { code: 404, retry: false };
const conflict: HttpMapping = { code: 409, retry: true };

/**
 * THE table: failure type → HTTP status, one entry per type (the typecheck
 * refuses a missing one). Every error the API answers goes through it
 * (a string outside the vocabulary is 500). Preconditions on the site (no
 * committed revision, no site action, invalid documents) are 400, as
 * Shipyard answers them; a run in progress or a concurrent write is 409.
 */
export const HTTP_STATUS_OF_FAILURE = {
  // The request itself is wrong.
  [FailureType.Usage]: bad,
  [FailureType.InvalidRequest]: bad,
  [FailureType.InvalidJson]: bad,
  [FailureType.UnknownAction]: bad,
  [FailureType.InvalidDesignRef]: bad,
  [FailureType.NoNodesMatched]: bad,
  [FailureType.InvalidTargets]: bad,
  [FailureType.InvalidNodeFilter]: bad,
  [FailureType.Invalid]: bad,
  [FailureType.InvalidName]: bad,
  [FailureType.InvalidArgument]: bad,
  [FailureType.PayloadTooLarge]: { code: 413, retry: false },
  [FailureType.UnsupportedMediaType]: { code: 415, retry: false },
  [FailureType.HeaderTooLarge]: { code: 431, retry: false },
  [FailureType.MethodNotAllowed]: { code: 405, retry: false },
  // The site is not in a state that allows it.
  [FailureType.NoCommittedRevision]: bad,
  [FailureType.NoSiteActionRevision]: bad,
  [FailureType.DocumentValidationFailed]: bad,
  [FailureType.NodeNotInDesign]: bad,
  [FailureType.NodeInTwoSets]: bad,
  // Who is asking.
  [FailureType.Unauthorized]: { code: 401, retry: false },
  [FailureType.Forbidden]: { code: 403, retry: false },
  // What is asked for does not exist.
  [FailureType.NotFound]: notFound,
  [FailureType.ActionNotFound]: notFound,
  [FailureType.BucketNotFound]: notFound,
  [FailureType.TagNotFound]: notFound,
  [FailureType.RevisionNotFound]: notFound,
  [FailureType.NodeNotFound]: notFound,
  [FailureType.RunNotFound]: notFound,
  // State conflicts.
  [FailureType.RunInProgress]: conflict,
  [FailureType.Conflict]: conflict,
  [FailureType.TooManyConflicts]: conflict,
  [FailureType.NotRunning]: { code: 409, retry: false },
  [FailureType.MassRemovalRefused]: { code: 409, retry: false },
  [FailureType.NotStarted]: { code: 409, retry: false },
  [FailureType.NothingToRetry]: { code: 409, retry: false },
  [FailureType.NotRetryable]: { code: 409, retry: false },
  [FailureType.EmptyBuffer]: { code: 409, retry: false },
  // Ours or a dependency's fault.
  [FailureType.InternalError]: { code: 500, retry: false },
  [FailureType.VerificationFailed]: { code: 500, retry: false },
  [FailureType.SchemaVersion]: { code: 500, retry: false },
  [FailureType.Unavailable]: { code: 503, retry: true },
  [FailureType.Closed]: { code: 503, retry: true },
} as const satisfies Record<FailureType, HttpMapping>;

/** The HTTP mapping of a failure type; 500 for a type the table does not know. */
export function httpStatusOf(type: string): HttpMapping {
  return isFailureType(type) ? HTTP_STATUS_OF_FAILURE[type] : { code: 500, retry: false };
}

/** An error the API answers as a `Status` body: a failure type, a message and every problem. */
export class ApiError extends Error {
  override name = 'ApiError';
  readonly type: FailureType;
  readonly messages: string[];
  /** Extra response headers (`Allow`, `WWW-Authenticate`). */
  readonly headers: Readonly<Record<string, string>>;
  /** How many problems there were in all, when `messages` lists only some. */
  readonly problemCount: number | undefined;

  constructor(type: FailureType, message: string, messages: readonly string[] = [message], headers: Record<string, string> = {}, problemCount?: number) {
    super(message);
    this.type = type;
    this.messages = [...messages];
    this.headers = headers;
    this.problemCount = problemCount;
  }
}

function isSiteErrors(details: unknown): details is SiteError[] {
  return Array.isArray(details) && details.every((d) => typeof d === 'object' && d !== null && 'source' in d && 'line' in d && 'message' in d);
}

/** Fastify's own request errors, by code. */
const FASTIFY_ERRORS: Readonly<Record<string, FailureType>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: FailureType.PayloadTooLarge,
  FST_ERR_CTP_INVALID_MEDIA_TYPE: FailureType.UnsupportedMediaType,
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: FailureType.InvalidRequest,
  FST_ERR_CTP_EMPTY_JSON_BODY: FailureType.InvalidJson,
  FST_ERR_CTP_INVALID_JSON_BODY: FailureType.InvalidJson,
  FST_ERR_CTP_INVALID_CONTENT_TYPE: FailureType.UnsupportedMediaType,
  FST_ERR_BAD_URL: FailureType.InvalidRequest,
};

/**
 * Any thrown value as an {@link ApiError}: facade errors by their type, a
 * validation failure with every document error, Fastify's request errors
 * (body too large, media type, bad JSON) by code, an unreachable Temporal as
 * Unavailable, anything else as InternalError without leaking its message.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof RelabelError) {
    // A multi-line message lists the details, which go to messageList; its first line is the summary.
    const summary = (err.message.split('\n', 1)[0] ?? err.message).replace(/:$/, '');
    const messages = isSiteErrors(err.details) ? err.details.map(formatError) : [err.message];
    return new ApiError(err.type, summary, messages, {}, err.problemCount);
  }
  const temporal = clientFailure(err);
  if (temporal) return new ApiError(temporal.type, temporal.message);
  const e = err as { code?: unknown; statusCode?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && Object.hasOwn(FASTIFY_ERRORS, e.code)) {
    return new ApiError(FASTIFY_ERRORS[e.code] as FailureType, String(e.message));
  }
  if (err instanceof SyntaxError && e?.statusCode === 400) {
    return new ApiError(FailureType.InvalidJson, `the body is not valid JSON: ${err.message}`);
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new ApiError(e.statusCode === 413 ? FailureType.PayloadTooLarge : FailureType.InvalidRequest, String(e.message));
  }
  return new ApiError(FailureType.InternalError, 'internal error; see the server log');
}

/** The Airship `Status` body of an error. */
export function failureBody(error: ApiError): StatusBody {
  const { code, retry } = httpStatusOf(error.type);
  return statusBody({
    status: 'Failure',
    code,
    reason: error.type,
    message: error.message,
    retry,
    messages: error.messages,
    error: true,
    ...(error.problemCount !== undefined ? { problemCount: error.problemCount } : {}),
  });
}

/**
 * An Airship `Status` body. `messages` become `details.messageList`, errors
 * when `error`; with `level` (validation results) each also carries it, and
 * is an error when the level is Error. At most {@link MAX_LISTED_ERRORS}
 * are listed, then one message counting the rest, so no answer grows with
 * the input; `errorCount` counts every error (`problemCount` when the
 * messages given were already a prefix of them).
 */
export function statusBody(args: {
  status: 'Success' | 'Failure';
  code: number;
  reason: string;
  message: string;
  retry?: boolean;
  messages?: readonly string[];
  error?: boolean;
  level?: MessageLevel;
  problemCount?: number;
}): StatusBody {
  const { level } = args;
  const given = args.messages ?? [];
  const isError = level === undefined ? (args.error ?? false) : level === 'Error';
  const item = (message: string): StatusMessage => (level === undefined ? { message, error: isError } : { message, error: isError, level });
  const messageList = given.slice(0, MAX_LISTED_ERRORS).map(item);
  const total = Math.max(args.problemCount ?? 0, given.length);
  if (total > messageList.length) messageList.push(item(unlistedLine(total - messageList.length)));
  const errorCount = isError ? total : 0;
  return {
    kind: 'Status',
    apiVersion: 'v1.0',
    status: args.status,
    message: args.message,
    reason: args.reason,
    code: args.code,
    retry: args.retry ?? false,
    details: { errorCount, messageList },
  };
}
