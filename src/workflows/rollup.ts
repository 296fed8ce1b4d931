/**
 * Pure roll-up of a run's counts into its status, and the one-screen
 * summary shown in the Temporal UI. No rollback is implied anywhere: a
 * partial update is reported as such.
 */
import { FAILURE_SAMPLE_LIMIT, RunStatus, type NodeFailure, type UpdateLabelsResult } from '../contracts/messages.ts';

/** `success` when every node succeeded, `failure` when none did, else `partial_success`. */
export function runStatus(success: number, failure: number): RunStatus {
  if (failure === 0) return RunStatus.success;
  if (success === 0) return RunStatus.failure;
  return RunStatus.partialSuccess;
}

/** Adds `failure` to `sample` unless the sample is full (the store keeps every failure). */
export function sampleFailure(sample: NodeFailure[], failure: NodeFailure): void {
  if (sample.length < FAILURE_SAMPLE_LIMIT) sample.push(failure);
}

/** Markdown shown as the run's current details once it is done. */
export function summaryMarkdown(result: UpdateLabelsResult, maxFailures = 20): string {
  const c = result.counts;
  const lines = [
    `**${result.status}**${result.dryRun ? ' (dry run)' : ''}: run ${result.run}, revision ${result.revision} of site ${result.site}, ` +
      `${c.success}/${c.total} nodes ok, ${c.written} written, ${c.failure} failed.`,
  ];
  if (result.aborted) {
    const a = result.aborted;
    lines.push(`Aborted${a.by ? ` by ${a.by}` : ''} after wave ${a.wave + 1} of ${result.waves ?? '?'}: ${a.notStarted} node(s) not started.`);
  } else if (result.waves) lines.push(`Rolled out in ${result.waves} waves.`);
  for (const f of result.failures.slice(0, maxFailures)) lines.push(`- ${f.node}: ${f.error.type}: ${f.error.message}`);
  if (c.failure > Math.min(maxFailures, result.failures.length)) {
    lines.push(`- … and ${c.failure - Math.min(maxFailures, result.failures.length)} more (relabel status shows every node)`);
  }
  const impact = result.impact;
  if (impact && 'unavailable' in impact) lines.push(`Workload impact not weighed: ${impact.unavailable}`);
  else if (impact) {
    const t = impact.totals;
    lines.push(
      `Workload impact on ${t.nodesChanged} changed nodes: DaemonSet pods +${t.podsGained} -${t.podsLost} (${t.daemonSets} DaemonSets), ` +
        `${t.podsEvicted} pods evicted, ${t.podsStranded} stranded, ${t.disruptionBudgets} PodDisruptionBudgets (relabel plan lists them).`,
    );
  }
  return lines.join('\n');
}
