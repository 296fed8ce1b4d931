/**
 * The one place Kubernetes API errors become relabel failures. Permanent
 * errors turn into non-retryable `ApplicationFailure`s with a public failure
 * type; transient ones propagate unchanged so the activity retry policy
 * retries them with backoff.
 */
import { ApiException } from '@kubernetes/client-node';
import { ApplicationFailure } from '@temporalio/common';
import { clip } from '../core/plan/text.ts';
import { FailureType } from '../core/plan/failure-types.ts';

/** Longest text of the API server's own message kept in a failure message. */
export const MAX_API_MESSAGE = 300;

/** What relabel asked of the API server when it failed. */
export type NodeAction = 'read' | 'list' | 'patch';

/** The HTTP status of an answer the API server gave (the client's ApiException); none for network errors. */
export function httpStatus(err: unknown): number | undefined {
  return err instanceof ApiException && err.code >= 100 && err.code < 600 ? err.code : undefined;
}

/** The parts of a Kubernetes `Status` answer that say what failed. */
export interface KubeStatus {
  message?: string;
  /** `details.kind`: the resource, such as `nodes`. */
  kind?: string;
  /** `details.name`: the object, such as the node's name. */
  name?: string;
  /** The messages of `details.causes`, when it names any. */
  causes?: string[];
  /** Every cause is a taint listed twice (`FieldValueDuplicate` on the node's taints). */
  duplicateTaint?: true;
}

/** The field a duplicate taint is reported under (the server names the list `metadata.taints` or `spec.taints`). */
const TAINT_FIELD = /^(metadata|spec)\.taints\[\d+\]$/;

/** `text` cut to {@link MAX_API_MESSAGE} characters. */
function bounded(text: string): string {
  return clip(text, MAX_API_MESSAGE);
}

/** The `Status` body of an API server answer (JSON text or an object), as far as it has one. */
export function kubeStatus(err: unknown): KubeStatus {
  const raw = err instanceof ApiException ? (err.body as unknown) : undefined;
  let body = raw;
  if (typeof raw === 'string') {
    try {
      body = JSON.parse(raw) as unknown;
    } catch {
      return raw.trim() === '' ? {} : { message: bounded(raw.trim()) };
    }
  }
  if (!body || typeof body !== 'object') return {};
  const b = body as { message?: unknown; details?: { kind?: unknown; name?: unknown; causes?: unknown } | null };
  const text = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const message = text(b.message);
  const kind = text(b.details?.kind);
  const name = text(b.details?.name);
  const listed = Array.isArray(b.details?.causes) ? (b.details.causes as unknown[]) : [];
  const causes = listed.map((c) => bounded(text((c as { message?: unknown } | null)?.message) ?? ''));
  const duplicateTaint =
    listed.length > 0 &&
    listed.every((c) => {
      const cause = c as { reason?: unknown; field?: unknown } | null;
      return cause?.reason === 'FieldValueDuplicate' && typeof cause.field === 'string' && TAINT_FIELD.test(cause.field);
    });
  return {
    ...(duplicateTaint ? { duplicateTaint: true as const } : {}),
    ...(message ? { message: bounded(message) } : {}),
    ...(kind ? { kind: bounded(kind) } : {}),
    ...(name ? { name: bounded(name) } : {}),
    ...(causes.length > 0 ? { causes } : {}),
  };
}

/** `reading node n1`, `patching node n1`, `listing nodes`. */
function doing(action: NodeAction, node: string): string {
  return action === 'list' ? 'listing nodes' : `${action === 'read' ? 'reading' : 'patching'} node ${node}`;
}

/** The verb Kubernetes authorizes for each action. */
const VERB: Record<NodeAction, string> = { read: 'get', list: 'list', patch: 'patch' };

/**
 * What a 403 denied, in plain words: `patch on nodes "n1" denied for user
 * "u"`, from the Status body's details and the authorizer's message
 * (`... User "u" cannot patch resource "nodes" ...`); what relabel asked for
 * when the body says less. Ends with the authorizer's own reason when it
 * gives one the words above do not already say.
 */
