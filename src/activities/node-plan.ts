/**
 * One observed node planned as an update run records it: what it wants
 * (its design labels with its plugin labels joined in, annotations and
 * taints) against what it has, the detail its result keeps, and whether
 * it is settled at once or left pending for a child. Pure: the bulk
 * planner (`plan-run.ts`) and a node's apply (`apply-node.ts`) share it.
 */
import { readOwnedLabels } from '../core/plan/owned-labels.ts';
import type { createRemovalTally } from '../core/plan/removal-brake.ts';
import { planLabels, replacedValues, type LabelPlan } from '../core/plan/label-plan.ts';
import { liftsTaint, nodePatch } from '../core/plan/node-reconcile.ts';
import { nodeWants, type JoinedWants, type PluginConflict, type PluginEntry } from '../core/plan/node-wants.ts';
import type { NodeWants } from '../core/plan/drift.ts';
import { plannedNodeChange } from '../core/plan/planned-node.ts';
import { formatTaint } from '../core/plan/taints.ts';
import type { NodeChange } from '../core/plan/workload-impact.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeState } from '../kube/nodes.ts';
import type { NodeResultDetail, NodeResultUpdate } from '../store/run-store.ts';

/** Most plugin conflicts one node's result lists; `pluginConflictCount` counts all. */
export const MAX_LISTED_PLUGIN_CONFLICTS = 20;

/** The plugin conflicts a node's result records (none when there are none). */
export function conflictDetail(conflicts: readonly PluginConflict[]): Pick<NodeResultDetail, 'pluginConflicts' | 'pluginConflictCount'> {
  if (conflicts.length === 0) return {};
  return { pluginConflicts: conflicts.slice(0, MAX_LISTED_PLUGIN_CONFLICTS), pluginConflictCount: conflicts.length };
}

/** Tallies what planned nodes would remove (see `removal-brake.ts`). */
export type RemovalTally = ReturnType<typeof createRemovalTally>;

/**
 * The plan of one observed node against what it wants (see `nodeWants`):
 * its labels with its plugin labels joined in, annotations and taints. A
 * node the design does not hold wants nothing (every owned key removed).
 */
export function planOf(design: Design, state: Omit<NodeState, 'name'>, node: string, plugins: readonly PluginEntry[] = []): LabelPlan {
  return planWants(nodeWants(design, node, plugins), state, design.policy);
}

/** The plan of one observed node that wants `wants` (nothing when undefined). */
function planWants(wants: NodeWants | undefined, state: Omit<NodeState, 'name'>, policy: Design['policy']): LabelPlan {
  return planLabels({
    ...state,
    desired: wants?.labels ?? {},
    desiredAnnotations: wants?.annotations ?? {},
    desiredTaints: wants?.taints ?? [],
    policy,
  });
}

/**
 * What a plan does (or would do) to a node, as its result records it:
 * labels with the values they replace, annotation keys set and removed,
 * taints added and removed (each list only when not empty).
 */
export function planDetail(plan: LabelPlan, before: Pick<NodeState, 'labels'>, taintLifted: boolean): NodeResultDetail {
  const was = replacedValues(plan.set, before.labels);
  const a = plan.annotations;
  const t = plan.taints;
  const annotations = a && (Object.keys(a.set).length > 0 || a.remove.length > 0) ? { set: Object.keys(a.set), removed: a.remove } : undefined;
  const taints = t?.changed ? { added: t.add.map(formatTaint), removed: t.remove.map(formatTaint) } : undefined;
  return {
    set: plan.set,
    ...(was ? { was } : {}),
    removed: plan.remove,
    adopted: plan.adopt,
    unchanged: plan.unchanged.length,
    taintLifted,
    ...(annotations ? { annotations } : {}),
    ...(taints ? { taints } : {}),
  };
}

/** Owned labels a node carries: the entries of its ownership record that name one of its labels. */
function ownedPresent(state: Pick<NodeState, 'labels' | 'annotations'>): number {
  return readOwnedLabels(state.annotations).owned.filter((key) => Object.hasOwn(state.labels, key)).length;
}

/**
 * The outcome of planning one observed node (pure); `wants` is what it
 * wants (see `nodeWants`: without it, its document labels only), and
 * `tally` adds up what it would remove; `onChange` is told the node's
 * labels and taints before and after, when the plan changes them.
 */
export function planNode(
  design: Design,
  state: NodeState,
  dryRun: boolean,
  wants: JoinedWants | undefined = nodeWants(design, state.name),
  tally?: RemovalTally,
  onChange?: (change: NodeChange) => void,
): NodeResultUpdate {
  const plan = planWants(wants, state, design.policy);
  const change = onChange && plannedNodeChange(state.name, state, plan, design.policy.liftUninitializedTaint);
  if (change) onChange?.(change);
  tally?.add(ownedPresent(state), plan.remove);
  const conflicts = conflictDetail(wants?.conflicts ?? []);
  const patch = nodePatch(plan, state, design.policy.liftUninitializedTaint);
  if (patch === null) return { node: state.name, status: 'success', detail: { set: {}, removed: [], adopted: [], unchanged: plan.unchanged.length, ...conflicts }, observed: null };
  if (dryRun) {
    return { node: state.name, status: 'success', detail: { ...planDetail(plan, state, liftsTaint(state, design.policy.liftUninitializedTaint)), ...conflicts }, observed: null };
  }
  const { name: _name, ...observed } = state;
  return { node: state.name, status: 'pending', detail: null, observed };
}
