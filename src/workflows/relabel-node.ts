/**
 * `relabelNode`: one node, read → plan (pure) → apply → verify. Deterministic
 * orchestration only; the activities do the I/O.
 */
import { ApplicationFailure, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { FailureType } from '../core/failure-types.ts';
import { labelPatch, planLabels, type LabelPlan } from '../core/label-plan.ts';
import type { Activities } from '../activities/index.ts';
import type { RelabelNodeInput, RelabelNodeResult } from './messages.ts';
import { nodeSearchAttributes } from './search-attributes.ts';

/** How many times a node is re-read and re-planned after a resourceVersion conflict. */
export const MAX_CONFLICT_ATTEMPTS = 5;

const kube = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 10 },
} as const;

function describePlan(plan: LabelPlan): string {
  const parts = [
    `${Object.keys(plan.set).length} to set`,
    `${plan.remove.length} to remove`,
    `${plan.adopt.length} to adopt`,
    `${plan.unchanged.length} unchanged`,
  ];
  return parts.join(', ');
}

/**
 * Brings one node's labels to the desired set of a revision. Removes only
 * labels relabel owns; never touches anyone else's. Sends no write when the
 * plan is empty, and one guarded patch otherwise; a concurrent change
 * (409) re-reads and re-plans. Fails with a non-retryable ApplicationFailure
 * (NodeNotInDesign, NodeNotFound, Forbidden, Invalid, TooManyConflicts,
 * VerificationFailed) naming the reason.
 */
export async function relabelNode(input: RelabelNodeInput): Promise<RelabelNodeResult> {
  const { node, revision, dryRun } = input;
  const { nodeDesign } = proxyActivities<Activities>({ startToCloseTimeout: '60s', summary: `desired labels of ${node} at revision ${revision}` });
  const { readNode } = proxyActivities<Activities>({ ...kube, summary: `read node ${node}` });
  const { applyLabelPlan } = proxyActivities<Activities>({ ...kube, summary: `patch labels of ${node}` });
  if (input.searchAttributes !== false) upsertSearchAttributes(nodeSearchAttributes(node, revision));

  setCurrentDetails(`Computing desired labels of **${node}** at revision ${revision}`);
  const design = await nodeDesign({ revision, node });
  for (let attempt = 1; attempt <= MAX_CONFLICT_ATTEMPTS; attempt++) {
    const state = await readNode({ node });
    const plan = planLabels({ labels: state.labels, annotations: state.annotations, desired: design.labels, policy: design.policy });
    const result = (written: boolean): RelabelNodeResult => ({
      node,
      status: 'success',
      set: plan.set,
      removed: plan.remove,
      adopted: plan.adopt,
      unchanged: plan.unchanged.length,
      written,
      attempts: attempt,
    });
    const patch = labelPatch(plan, state.resourceVersion);
    if (patch === null) {
      setCurrentDetails(`**${node}** already as desired: nothing written`);
      return result(false);
    }
    if (dryRun) {
      setCurrentDetails(`Dry run for **${node}**: ${describePlan(plan)}`);
      return result(false);
    }
    setCurrentDetails(`Applying to **${node}**: ${describePlan(plan)}`);
    let after;
    try {
      after = await applyLabelPlan({ node, patch });
    } catch (err) {
      if (err instanceof Error && (err.cause as { type?: string } | undefined)?.type === FailureType.Conflict) continue;
      throw err;
    }
    const check = planLabels({ labels: after.labels, annotations: after.annotations, desired: design.labels, policy: design.policy });
    if (!check.empty) {
      throw ApplicationFailure.nonRetryable(
        `node ${node} does not carry the desired labels after the patch: ${describePlan(check)}`,
        FailureType.VerificationFailed,
      );
    }
    setCurrentDetails(`**${node}** relabelled: ${describePlan(plan)}`);
    return result(true);
  }
  throw ApplicationFailure.nonRetryable(
    `node ${node} kept changing under relabel: ${MAX_CONFLICT_ATTEMPTS} conflicting writes in a row`,
    FailureType.TooManyConflicts,
  );
}
