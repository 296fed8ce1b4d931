/**
 * The bulk planner of a release run (an update run started with
 * `release`): one LIST of the nodes, every target checked (in the
 * cluster, carrying this site's applied-run record, not held by the latest
 * design) and planned to want nothing (see `core/plan/release.ts`), under
 * the removal brake. Any target that may not be released refuses the whole
 * run before a child starts: nothing is written on bad input.
 */
import { ApplicationFailure } from '@temporalio/common';
import { readAppliedRun } from '../core/plan/applied-run.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { membershipOf } from '../core/plan/node-sets.ts';
import { planNode } from '../core/plan/node-plan.ts';
import { ownedLabelsPresent, releaseRefusal, releaseWants, type DesignHold } from '../core/plan/release.ts';
import { removalRefusal } from '../core/plan/removal-brake.ts';
import { mapNodeError } from '../kube/errors.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { RunStore } from '../store/runs/run-store.ts';
import { PAGE_SIZE, PlanState, refuse, type PlanRunInput, type RunPlan } from './plan-state.ts';

/** What a release's plan does with the world: the nodes, the run's rows, and heartbeats (a part of the planner's `PlanDeps`). */
export interface ReleaseDeps {
  nodes: NodeApi;
  store: RunStore;
  progress?(planned: number): void;
}

/** What planning a release found: the planner's {@link RunPlan} without what a release has none of (sets, impact), its plugin set always said (0). */
export type ReleasePlan = Omit<RunPlan, 'impact' | 'nodeSets' | 'pluginSet' | 'pluginConflictNodes'> &
  Required<Pick<RunPlan, 'pluginSet' | 'pluginConflictNodes'>>;

/** Nodes per LIST page of a release's plan. */
const RELEASE_LIST_PAGE = 1000;

/** Most refusals a rejected release names. */
const MAX_NAMED_REFUSALS = 10;

/** The cluster as a release sees it: its targets' states, and what the removal brake weighs. */
interface ReleaseView {
  found: Map<string, NodeState>;
  /** Whether some node carries another site's record (a record without a site is then nobody's). */
  mixed: boolean;
  /** Owned labels present on nodes with a record of the site, and on nodes with a site-less record. */
  owned: { site: number; siteless: number };
}

async function viewCluster(deps: ReleaseDeps, site: string, targets: ReadonlySet<string>): Promise<ReleaseView> {
  const view: ReleaseView = { found: new Map(), mixed: false, owned: { site: 0, siteless: 0 } };
  try {
    for await (const page of deps.nodes.listNodes({ pageSize: RELEASE_LIST_PAGE })) {
      for (const node of page) {
        if (targets.has(node.name)) view.found.set(node.name, node);
        const record = readAppliedRun(node.annotations);
        if (record === null) continue;
        if (record.site === undefined) view.owned.siteless += ownedLabelsPresent(node);
        else if (record.site === site) view.owned.site += ownedLabelsPresent(node);
        else view.mixed = true;
      }
    }
  } catch (err) {
    throw mapNodeError(err, '(all)', 'list');
  }
  return view;
}

function holdOf(input: PlanRunInput, node: NodeState): DesignHold {
  const membership = membershipOf(input.design, node);
  return membership.kind === 'named' ? { kind: 'named' } : membership;
}

/** Every target of the run, in target order. */
async function targetsOf(deps: ReleaseDeps, run: number): Promise<string[]> {
  const names: string[] = [];
  for (let afterSeq = -1; ;) {
    const rows = await deps.store.nodes(run, { afterSeq, limit: 5000 });
    names.push(...rows.map((row) => row.node));
    if (rows.length < 5000) return names;
    afterSeq = rows.at(-1)?.seq ?? afterSeq;
  }
}

/**
 * Plans the release of every target of `input.run` and records each
 * outcome: pending (something to take back; the row's detail says
 * `release`, which its apply reads) or success (nothing left to take
 * back). Rejects the run (InvalidTargets, non-retryable; every target
 * recorded as failed, nothing written) when any target may not be
 * released, naming the first few and why. The removal brake: the owned
 * labels the release removes are weighed against every owned label on the
 * site's nodes (those carrying its records, the targets among them), and a
 * release over the policy's `max_removal_fraction` is refused
 * (MassRemovalRefused) unless `allowMassRemoval`. Writes no node.
 */
export async function planRelease(deps: ReleaseDeps, input: PlanRunInput): Promise<ReleasePlan> {
  const { design, run, dryRun } = input;
  const site = design.site;
  const state = new PlanState(deps, input);
  const targets = await targetsOf(deps, run);
  state.counts.total = targets.length;
  const view = await viewCluster(deps, site, new Set(targets));
  const siteless = !view.mixed;
  const refusals = new Map<string, string>();
  // Never lifts the join taint: a release touches nothing relabel's records do not list.
  const planned = { ...design, policy: { ...design.policy, liftUninitializedTaint: false } };
  const wants = releaseWants(planned.policy);
  for (const node of targets) {
    const observed = view.found.get(node) ?? null;
    const refusal = releaseRefusal({ node, observed, site, siteless, hold: observed ? holdOf(input, observed) : { kind: 'none' }, revision: input.revision });
    if (refusal !== null || observed === null) {
      refusals.set(node, refusal ?? `node ${node} is not in the cluster`);
      continue;
    }
    const result = planNode(planned, observed, dryRun, wants, state.tally);
    await state.settle({ ...result, detail: { ...(result.detail ?? {}), release: true } });
  }
  if (refusals.size > 0) {
    await state.write(true);
    const error = { type: FailureType.InvalidTargets, message: `not written: release run ${run} was refused (${refusals.size} target(s) may not be released)` };
    for (const [i, node] of targets.entries()) {
      const why = refusals.get(node);
      await state.settle({ node, status: 'failure', detail: { error: why ? { ...error, message: `${why}; nothing was written` } : error }, observed: null });
      if (i % PAGE_SIZE === PAGE_SIZE - 1) await state.write(true);
    }
    await state.write(true);
    const listed = [...refusals.values()];
    const named = listed.slice(0, MAX_NAMED_REFUSALS).join('; ');
    const more = listed.length > MAX_NAMED_REFUSALS ? `; and ${listed.length - MAX_NAMED_REFUSALS} more` : '';
    throw ApplicationFailure.create({
      type: FailureType.InvalidTargets,
      message: `release run ${run} refused, nothing written: ${named}${more}`,
      nonRetryable: true,
    });
  }
  await state.write(true);
  const weighed = state.tally.result();
  // The brake weighs the site's owned labels, not only the targets' (a release removes all of theirs).
  const owned = view.owned.site + (siteless ? view.owned.siteless : 0);
  const removal = { ...weighed, owned, exceeded: weighed.removed > 0 && weighed.removed > weighed.maxFraction * owned };
  if (!dryRun && input.allowMassRemoval !== true && removal.exceeded) await refuse(deps.store, run, removalRefusal(removal, run), removal);
  return {
    site,
    defaultConcurrency: design.policy.defaultConcurrency,
    counts: state.counts,
    toChange: state.toChange,
    failures: state.failures,
    failureTypes: state.failureTypes,
    removal,
    pluginSet: 0,
    pluginConflictNodes: 0,
  };
}
