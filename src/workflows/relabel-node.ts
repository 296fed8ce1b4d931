/**
 * `relabelNode`: one node, read → plan (pure) → apply → verify. Deterministic
 * orchestration only; the activities do the I/O.
 */
import { ActivityFailure, ApplicationFailure, proxyActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { FailureType } from '../core/failure-types.ts';
import type { LabelPlan } from '../core/label-plan.ts';
import { reconcileNodeLabels, STALE } from '../core/node-reconcile.ts';
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
  const outcome = await reconcileNodeLabels(
    { desired: design.labels, policy: design.policy, maxAttempts: MAX_CONFLICT_ATTEMPTS, dryRun, liftTaint: design.policy.liftUninitializedTaint },
    {
      read: () => readNode({ node }),
      async write(patch) {
        try {
          return await applyLabelPlan({ node, patch });
        } catch (err) {
          if (err instanceof ActivityFailure && (err.cause as { type?: string } | undefined)?.type === FailureType.Conflict) return STALE;
          throw err;
        }
      },
      onPlan(plan) {
        if (plan.empty) setCurrentDetails(`**${node}** already as desired: nothing written`);
        else setCurrentDetails(`${dryRun ? 'Dry run for' : 'Applying to'} **${node}**: ${describePlan(plan)}`);
      },
    },
  );
  if (outcome.status === 'conflicts') {
    throw ApplicationFailure.nonRetryable(
      `node ${node} kept changing under relabel: ${MAX_CONFLICT_ATTEMPTS} conflicting writes in a row`,
      FailureType.TooManyConflicts,
    );
  }
  if (outcome.status === 'unverified') {
    throw ApplicationFailure.nonRetryable(
      `node ${node} is not as desired after the patch: ${outcome.remaining.empty ? '' : describePlan(outcome.remaining)}${outcome.taintLeft ? ' (uninitialized taint still present)' : ''}`,
      FailureType.VerificationFailed,
    );
  }
  const { plan, written, attempts, taintLifted } = outcome;
  if (written) setCurrentDetails(`**${node}** relabelled: ${describePlan(plan)}${taintLifted ? ', uninitialized taint lifted' : ''}`);
  return { node, status: 'success', set: plan.set, removed: plan.remove, adopted: plan.adopt, unchanged: plan.unchanged.length, written, taintLifted, attempts };
}
