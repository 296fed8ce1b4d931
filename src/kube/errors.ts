/**
 * The one place Kubernetes API errors become relabel failures. Permanent
 * errors turn into non-retryable `ApplicationFailure`s with a public failure
 * type; transient ones propagate unchanged so the activity retry policy
 * retries them with backoff.
 */
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/failure-types.ts';

/** The HTTP status of an answer the API server gave (the client's ApiException); none for network errors. */
export function httpStatus(err: unknown): number | undefined {
  return err instanceof ApiException && err.code >= 100 && err.code < 600 ? err.code : undefined;
}

function apiMessage(err: unknown): string {
  const body = err instanceof ApiException ? (err.body as unknown) : undefined;
  if (typeof body === 'string') {
    try {
      const parsed = JSON.parse(body) as { message?: unknown };
      if (typeof parsed.message === 'string') return parsed.message;
    } catch {
      return body.slice(0, 500);
    }
  }
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return err instanceof Error ? err.message : String(err);
}

/**
 * Maps an error from a Node request. Returns the error to throw: a
 * non-retryable failure for 404 (NodeNotFound), 401/403 (Forbidden),
 * 400/422 (Invalid) and 409 (Conflict: the caller re-reads and re-plans);
 * the original error, retryable, for 429, 5xx and network failures.
 */
export function mapNodeError(err: unknown, node: string, action: string): unknown {
  const status = httpStatus(err);
  const detail = apiMessage(err);
  const fail = (type: FailureType, message: string) =>
    ApplicationFailure.create({ message, type, nonRetryable: true, details: [{ node, status, detail }] });
  switch (status) {
    case 404:
      return fail(FailureType.NodeNotFound, `node ${node} not found in the cluster (${action})`);
    case 401:
      return fail(FailureType.Forbidden, `the API server rejected relabel's credentials (401) when asked to ${action} node ${node}: check the kubeconfig's token or certificate`);
    case 403:
      return fail(FailureType.Forbidden, `relabel may not ${action} node ${node} (403: RBAC denies the verb on nodes): ${detail}`);
    case 400:
    case 422:
      return fail(FailureType.Invalid, `the API server rejected the request to ${action} node ${node}: ${detail}`);
    case 409:
      return fail(FailureType.Conflict, `node ${node} changed while relabelling (${action}): ${detail}`);
    default:
      return err;
  }
}