export function forbiddenMessage(status: KubeStatus, action: NodeAction, node: string): string {
  const said = status.message ?? '';
  const parsed = /User "([^"]*)" cannot ([\w-]+) resource "([^"]*)"/.exec(said);
  const verb = parsed?.[2] ?? VERB[action];
  const resource = status.kind ?? parsed?.[3] ?? 'nodes';
  const name = status.name ?? (action === 'list' ? undefined : node);
  const user = parsed?.[1];
  // The authorizer's explanation after the standard sentence (such as an RBAC or webhook reason).
  const reason = parsed
    ? said
        .slice(said.indexOf(parsed[0]) + parsed[0].length)
        .replace(/^ in API group "[^"]*"( in the namespace "[^"]*"| at the cluster scope)?:? ?/, '')
        .trim()
    : said;
  return (
    `${verb} on ${resource}${name ? ` ${JSON.stringify(name)}` : ''} denied${user !== undefined ? ` for user ${JSON.stringify(user)}` : ''} (403)` +
    `${reason ? `: ${reason}` : ''}; relabel needs get, list and patch on nodes`
  );
}

/**
 * Maps an error from a Node request. Returns the error to throw: a
 * non-retryable failure for 404 (NodeNotFound), 401 (Unauthorized: the
 * credentials were rejected), 403 (Forbidden: the verb on the resource was
 * denied), 400/422 (Invalid), 409 (Conflict: the caller re-reads and
 * re-plans) and 413 (PayloadTooLarge); the original error, retryable, for 429, 5xx and network
 * failures. Messages quote at most {@link MAX_API_MESSAGE} characters of
 * the server's answer.
 */
export function mapNodeError(err: unknown, node: string, action: NodeAction): unknown {
  const status = httpStatus(err);
  const answer = kubeStatus(err);
  const detail = answer.message ?? `HTTP ${status}`;
  const fail = (type: FailureType, message: string) => ApplicationFailure.create({ message, type, nonRetryable: true, details: [{ node, status, detail }] });
  switch (status) {
    case 404:
      return fail(FailureType.NodeNotFound, `node ${node} not found in the cluster (${action})`);
    case 401:
      return fail(
        FailureType.Unauthorized,
        `the Kubernetes API server rejected relabel's credentials (401) ${doing(action, node)}: check the token or client certificate of the kubeconfig`,
      );
    case 403:
      return fail(FailureType.Forbidden, forbiddenMessage(answer, action, node));
    case 400:
    case 422:
      return fail(FailureType.Invalid, `the API server rejected the request to ${action} node ${node}: ${detail}`);
    case 409:
      return fail(FailureType.Conflict, `node ${node} changed while relabelling (${action}): ${detail}`);
    case 413:
      // Too large stays too large: sending it again can never succeed.
      return fail(FailureType.PayloadTooLarge, `the API server refused the request to ${action} node ${node} as too large (413): ${detail}`);
    default:
      return err;
  }
}

/**
 * What the API server answers when a JSON Patch does not apply (a failed
 * `test`, or an operation under a member that is gone): 422 with this
 * generic message and no causes. Its own validation refusals name the
 * object and their causes instead.
 */
const PATCH_NOT_APPLIED = 'the server rejected our request due to an error in our request';

/** The JSON Patch library's own words for a failed test, where a server passes them on. */
const FAILED_TEST = /testing value \S* failed|test operation does not apply/;

/**
 * Whether the API server refused a node write as stale: its JSON Patch did
 * not apply (422 without causes, or in the JSON Patch library's words), or
 * a resourceVersion no longer matched (409). relabel's patches test every
 * member they change or remove under (see `guardedPatch`), so a patch of
 * theirs that does not apply means a value the plan read has changed:
 * the caller re-reads and re-plans. So is a taint it appends that someone
 * else added meanwhile (422, every cause a duplicate taint). Every other
 * 422 is a real refusal.
 */
export function isStaleWrite(err: unknown): boolean {
  const status = httpStatus(err);
  if (status === 409) return true;
  if (status !== 422) return false;
  const { message = '', causes = [], duplicateTaint } = kubeStatus(err);
  // A taint relabel appends that someone else added after the read: the server's uniqueness check is the test.
  if (duplicateTaint) return true;
  if (FAILED_TEST.test(message) || causes.some((cause) => FAILED_TEST.test(cause))) return true;
  return message === PATCH_NOT_APPLIED && causes.length === 0;
}
