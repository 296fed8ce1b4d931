/**
 * Promenade's `PUT node-labels/{node}` done right: a synchronous,
 * ownership-aware apply of one node's desired labels, with the same core
 * planner and the same guarded patch the relabelNode workflow uses.
 */
import { quote } from '../../core/plan/text.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import { clientFailure } from '../../temporal/failure.ts';
import { isProtectedLabelKey } from '../../core/plan/label-keys.ts';
import type { PlanPolicy } from '../../core/plan/label-plan.ts';
import { reconcileNodeLabels, STALE } from '../../core/plan/node-reconcile.ts';
import { isStaleWrite, mapNodeError, type NodeAction } from '../../kube/errors.ts';
import { conflictBackoff } from '../../kube/backoff.ts';
import type { NodeApi } from '../../kube/nodes.ts';
import { RelabelError } from '../../facade/relabel-error.ts';

/** Reads (and so plans) of one node before giving up on a node that keeps changing. */
export const MAX_APPLY_ATTEMPTS = 5;

/**
 * Most labels one request may set on a node. The write is one JSON Patch,
 * which the API server refuses past 10,000 operations (413), and the
 * node's ownership record lists every key in an annotation, which counts
 * against the 256 KiB the API server allows a node's annotations in all.
 */
export const MAX_REQUEST_LABELS = 1000;

/** Most bytes (UTF-8) of keys and values one request may set on a node; see {@link MAX_REQUEST_LABELS}. */
export const MAX_REQUEST_LABEL_BYTES = 128 * 1024;

/** Policy when no revision is committed: no alias reconciliation, nothing protected. */
export const DEFAULT_NODE_LABELS_POLICY: PlanPolicy = { reconcileOsArchAliases: false, protectedKeys: [] };

/** What one apply did. */
export type NodeLabelsOutcome = {
  /** Labels created or changed, with their new values. */
  set: Record<string, string>;
  /** Owned labels removed because they are no longer desired. */
  removed: string[];
  /** Desired labels already right (adopted ones included), sorted. */
  unchanged: string[];
  /** Whether a patch was sent. */
  written: boolean;
  /** Reads of the node (more than one after a write refused because the node changed under relabel). */
  attempts: number;
};

/**
 * The Kubernetes error mapping of the activities (`mapNodeError`), as a
 * facade error: its permanent failures keep their type, except that
 * Kubernetes rejecting relabel's own credentials is the server's fault
 * (InternalError), not the caller's (whose token was accepted); anything it
 * leaves retryable (network, 429, 5xx) means Kubernetes is unavailable now.
 */
function kubeFailure(err: unknown, node: string, action: NodeAction): RelabelError {
  const failure = clientFailure(mapNodeError(err, node, action));
  if (failure?.type === FailureType.Unauthorized) return new RelabelError(FailureType.InternalError, failure.message);
  if (failure) return new RelabelError(failure.type, failure.message, failure.details);
  return new RelabelError(FailureType.Unavailable, `the Kubernetes API is unavailable (${action} node ${node}): ${(err as Error)?.message ?? String(err)}`);
}

async function kube<T>(call: () => Promise<T>, node: string, action: NodeAction): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw kubeFailure(err, node, action);
  }
}

/**
 * Brings `node`'s relabel-managed labels to exactly `desired`: read → plan
 * (pure, `planLabels`) → no write for an empty plan → one JSON Patch
 * carrying the labels and the ownership record, guarded by what the plan
 * read (`guardedPatch`); when a key it read changed meanwhile, it waits
 * (jittered), re-reads and re-plans, up to {@link MAX_APPLY_ATTEMPTS} reads.
 * The patch removes an update run's applied-run record from the node, since
 * the labels it writes are no revision's.
 *
 * Only labels relabel owns are removed; labels of anyone else are never
 * touched. `desired` must already be valid label syntax without kubelet
 * keys (the request schema checks both); keys the policy protects are
 * refused here (Invalid), as documents asking for them are.
 *
 * Throws RelabelError: PayloadTooLarge (more than {@link MAX_REQUEST_LABELS}
 * labels or {@link MAX_REQUEST_LABEL_BYTES}, refused before any request), Invalid, NodeNotFound, Forbidden, TooManyConflicts,
 * VerificationFailed, Unavailable (Kubernetes unreachable), InternalError
 * (Kubernetes rejects relabel's credentials).
 */
export async function applyNodeLabels(nodes: NodeApi, node: string, desired: Readonly<Record<string, string>>, policy: PlanPolicy): Promise<NodeLabelsOutcome> {
  const count = Object.keys(desired).length;
  const bytes = Object.entries(desired).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0);
  if (count > MAX_REQUEST_LABELS || bytes > MAX_REQUEST_LABEL_BYTES) {
    throw new RelabelError(
      FailureType.PayloadTooLarge,
      `${count} labels of ${bytes} bytes for node ${node}: at most ${MAX_REQUEST_LABELS} labels and ${MAX_REQUEST_LABEL_BYTES / 1024} KiB of keys and values are accepted for one node (its write is one patch, and its ownership record one annotation); nothing was sent`,
    );
  }
  const refused = Object.keys(desired).filter((key) => isProtectedLabelKey(key, policy.protectedKeys));
  if (refused.length > 0) {
    throw new RelabelError(
      FailureType.Invalid,
      `the label policy protects ${refused.map((k) => quote(k)).join(', ')}; relabel never writes or removes protected labels`,
    );
  }
  const outcome = await reconcileNodeLabels(
    // No run applies these labels: a write drops any run's applied-run record, which no longer holds.
    { desired, policy, maxAttempts: MAX_APPLY_ATTEMPTS, applied: null },
    {
      read: () => kube(() => nodes.readNode(node), node, 'read'),
      backoff: conflictBackoff,
      async write(patch) {
        try {
          return await nodes.patchNode(node, patch);
        } catch (err) {
          if (isStaleWrite(err)) return STALE;
          throw kubeFailure(err, node, 'patch');
        }
      },
    },
  );
  if (outcome.status === 'conflicts') {
    throw new RelabelError(FailureType.TooManyConflicts, `node ${node} kept changing: ${MAX_APPLY_ATTEMPTS} conflicting writes in a row; try again`);
  }
  if (outcome.status === 'unverified') {
    throw new RelabelError(FailureType.VerificationFailed, `node ${node} does not carry the desired labels after the patch`);
  }
  const { plan, written, attempts } = outcome;
  return { set: plan.set, removed: plan.remove, unchanged: [...plan.adopt, ...plan.unchanged].sort(), written, attempts };
}
