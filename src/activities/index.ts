/**
 * relabel's activities: the workflows' only way to the revision store and
 * the Kubernetes API. Built by {@link createActivities} from injected
 * clients; workflows import the resulting type only.
 */
import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { isAppliedBy, type AppliedRun } from '../core/plan/applied-run.ts';
import type { LabelPlan } from '../core/plan/label-plan.ts';
import { liftsTaint, nodePatch, reconcileNodeLabels, STALE } from '../core/plan/node-reconcile.ts';
import type { Design } from '../core/site/validate-site.ts';
import { isStaleWrite, mapNodeError } from '../kube/errors.ts';
import { conflictBackoff } from '../kube/conflict-backoff.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import { runnableRevision } from '../store/revision-checks.ts';
import type { RevisionStore } from '../store/revision-store.ts';
import type { NodeResultDetail, RunOutcome } from '../store/run-store.ts';
import type { NodeFailure, RelabelNodeResult } from '../workflows/messages.ts';
import { createDesignCache, type DesignCache } from '../store/design-cache.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import { documentValidationFailure } from './document-failure.ts';
import { createRunPluginLabels } from './run-plugin-labels.ts';
import { conflictDetail, planDetail, planOf, planRun, type PluginLabelSource, type RunPlan } from './plan-run.ts';
import { pollSite, preparePluginChangeRun, type PluginChangeRun } from './plugins.ts';
import type { PollResult } from '../workflows/plugin-messages.ts';
import { createResultWriter, type ResultWriter } from './result-writer.ts';
import { createDriftActivities, type RunStarter } from './drift-activities.ts';
import type { NodeEvents } from './node-events.ts';

export type { RunStarter } from './drift-activities.ts';

/** How many times a node is read and planned when a write meets a change to what the plan read. */
export const MAX_CONFLICT_ATTEMPTS = 5;

/** One log line per node applied: `info` when it was written, `debug` when it was already as desired. */
function logApplied(where: { run: number; node: string; revision: number }, written: boolean, counts: RelabelNodeResult['counts']): void {
  if (written) log.info('node relabelled', { ...where, ...counts });
  else log.debug('node already as desired', where);
}

/** Injected clients. */
export interface ActivityDeps {
  nodes: NodeApi;
  store: RevisionStore;
  designs?: DesignCache;
  results?: ResultWriter;
  /** Starts heal runs for drift detection (the facade's start); without it, healing fails. */
  startRun?: RunStarter;
  /** Kubernetes Events about the nodes runs write or fail on; none recorded when absent. */
  events?: NodeEvents;
  /** Read-only lists of DaemonSets, pods and budgets; dry runs weigh their workload impact with them (none when absent). */
  workloads?: WorkloadApi;
}

