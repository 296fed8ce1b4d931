/**
 * A node before and after its plan, as the workload impact weighs it: the
 * labels `applyPlan` leaves and the taint list the node's patch writes (the
 * taint plan's `next`, and relabel's join taint lifted when the
 * policy lifts it), so the impact sees exactly what the write would do.
 */
import { applyPlan, type LabelPlan } from './label-plan.ts';
import { nodePatch, type NodeLabelState, type TaintLift } from './node-reconcile.ts';
import type { NodeChange } from './workload-impact.ts';

/**
 * The change `plan` makes to node `name` observed as `state`, or undefined
 * when its patch would touch neither labels nor taints (annotations alone
 * move no workload). Pure.
 */
export function plannedNodeChange(name: string, state: NodeLabelState, plan: LabelPlan, liftTaint: TaintLift): NodeChange | undefined {
  const patch = nodePatch(plan, state, liftTaint);
  if (patch === null) return undefined;
  const labelsChange = plan.remove.length > 0 || Object.keys(plan.set).length > 0;
  const taints = patch.spec ? (patch.spec.taints ?? []) : undefined;
  if (!labelsChange && taints === undefined) return undefined;
  const before = { labels: state.labels, taints: state.taints ?? [] };
  return { name, before, after: { labels: labelsChange ? applyPlan(state.labels, plan) : state.labels, taints: taints ?? before.taints } };
}
