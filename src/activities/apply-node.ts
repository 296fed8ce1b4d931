/**
 * The `applyNodePlan` activity: one node of an update run brought to its
 * revision's labels, from the state the bulk plan observed, with one
 * guarded patch per attempt (read and write in `node-steps.ts`), the result
 * verified and recorded in the store before it returns, and a node an
 * earlier attempt wrote (its completion lost) counted as written.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { isAppliedBy, type AppliedRun } from '../core/plan/applied-run.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import type { LabelPlan } from '../core/plan/label-plan.ts';
import { liftsTaint, nodePatch, reconcileNodeLabels } from '../core/plan/node-reconcile.ts';
import { joinTaintKeyOf, taintLiftOf } from '../core/plan/taints.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import { memberEntry } from '../core/plan/node-sets.ts';
import { releaseWants } from '../core/plan/release.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { Store } from '../store/store.ts';
import type { NodeResultDetail } from '../store/runs/run-store.ts';
import type { RelabelNodeResult } from '../contracts/messages.ts';
import type { NodeEvents } from './node-events.ts';
import { nodeSteps, type NodeSeen } from './node-steps.ts';
import { conflictDetail, planDetail, planOf } from '../core/plan/node-plan.ts';
import type { ResultWriter } from './result-writer.ts';

/** How many times a node is read and planned when a write meets a change to what the plan read. */
export const MAX_CONFLICT_ATTEMPTS = 5;

/** Which node of which run `applyNodePlan` brings to which revision. */
export interface ApplyNodeInput {
  run: number;
  node: string;
  revision: number;
}

/** What applying a node needs: the clients and the lookups the activities share. */
export interface ApplyNodeDeps {
  nodes: NodeApi;
  store: Store;
  results: ResultWriter;
  /** Kubernetes Events about the nodes written or failed on; none recorded when absent. */
  events?: NodeEvents;
  /** The revision's design; DocumentValidationFailed when its documents are invalid. */
  validDesign(revision: number): Promise<Design>;
  /** The node's labels in the run's pinned plugin set. */
  nodePluginLabels(run: number, node: string): Promise<PluginEntry[]>;
}

/** A write an earlier attempt made whose completion was lost: what {@link recoverWritten} settles. */
interface LostWrite {
  /** This run's applied-run record, which the node carries. */
  applied: AppliedRun;
  node: string;
  design: Design;
  /** The state the bulk plan observed, when this attempt read it (attempt 1). */
  bulkObserved: Omit<NodeState, 'name'> | null;
  /** The plan this attempt made: nothing left to change. */
  plan: LabelPlan;
  attempts: number;
  plugins: readonly PluginEntry[];
  uid: string | undefined;
  /** The node sets the bulk plan found matching a named node (its row's `matchedSets`), kept in its result. */
  matchedSets?: string[];
}

/** One log line per node applied: `info` when it was written, `debug` when it was already as desired. */
function logApplied(where: ApplyNodeInput, written: boolean, counts: RelabelNodeResult['counts']): void {
  if (written) log.info('node relabelled', { ...where, ...counts });
  else log.debug('node already as desired', where);
}

/** What a plan changes, counted. */
function planCounts(plan: LabelPlan): RelabelNodeResult['counts'] {
  const annotations = plan.annotations ? Object.keys(plan.annotations.set).length + plan.annotations.remove.length : 0;
  const taints = plan.taints ? plan.taints.add.length + plan.taints.remove.length : 0;
  const counts = { set: Object.keys(plan.set).length, removed: plan.remove.length, adopted: plan.adopt.length, unchanged: plan.unchanged.length };
  return { ...counts, ...(annotations > 0 ? { annotations } : {}), ...(taints > 0 ? { taints } : {}) };
}

/** What a recorded result's detail changed, counted as {@link planCounts} counts a plan. */
function detailCounts(d: NodeResultDetail): RelabelNodeResult['counts'] {
  const annotations = (d.annotations?.set.length ?? 0) + (d.annotations?.removed.length ?? 0);
  const taints = (d.taints?.added.length ?? 0) + (d.taints?.removed.length ?? 0);
  return {
    set: Object.keys(d.set ?? {}).length,
    removed: d.removed?.length ?? 0,
    adopted: d.adopted?.length ?? 0,
    unchanged: d.unchanged ?? 0,
    ...(annotations > 0 ? { annotations } : {}),
    ...(taints > 0 ? { taints } : {}),
  };
}

