/**
 * Pure roll-up of per-node outcomes into a run result, and its one-screen
 * summary for the Temporal UI. No rollback is implied anywhere: a partial
 * update is reported as such.
 */
import { RunStatus, type CarriedProgress, type NodeOutcome, type UpdateLabelsResult } from './messages.ts';

/** `success` when every node succeeded, `failure` when none did, else `partial_success`. */
export function runStatus(success: number, failure: number): RunStatus {
  if (failure === 0) return RunStatus.success;
  if (success === 0) return RunStatus.failure;
  return RunStatus.partialSuccess;
}

/** The run result, nodes in target order. */
export function rollUp(args: {
  run: CarriedProgress;
  outcomes: ReadonlyMap<string, NodeOutcome>;
  dryRun: boolean;
  retryOf?: { workflowId: string; runId: string };
}): UpdateLabelsResult {
  const nodes = args.run.targets.flatMap((t) => args.outcomes.get(t) ?? []);
  const failure = nodes.filter((n) => n.status === 'failure').length;
  const success = nodes.length - failure;
  return {
    status: runStatus(success, failure),
    revision: args.run.revision,
    site: args.run.site,
    dryRun: args.dryRun,
    counts: { total: nodes.length, success, failure, written: nodes.filter((n) => n.written).length },
    nodes,
    ...(args.retryOf ? { retryOf: args.retryOf } : {}),
  };
}

/** Markdown shown as the run's current details once it is done. */
export function summaryMarkdown(result: UpdateLabelsResult, maxFailures = 20): string {
  const lines = [
    `**${result.status}**${result.dryRun ? ' (dry run)' : ''}: revision ${result.revision} of site ${result.site}, ` +
      `${result.counts.success}/${result.counts.total} nodes ok, ${result.counts.written} written, ${result.counts.failure} failed.`,
  ];
  const failed = result.nodes.filter((n) => n.status === 'failure');
  for (const n of failed.slice(0, maxFailures)) lines.push(`- ${n.node}: ${n.error?.type}: ${n.error?.message}`);
  if (failed.length > maxFailures) lines.push(`- … and ${failed.length - maxFailures} more (query nodeResults)`);
  return lines.join('\n');
}
