/**
 * How `applyNodePlan` reads and writes one node: the two steps it hands
 * `reconcileNodeLabels`, kept together here so that how a node is read, and
 * how its patch is sent and guarded, is decided in one place.
 */
import { STALE, type ReconcileSteps } from '../core/plan/node-reconcile.ts';
import { conflictBackoff } from '../kube/backoff.ts';
import { isStaleWrite, mapNodeError } from '../kube/errors.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';

/** What the steps saw of the node, for the caller's result, its record and its Events. */
export interface NodeSeen {
  /** The node's uid, once it has been read or written. */
  uid?: string;
  /** The state the last plan was made from: its values of the keys set are what they were. */
  lastRead?: Pick<NodeState, 'labels' | 'annotations'>;
}

/**
 * The read and write steps for `node`. The first read returns `observed`
 * when given (the state the bulk plan saw), every later read GETs the node;
 * a write sends the guarded JSON Patch the loop built, and answers
 * {@link STALE} when the server refuses it as stale (`isStaleWrite`: a key
 * the plan read changed), after which the loop waits (`conflictBackoff`),
 * re-reads and re-plans, never overwriting. Other API errors
 * are thrown as relabel failures (NodeNotFound, Forbidden, Invalid, …;
 * transient ones stay retryable). Both steps note in `seen` what they saw.
 */
export function nodeSteps(nodes: NodeApi, node: string, observed: Omit<NodeState, 'name'> | null, seen: NodeSeen): ReconcileSteps {
  let first = observed;
  return {
    async read() {
      const given = first;
      first = null;
      const state = given ?? (await readNode(nodes, node));
      seen.lastRead = state;
      seen.uid = state.uid ?? seen.uid;
      return state;
    },
    backoff: conflictBackoff,
    async write(patch) {
      try {
        const after = await nodes.patchNode(node, patch);
        seen.uid = after.uid ?? seen.uid;
        return after;
      } catch (err) {
        if (isStaleWrite(err)) return STALE;
        throw mapNodeError(err, node, 'patch');
      }
    },
  };
}

/** GETs `node`, its errors as relabel failures. */
async function readNode(nodes: NodeApi, node: string): Promise<NodeState> {
  try {
    return await nodes.readNode(node);
  } catch (err) {
    throw mapNodeError(err, node, 'read');
  }
}