/**
 * Settles a node an earlier attempt of this run wrote, though that
 * attempt's completion was lost: the node carries this run's applied-run
 * record and nothing is left to change. Counted as written, with the
 * detail re-planned from the state the bulk plan observed (what the
 * writing attempt started from); when that state is gone, the writing
 * attempt recorded its result already and that record stays as it is.
 */
async function recoverWritten(deps: ApplyNodeDeps, lost: LostWrite): Promise<RelabelNodeResult> {
  const { store, results, events } = deps;
  const { applied, node, design, attempts, uid } = lost;
  const { run } = applied;
  const observed = lost.bulkObserved ?? ((await store.runs.observedState(run, node)) as Omit<NodeState, 'name'> | null);
  if (observed === null) {
    const row = await store.runs.node(run, node);
    const d = row?.status === 'success' && row.written ? row.detail : null;
    // The writing attempt recorded this result, and its Event with it.
    if (d) return { node, written: true, counts: detailCounts(d), taintLifted: d.taintLifted === true, attempts: d.attempts ?? attempts };
  }
  const plan = observed ? planOf(design, observed, node, lost.plugins) : lost.plan;
  const lift = taintLiftOf(design.policy);
  const taintLifted = observed !== null && nodePatch(plan, observed, lift) !== null && liftsTaint(observed, lift);
  const detail: NodeResultDetail = {
    ...planDetail(plan, observed ?? { labels: {} }, taintLifted),
    attempts,
    recovered: true,
    ...(lost.matchedSets ? { matchedSets: lost.matchedSets } : {}),
  };
  await results.record(run, { node, status: 'success', written: true, detail, observed: null });
  events?.applied({ run, revision: applied.revision, node, ...(uid ? { uid } : {}), plan });
  return { node, written: true, counts: planCounts(plan), taintLifted, attempts };
}

/**
 * The design as node `node` is planned against: `design` when it names the
 * node (with the sets the bulk plan found matching it, which its result
 * keeps: the row is written whole); for a member of a node set (the bulk
 * plan recorded its set in the node's row), a design holding the member as
 * its set's entry, and the set;
 * for a node of a release run (its row says `release`), `release`.
 */
async function designOf(
  store: ApplyNodeDeps['store'],
  run: number,
  design: Design,
  node: string,
): Promise<{ design: Design; nodeSet?: string; matchedSets?: string[]; release?: true }> {
  if (Object.hasOwn(design.nodes, node)) {
    const matchedSets = design.nodeSets === undefined ? undefined : (await store.runs.node(run, node))?.detail?.matchedSets;
    return matchedSets ? { design, matchedSets } : { design };
  }
  const detail = (await store.runs.node(run, node))?.detail;
  // A release run's node (its plan says so) wants nothing, and its join taint is not relabel's to lift.
  if (detail?.release === true) return { design: { ...design, policy: { ...design.policy, liftUninitializedTaint: false } }, release: true };
  if (design.nodeSets === undefined) return { design };
  const set = detail?.nodeSet;
  if (set === undefined || !Object.hasOwn(design.nodeSets, set)) return { design };
  return { design: { ...design, nodes: { [node]: memberEntry(design, set, node) } }, nodeSet: set };
}

