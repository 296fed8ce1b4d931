/**
 * What the `updateLabels` workflow tells operators about a run: metrics
 * through the Temporal SDK's workflow meter and log lines through its
 * workflow logger (per run; a node's line comes from its activity). Both are replay-safe: the SDK emits neither while a
 * workflow replays, so a worker that restarts, or evicts a run from its
 * cache, neither counts nor logs it twice, and neither adds to the history.
 *
 * Each node's final outcome is counted once (never an attempt that was
 * retried); the counters come out of the worker's `/metrics` beside the
 * SDK's own, with the tags `namespace`, `task_queue` and `workflow_type`
 * the SDK adds. Log lines carry `run`, `revision` and, per node, `node`.
 */
import { log, metricMeter } from '@temporalio/workflow';
import type { RunPlan } from '../activities/plan-run.ts';
import type { NodeFailure, UpdateLabelsResult } from '../contracts/messages.ts';

/** Names of the metrics counted here, as Prometheus shows them. */
export const RunMetric = {
  nodesWritten: 'relabel_nodes_written_total',
  nodesUnchanged: 'relabel_nodes_unchanged_total',
  nodesFailed: 'relabel_nodes_failed_total',
  runs: 'relabel_runs_total',
} as const;

/** The reporter of one run; a dry run counts only itself, never its nodes. */
export interface RunTelemetry {
  /** The bulk plan's outcome: nodes already as desired, and nodes that failed in planning. */
  planned(plan: RunPlan): void;
  /** A child finished: its node was patched (`written`) or found as desired. */
  settled(written: boolean): void;
  /** A child failed. */
  failed(failure: NodeFailure): void;
  /** The run ended. */
  finished(result: UpdateLabelsResult): void;
}

/** The reporter of run `run` at `revision` on `site`. Made inside the workflow: the meter exists only there. */
export function runTelemetry(where: { run: number; revision: number; site: string; dryRun: boolean }): RunTelemetry {
  const { run, revision, site, dryRun } = where;
  const written = metricMeter.createCounter(RunMetric.nodesWritten, undefined, 'Nodes relabel patched');
  const unchanged = metricMeter.createCounter(RunMetric.nodesUnchanged, undefined, 'Nodes found as desired, not written');
  const failed = metricMeter.createCounter(RunMetric.nodesFailed, undefined, 'Nodes a run failed on, by failure type');
  const runs = metricMeter.createCounter(RunMetric.runs, undefined, 'Finished update runs, by status');
  const logFailure = (f: NodeFailure) => log.warn('node failed', { run, revision, site, node: f.node, failureType: f.error.type, reason: f.error.message });
  return {
    planned(plan) {
      if (!dryRun) {
        if (plan.counts.success > 0) unchanged.add(plan.counts.success, { site });
        // A plan recorded by an older worker has no failure types.
        for (const [type, count] of Object.entries(plan.failureTypes ?? {})) failed.add(count, { site, failure_type: type });
      }
      // A capped sample of the plan's failures (the store has them all).
      plan.failures.forEach(logFailure);
      log.info('run planned', {
        run,
        revision,
        site,
        dryRun,
        total: plan.counts.total,
        unchanged: plan.counts.success,
        failed: plan.counts.failure,
        toChange: plan.toChange,
      });
    },
    settled(isWritten) {
      // Counted only: the node's own line comes from its activity ('node relabelled', or at debug
      // 'node already as desired'), so a line here too would cross from the workflow sandbox once more per node.
      if (!dryRun) (isWritten ? written : unchanged).add(1, { site });
    },
    failed(f) {
      if (!dryRun) failed.add(1, { site, failure_type: f.error.type });
      logFailure(f);
    },
    finished(result) {
      runs.add(1, { site, status: result.status, dry_run: String(dryRun) });
      const { total, success, failure, written: writes } = result.counts;
      log.info('run finished', { run, revision, site, dryRun, status: result.status, total, success, failure, written: writes });
    },
  };
}
