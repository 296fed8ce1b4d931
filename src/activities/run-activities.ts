/**
 * The bookkeeping activities of `updateLabels`: resolve the revision,
 * register a run started without the facade, plan it in bulk, page through
 * its pending nodes, record failures, its outcome and a stop. None writes
 * a node; each is idempotent.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi } from '../kube/nodes.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import { runnableRevision } from '../store/revisions/revision-checks.ts';
import type { Store } from '../store/store.ts';
import type { RunOutcome } from '../store/runs/run-store.ts';
import type { NodeFailure } from '../contracts/messages.ts';
import type { NodeEvents } from './node-events.ts';
import { planRun, type PluginLabelSource, type RunPlan } from './plan-run.ts';
import type { Rollout } from '../core/plan/waves.ts';
import type { WaveInfo } from '../contracts/messages.ts';
import { checkWaveHealth, planWaves, waveInfo, type HealthOutcome, type PlannedWaves } from './wave-activities.ts';

/** What the run activities need. */
export interface RunActivityDeps {
  nodes: NodeApi;
  store: Store;
  /** Kubernetes Events about target nodes the plan fails on; none recorded when absent. */
  events?: NodeEvents;
  /** Read-only lists of DaemonSets, pods and budgets: with them, a dry run weighs its workload impact. */
  workloads?: WorkloadApi;
  /** The revision's design; DocumentValidationFailed when its documents are invalid. */
  validDesign(revision: number): Promise<Design>;
  /** The plugin set the run applies, pinned at its first plan (0: none). */
  pinnedPluginSet(run: number, site: string): Promise<number>;
}

/** Builds the run activities over `deps`. */
export function createRunActivities(deps: RunActivityDeps) {
  const { nodes, store, events, workloads, validDesign, pinnedPluginSet } = deps;
  return {
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
      const run = await store.runs.create(input);
      const execution = Context.current().info.workflowExecution;
      if (execution) await store.actions.setExecution(run.id, execution.runId);
      return { run: run.id };
    },

    /**
     * Validates the revision's documents (all-or-nothing; DocumentValidationFailed
     * lists every error), then plans every target of the run in bulk and
     * records the outcomes (see `planRun`). Heartbeats after each batch.
     * Writes no node. Refuses a run the mass-removal brake stops
     * (MassRemovalRefused) unless `allowMassRemoval`. A dry run with
     * workload access also weighs its workload impact (see `assessImpact`).
     */
    async planRun(input: {
      run: number;
      revision: number;
      dryRun: boolean;
      allowMassRemoval?: boolean;
      rollout?: Rollout;
      nodeSets?: string[];
      release?: boolean;
    }): Promise<RunPlan & { waves?: PlannedWaves }> {
      const context = Context.current();
      context.heartbeat({ planned: 0 });
      const design = await validDesign(input.revision);
      const set = await pinnedPluginSet(input.run, design.site);
      const plugins: PluginLabelSource | undefined = set === 0 ? undefined : { set, lookup: (names) => store.plugins.labels(set, names) };
      const extra = { ...(events ? { events } : {}), ...(plugins ? { plugins } : {}), ...(workloads ? { workloads } : {}) };
      const { rollout, ...rest } = input;
      const plan = await planRun({ nodes, store: store.runs, ...extra, progress: (planned) => context.heartbeat({ planned }) }, { ...rest, design });
      // A run in waves (its own rollout, or the policy's): the changed nodes split into waves, recorded with the run.
      const waves = input.dryRun || input.release === true ? undefined : await planWaves(store.runs, input.run, design, rollout);
      return waves ? { ...plan, waves } : plan;
    },

    /** The next page of a run's pending nodes after sequence number `afterSeq`, in target order (of one wave, when given). */
    async pendingNodes(input: { run: number; afterSeq: number; limit: number; wave?: number }): Promise<{ seq: number; node: string }[]> {
      const rows = await store.runs.nodes(input.run, {
        status: 'pending',
        afterSeq: input.afterSeq,
        limit: input.limit,
        ...(input.wave !== undefined ? { wave: input.wave } : {}),
      });
      return rows.map(({ seq, node }) => ({ seq, node }));
    },

    /** Wave `wave` of a run in waves: its name and size (null: no such wave). */
    async waveInfo(input: { run: number; wave: number }): Promise<WaveInfo | null> {
      return waveInfo(store.runs, input.run, input.wave);
    },

    /**
     * The health gate after a wave: polls until its DaemonSet pods are as
     * they should be, or `timeoutSeconds` after the gate was first scheduled
     * (a retried attempt keeps the first one's deadline).
     */
    async checkWaveHealth(input: { run: number; wave: number; timeoutSeconds: number }): Promise<HealthOutcome> {
      const deadline = Context.current().info.scheduledTimestampMs + input.timeoutSeconds * 1000;
      return checkWaveHealth({ store: store.runs, nodes, ...(workloads ? { workloads } : {}) }, { run: input.run, wave: input.wave, deadline });
    },

    /**
     * Settles the nodes an aborted run never started: every node still
     * queued or pending becomes `cancelled` (NotStarted), saying after which
     * wave and by whom it was aborted. Idempotent.
     */
    async abortRunNodes(input: { run: number; after: string; by: string | null }): Promise<{ settled: number }> {
      const who = input.by === null ? '' : ` by ${input.by}`;
      const settled = await store.runs.cancelNodes(input.run, {
        error: { type: FailureType.NotStarted, message: `not started: the run was aborted${who} after ${input.after}; nothing was written to this node` },
      });
      return { settled };
    },

    /** Records how a run ended (its status, or `rejected`) with the run in the store. Idempotent. */
    async setRunOutcome(input: { run: number; outcome: RunOutcome }): Promise<void> {
      await store.runs.setOutcome(input.run, input.outcome);
    },

    /**
     * Settles a cancelled run: every node still queued or pending becomes
     * `cancelled` (NotStarted: this run wrote nothing to it), and the run's
     * outcome `cancelled`. Idempotent.
     */
    async settleCancelledRun(input: { run: number }): Promise<{ settled: number }> {
      const settled = await store.runs.cancelNodes(input.run, {
        error: { type: FailureType.NotStarted, message: 'not started: the run was cancelled before it reached this node; nothing was written to it' },
      });
      await store.runs.setOutcome(input.run, 'cancelled');
      return { settled };
    },

    /** Records failed nodes of a run with their reasons. Idempotent. */
    async recordFailures(input: { run: number; failures: NodeFailure[] }): Promise<void> {
      await store.runs.setNodeResults(
        input.run,
        input.failures.map((f) => ({ node: f.node, status: 'failure' as const, detail: { error: f.error }, observed: null })),
      );
    },
  };
}