/** One attempt of `applyNodePlan`; notes in `seen` what it saw of the node (its uid once read or written). */
async function applyPlan(deps: ApplyNodeDeps, input: ApplyNodeInput, seen: NodeSeen): Promise<RelabelNodeResult> {
  const { store, results, events } = deps;
  const { run, node, revision } = input;
  const { design, nodeSet, matchedSets, release } = await designOf(store, run, await deps.validDesign(revision), node);
  const plugins = await deps.nodePluginLabels(run, node);
  const wants = release ? releaseWants(design.policy) : nodeWants(design, node, plugins);
  if (!wants) throw ApplicationFailure.nonRetryable(`node ${node} is not in the design of revision ${revision}`, FailureType.NodeNotInDesign);
  const bulkObserved = Context.current().info.attempt === 1 ? ((await store.runs.observedState(run, node)) as Omit<NodeState, 'name'> | null) : null;
  // The record names the site and the set the node is written as (a release removes it).
  const applied: AppliedRun | null = release ? null : { revision, run, site: design.site, ...(nodeSet !== undefined ? { set: nodeSet } : {}) };
  const outcome = await reconcileNodeLabels(
    {
      desired: wants.labels,
      desiredAnnotations: wants.annotations,
      desiredTaints: wants.taints,
      policy: wants.policy,
      maxAttempts: MAX_CONFLICT_ATTEMPTS,
      liftTaint: taintLiftOf(design.policy),
      applied,
    },
    nodeSteps(deps.nodes, node, bulkObserved, seen),
  );
  if (outcome.status === 'conflicts') {
    throw ApplicationFailure.nonRetryable(
      `node ${node} kept changing under relabel: ${MAX_CONFLICT_ATTEMPTS} conflicting writes in a row`,
      FailureType.TooManyConflicts,
    );
  }
  if (outcome.status === 'unverified') {
    const r = outcome.remaining;
    throw ApplicationFailure.nonRetryable(
      `node ${node} is not as desired after the patch: ${Object.keys(r.set).length} to set, ${r.remove.length} to remove` +
        `${outcome.taintLeft ? ` (join taint ${joinTaintKeyOf(design.policy)} still present)` : ''}`,
      FailureType.VerificationFailed,
    );
  }
  const { plan, written, attempts, taintLifted } = outcome;
  const { lastRead } = seen;
  if (!written && lastRead && applied !== null && isAppliedBy(lastRead.annotations, applied)) {
    return recoverWritten(deps, { applied, node, design, bulkObserved, plan, attempts, plugins, uid: seen.uid, ...(matchedSets ? { matchedSets } : {}) });
  }
  const detail = {
    ...planDetail(plan, lastRead ?? { labels: {} }, taintLifted),
    attempts,
    ...conflictDetail(wants.conflicts),
    ...(nodeSet !== undefined ? { nodeSet } : {}),
    ...(matchedSets ? { matchedSets } : {}),
  };
  await results.record(run, { node, status: 'success', written, detail, observed: null });
  logApplied(input, written, planCounts(plan));
  if (written) events?.applied({ run, revision, node, ...(seen.uid ? { uid: seen.uid } : {}), plan });
  return { node, written, counts: planCounts(plan), taintLifted, attempts };
}

/** Builds the `applyNodePlan` activity over `deps`. */
export function createApplyNodeActivities(deps: ApplyNodeDeps) {
  const { events } = deps;
  return {
    /**
     * Applies a node's plan: starting from the state the bulk plan observed
     * (a retried attempt reads afresh), one patch carrying label changes,
     * the ownership record and the applied-run record (this run, this
     * revision) together, guarded by what the plan read (see
     * `guardedPatch`): a write by anyone else to anything else lands beside
     * it; a concurrent change to a key the plan read makes it wait
     * (jittered), re-read and re-plan, never overwrite. Verifies the stored
     * result, records it in the store, and only then returns. A node left
     * with nothing to change that carries this run's applied-run record was
     * written by an earlier attempt whose completion was lost, and counts as
     * written (see `recoverWritten`). Non-retryable NodeNotInDesign,
     * NodeNotFound, Forbidden, Invalid, TooManyConflicts, VerificationFailed;
     * transient errors retry. A written node gets a LabelsApplied Event, a
     * node that exists and fails non-retryably a RelabelFailed Event (see
     * `node-events.ts`: bounded per run, never waited for, never failing
     * the node).
     */
    async applyNodePlan(input: ApplyNodeInput): Promise<RelabelNodeResult> {
      const seen: NodeSeen = {};
      try {
        return await applyPlan(deps, input, seen);
      } catch (err) {
        // A node relabel saw (so it exists) and gave up on gets a RelabelFailed Event; a transient error retries, with none.
        if (events && seen.uid !== undefined && err instanceof ApplicationFailure && err.nonRetryable && err.type !== FailureType.NodeNotFound) {
          events.failed({ ...input, uid: seen.uid, error: { type: err.type ?? 'Error', message: err.message } });
        }
        throw err;
      }
    },
  };
}
