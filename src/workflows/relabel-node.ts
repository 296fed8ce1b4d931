/**
 * `relabelNode`: one node whose bulk plan has something to change. A single
 * local activity applies the plan (guarded patch, verify, re-plan on 409)
 * and records the node's result in the store, so the child costs one
 * workflow task and one marker in its history.
 */
import { proxyLocalActivities, setCurrentDetails } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import { rejectionOf } from './failure.ts';
import type { RelabelNodeInput, RelabelNodeResult } from '../contracts/messages.ts';

/**
 * Each attempt is bounded so that a worker killed mid-patch costs the node
 * about one start-to-close (15 s) before another worker retries it; the
 * attempt is idempotent (a stale resourceVersion re-reads and re-plans).
 */
const { applyNodePlan } = proxyLocalActivities<Activities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 10 },
});

function describe(c: RelabelNodeResult['counts']): string {
  const more = [c.annotations ? `${c.annotations} annotation(s) changed` : '', c.taints ? `${c.taints} taint(s) changed` : ''].filter((p) => p !== '');
  return [`${c.set} set, ${c.removed} removed, ${c.adopted} adopted, ${c.unchanged} unchanged`, ...more].join(', ');
}

/**
 * Brings one node's labels to the desired set of a revision, starting from
 * the state the bulk plan observed. Removes only labels relabel owns; never
 * touches anyone else's. Fails with a non-retryable ApplicationFailure
 * (NodeNotInDesign, NodeNotFound, Forbidden, Invalid, TooManyConflicts,
 * VerificationFailed) naming the reason; the parent records it.
 */
export async function relabelNode(input: RelabelNodeInput): Promise<RelabelNodeResult> {
  const { node, revision } = input;
  setCurrentDetails(`Applying revision ${revision} to **${node}**`);
  try {
    const result = await applyNodePlan({ run: input.run, node, revision });
    setCurrentDetails(
      result.written
        ? `**${node}** relabelled: ${describe(result.counts)}${result.taintLifted ? ', uninitialized taint lifted' : ''}`
        : `**${node}** already as desired: nothing written`,
    );
    return result;
  } catch (err) {
    // Surface the activity's own failure (type and message) as the child's.
    const rejection = rejectionOf(err, { anyApplicationFailure: true });
    if (rejection) setCurrentDetails(`**${node}** failed: ${rejection.type ?? 'Error'}: ${rejection.message}`);
    throw rejection ?? err;
  }
}