/** Builds the activities over the given clients. */
export function createActivities(deps: ActivityDeps) {
  const { nodes, store, events, workloads } = deps;
  const designs = deps.designs ?? createDesignCache(store);
  const results = deps.results ?? createResultWriter(store);
  const { pinnedPluginSet, nodePluginLabels } = createRunPluginLabels(store);

  async function validDesign(revision: number) {
    const result = await designs.get(revision);
    if (!result.ok) throw documentValidationFailure(revision, result.errors);
    return result.design;
  }

  async function readNode(node: string): Promise<NodeState> {
    try {
      return await nodes.readNode(node);
    } catch (err) {
      throw mapNodeError(err, node, 'read');
    }
  }

  /** What a plan changes, counted. */
  function planCounts(plan: LabelPlan): RelabelNodeResult['counts'] {
    const annotations = plan.annotations ? Object.keys(plan.annotations.set).length + plan.annotations.remove.length : 0;
    const taints = plan.taints ? plan.taints.add.length + plan.taints.remove.length : 0;
    const counts = { set: Object.keys(plan.set).length, removed: plan.remove.length, adopted: plan.adopt.length, unchanged: plan.unchanged.length };
    return { ...counts, ...(annotations > 0 ? { annotations } : {}), ...(taints > 0 ? { taints } : {}) };
  }

  /**
   * Settles a node an earlier attempt of this run wrote, though that
   * attempt's completion was lost: the node carries this run's applied-run
   * record and nothing is left to change. Counted as written, with the
   * detail re-planned from the state the bulk plan observed (what the
   * writing attempt started from); when that state is gone, the writing
   * attempt recorded its result already and that record stays as it is.
   */
  async function recoverWritten(
    applied: AppliedRun,
    node: string,
    design: Design,
    bulkObserved: Omit<NodeState, 'name'> | null,
    now: LabelPlan,
    attempts: number,
    plugins: readonly PluginEntry[],
    uid: string | undefined,
  ): Promise<RelabelNodeResult> {
    const { run } = applied;
    const observed = bulkObserved ?? ((await store.observedState(run, node)) as Omit<NodeState, 'name'> | null);
    if (observed === null) {
      const row = await store.runNode(run, node);
      const d = row?.status === 'success' && row.written ? row.detail : null;
      if (d) {
        const annotations = (d.annotations?.set.length ?? 0) + (d.annotations?.removed.length ?? 0);
        const taints = (d.taints?.added.length ?? 0) + (d.taints?.removed.length ?? 0);
        const counts = {
          set: Object.keys(d.set ?? {}).length,
          removed: d.removed?.length ?? 0,
          adopted: d.adopted?.length ?? 0,
          unchanged: d.unchanged ?? 0,
          ...(annotations > 0 ? { annotations } : {}),
          ...(taints > 0 ? { taints } : {}),
        };
        // The writing attempt recorded this result, and its Event with it.
        return { node, written: true, counts, taintLifted: d.taintLifted === true, attempts: d.attempts ?? attempts };
      }
    }
    const plan = observed ? planOf(design, observed, node, plugins) : now;
    const taintLifted = observed !== null && nodePatch(plan, observed, design.policy.liftUninitializedTaint) !== null && liftsTaint(observed, design.policy.liftUninitializedTaint);
    const detail: NodeResultDetail = { ...planDetail(plan, observed ?? { labels: {} }, taintLifted), attempts, recovered: true };
    await results.record(run, { node, status: 'success', written: true, detail, observed: null });
    events?.applied({ run, revision: applied.revision, node, ...(uid ? { uid } : {}), plan });
    return { node, written: true, counts: planCounts(plan), taintLifted, attempts };
  }

  return {
    ...createDriftActivities({ nodes, store, designs, validDesign, startRun: deps.startRun }),

    /**
     * Resolves the revision a run applies: `revision` when given (it must
     * exist), else the latest committed one. Rejects with NoCommittedRevision,
     * RevisionNotFound or NoSiteActionRevision (no revision ever took part in
     * a site action). Reads only.
     */
    async resolveRevision(input: { revision?: number }): Promise<{ revision: number }> {
      const checked = await runnableRevision(store, input.revision);
      if (!checked.ok) throw ApplicationFailure.nonRetryable(checked.message, checked.type);
      return { revision: checked.revision };
    },

    /**
     * Records the targets of a run started without the facade (with who
     * started it and how, when known), and the execution that runs it, so
     * that its action id finds it; idempotent on `key`.
     */
    async registerRun(input: {
      key: string;
      workflowId: string;
      revision: number;
      dryRun: boolean;
      targets: string[];
      startedBy?: string;
      startedVia?: string;
    }): Promise<{ run: number }> {
      const run = await store.createRun(input);
      const execution = Context.current().info.workflowExecution;
      if (execution) await store.setRunExecution(run.id, execution.runId);
      return { run: run.id };
    },

    /**
     * Validates the revision's documents (all-or-nothing; DocumentValidationFailed
     * lists every error), then plans every target of the run in bulk and
     * records the outcomes (see `planRun`). Heartbeats after each batch.
     * Writes no node. Refuses a run the mass-removal brake stops
     * (MassRemovalRefused) unless `allowMassRemoval`.
     */
    async planRun(input: { run: number; revision: number; dryRun: boolean; allowMassRemoval?: boolean }): Promise<RunPlan> {
      const context = Context.current();
      context.heartbeat({ planned: 0 });
      const design = await validDesign(input.revision);
      const set = await pinnedPluginSet(input.run, design.site);
      const plugins: PluginLabelSource | undefined = set === 0 ? undefined : { set, lookup: (names) => store.pluginSetLabels(set, names) };
      const extra = { ...(events ? { events } : {}), ...(plugins ? { plugins } : {}), ...(workloads ? { workloads } : {}) };
      return planRun({ nodes, store, ...extra, progress: (planned) => context.heartbeat({ planned }) }, { ...input, design });
    },

    /**
     * Polls the site's label plugins (see `pollSite`): every plugin of the
     * latest revision read and checked whole, good output stored as a new
     * plugin set, each plugin's status recorded. Returns the set's id and
     * counts and one line per plugin; the labels stay in the store.
     */
    async pollSitePlugins(input: { site: string }): Promise<PollResult> {
      return pollSite({ store, designs, warn: (message, fields) => log.warn(message, fields) }, input);
    },

    /**
     * Records an update run for the nodes whose plugin labels differ between
     * plugin sets `previous` and `set` (see `preparePluginChangeRun`);
     * idempotent per set.
     */
    async pluginChangeRun(input: { site: string; set: number; previous: number }): Promise<PluginChangeRun> {
      return preparePluginChangeRun({ store, designs }, input);
    },

    /** Discards a run recorded for a plugin change whose workflow could not start. */
    async discardPluginRun(input: { run: number }): Promise<void> {
      await store.discardRun(input.run);
    },

    /** The next page of a run's pending nodes after sequence number `afterSeq`, in target order. */
    async pendingNodes(input: { run: number; afterSeq: number; limit: number }): Promise<{ seq: number; node: string }[]> {
      const rows = await store.runNodes(input.run, { status: 'pending', afterSeq: input.afterSeq, limit: input.limit });
      return rows.map(({ seq, node }) => ({ seq, node }));
    },

    /** Records how a run ended (its status, or `rejected`) with the run in the store. Idempotent. */
    async setRunOutcome(input: { run: number; outcome: RunOutcome }): Promise<void> {
      await store.setRunOutcome(input.run, input.outcome);
    },

    /**
     * Settles a cancelled run: every node still queued or pending becomes
     * `cancelled` (NotStarted: this run wrote nothing to it), and the run's
     * outcome `cancelled`. Idempotent.
     */
    async settleCancelledRun(input: { run: number }): Promise<{ settled: number }> {
      const settled = await store.cancelRunNodes(input.run, {
        error: { type: FailureType.NotStarted, message: 'not started: the run was cancelled before it reached this node; nothing was written to it' },
      });
      await store.setRunOutcome(input.run, 'cancelled');
      return { settled };
    },

    /** Records failed nodes of a run with their reasons. Idempotent. */
    async recordFailures(input: { run: number; failures: NodeFailure[] }): Promise<void> {
      await store.setNodeResults(
        input.run,
        input.failures.map((f) => ({ node: f.node, status: 'failure' as const, detail: { error: f.error }, observed: null })),
      );
    },

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
    async applyNodePlan(input: { run: number; node: string; revision: number }): Promise<RelabelNodeResult> {
      const seen: { uid?: string } = {};
      try {
        return await applyPlan(input, seen);
      } catch (err) {
        // A node relabel saw (so it exists) and gave up on gets a RelabelFailed Event; a transient error retries, with none.
        if (events && seen.uid !== undefined && err instanceof ApplicationFailure && err.nonRetryable && err.type !== FailureType.NodeNotFound) {
          events.failed({ ...input, uid: seen.uid, error: { type: err.type ?? 'Error', message: err.message } });
        }
        throw err;
      }
    },
  };

  /** One attempt of `applyNodePlan`; records in `seen` the uid of the node once it has been read or written. */
  async function applyPlan(input: { run: number; node: string; revision: number }, seen: { uid?: string }): Promise<RelabelNodeResult> {
    const { run, node, revision } = input;
    const design = await validDesign(revision);
    const plugins = await nodePluginLabels(run, node);
    const wants = nodeWants(design, node, plugins);
    if (!wants) throw ApplicationFailure.nonRetryable(`node ${node} is not in the design of revision ${revision}`, FailureType.NodeNotInDesign);
    const bulkObserved = Context.current().info.attempt === 1 ? ((await store.observedState(run, node)) as Omit<NodeState, 'name'> | null) : null;
    let observed = bulkObserved;
    // The state the final plan was made from: its values of the keys set are what they were.
    let lastRead: Pick<NodeState, 'labels' | 'annotations'> | undefined;
    const applied: AppliedRun = { revision, run };
    const outcome = await reconcileNodeLabels(
      {
        desired: wants.labels,
        desiredAnnotations: wants.annotations,
        desiredTaints: wants.taints,
        policy: wants.policy,
        maxAttempts: MAX_CONFLICT_ATTEMPTS,
        liftTaint: design.policy.liftUninitializedTaint,
        applied,
      },
      {
        async read() {
          const first = observed;
          observed = null;
          const state = first ?? (await readNode(node));
          lastRead = state;
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
      },
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
          `${outcome.taintLeft ? ' (uninitialized taint still present)' : ''}`,
        FailureType.VerificationFailed,
      );
    }
    const { plan, written, attempts, taintLifted } = outcome;
    if (!written && lastRead && isAppliedBy(lastRead.annotations, applied)) return recoverWritten(applied, node, design, bulkObserved, plan, attempts, plugins, seen.uid);
    const detail = { ...planDetail(plan, lastRead ?? { labels: {} }, taintLifted), attempts, ...conflictDetail(wants.conflicts) };
    await results.record(run, { node, status: 'success', written, detail, observed: null });
    logApplied(input, written, planCounts(plan));
    if (written) events?.applied({ run, revision, node, ...(seen.uid ? { uid: seen.uid } : {}), plan });
    return { node, written, counts: planCounts(plan), taintLifted, attempts };
  }
}

/** The activities' type, for `proxyActivities<Activities>()` in workflows. */
export type Activities = ReturnType<typeof createActivities>;
