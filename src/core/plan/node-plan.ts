/**
 * One observed node planned as an update run records it: what it wants
 * (its design labels with its plugin labels joined in, annotations and
 * taints) against what it has, the detail its result keeps, and whether
 * it is settled at once or left pending for a child. Pure: the bulk
 * planner (the activities' `plan-run.ts`) and a node's apply
 * (`apply-node.ts`) share it; it reads a design, a node and a result through
 * shapes of its own, which the site side's `Design`, the Kubernetes
 * adapter's `NodeState` and the run store's node results fit.
 */
import { readOwnedLabels } from './owned-labels.ts';
import type { createRemovalTally } from './removal-brake.ts';
import { planLabels, replacedValues, type LabelPlan, type PlanPolicy } from './label-plan.ts';
import { liftsTaint, nodePatch, type NodeLabelState } from './node-reconcile.ts';
import { nodeWants, type JoinedWants, type PlannedDesign, type PluginConflict, type PluginEntry } from './node-wants.ts';
import type { NodeWants } from './drift.ts';
import { plannedNodeChange } from './planned-node.ts';
import { formatTaint, taintLiftOf, type JoinTaintPolicy } from './taints.ts';
import type { NodeChange } from './workload-impact.ts';

/** The parts of the site's policy planning a node obeys (the site side's `SitePolicy` fits). */
export type NodePlanPolicy = PlanPolicy &
  JoinTaintPolicy & {
    /** Lift the join taint from a node once it carries what it wants. */
    liftUninitializedTaint: boolean;
  };

/** The part of a resolved design planning a node reads (the site side's `Design` is one). */
export type NodePlanDesign = PlannedDesign<NodePlanPolicy>;

/** A node as a read or a list observed it (the Kubernetes adapter's `NodeState` is one). */
export type ObservedNode = NodeLabelState & { name: string };

/**
 * What a plan does (or in a dry run would do) to a node, as its result
 * records it; a run's stored node detail (`NodeResultDetail`) is a superset.
 */
export interface NodePlanDetail {
  set: Record<string, string>;
  /** Values the keys of `set` had before, for those the node already carried. */
  was?: Record<string, string>;
  removed: string[];
  adopted: string[];
  unchanged: number;
  taintLifted?: boolean;
  /** Annotation keys set and removed; absent when none. */
  annotations?: { set: string[]; removed: string[] };
  /** Taints added (or changed) and removed, as `key=value:effect`; absent when none. */
  taints?: { added: string[]; removed: string[] };
  /** The first {@link MAX_LISTED_PLUGIN_CONFLICTS} plugin conflicts; absent when none. */
  pluginConflicts?: PluginConflict[];
  /** How many plugin conflicts in all; absent when none. */
  pluginConflictCount?: number;
}

/**
 * The outcome of planning one node, as a run records it (a store's
 * `NodeResultUpdate` accepts it): settled at once (`success`, with what was
 * or would be done) or left `pending` for its apply, with the state observed.
 */
export interface PlannedNodeResult {
  node: string;
  status: 'success' | 'pending';
  detail: NodePlanDetail | null;
  observed: Omit<ObservedNode, 'name'> | null;
}

/** Most plugin conflicts one node's result lists; `pluginConflictCount` counts all. */
export const MAX_LISTED_PLUGIN_CONFLICTS = 20;

/** The plugin conflicts a node's result records (none when there are none). */
export function conflictDetail(conflicts: readonly PluginConflict[]): Pick<NodePlanDetail, 'pluginConflicts' | 'pluginConflictCount'> {
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
export function planOf(design: NodePlanDesign, state: Omit<ObservedNode, 'name'>, node: string, plugins: readonly PluginEntry[] = []): LabelPlan {
  return planWants(nodeWants(design, node, plugins), state, design.policy);
}

/** The plan of one observed node that wants `wants` (nothing when undefined). */
function planWants(wants: NodeWants | undefined, state: Omit<ObservedNode, 'name'>, policy: PlanPolicy): LabelPlan {
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
export function planDetail(plan: LabelPlan, before: Pick<ObservedNode, 'labels'>, taintLifted: boolean): NodePlanDetail {
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
function ownedPresent(state: Pick<ObservedNode, 'labels' | 'annotations'>): number {
  return readOwnedLabels(state.annotations).owned.filter((key) => Object.hasOwn(state.labels, key)).length;
}

/**
 * The outcome of planning one observed node (pure); `wants` is what it
 * wants (see `nodeWants`: without it, its document labels only), and
 * `tally` adds up what it would remove; `onChange` is told the node's
 * labels and taints before and after, when the plan changes them.
 */
export function planNode(
  design: NodePlanDesign,
  state: ObservedNode,
  dryRun: boolean,
  wants: JoinedWants | undefined = nodeWants(design, state.name),
  tally?: RemovalTally,
  onChange?: (change: NodeChange) => void,
): PlannedNodeResult {
  const plan = planWants(wants, state, design.policy);
  const change = onChange && plannedNodeChange(state.name, state, plan, taintLiftOf(design.policy));
  if (change) onChange?.(change);
  tally?.add(ownedPresent(state), plan.remove);
  const conflicts = conflictDetail(wants?.conflicts ?? []);
  const patch = nodePatch(plan, state, taintLiftOf(design.policy));
  if (patch === null)
    return {
      node: state.name,
      status: 'success',
      detail: { set: {}, removed: [], adopted: [], unchanged: plan.unchanged.length, ...conflicts },
      observed: null,
    };
  if (dryRun) {
    return {
      node: state.name,
      status: 'success',
      detail: { ...planDetail(plan, state, liftsTaint(state, taintLiftOf(design.policy))), ...conflicts },
      observed: null,
    };
  }
  const { name: _name, ...observed } = state;
  return { node: state.name, status: 'pending', detail: null, observed };
}
