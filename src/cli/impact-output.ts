/**
 * A plan's workload impact for people: one summary line, the DaemonSets
 * gaining or losing pods with a few of their nodes, and the workloads whose
 * pods a NoExecute taint evicts or a selector change strands, with their
 * PodDisruptionBudgets. `-o json` has the whole bounded sample.
 */
import type { PlanImpact, Sampled } from '../core/plan/workload-impact.ts';
import { table } from './output.ts';

/** Names one cell shows at most. */
const NAMES_SHOWN = 3;

function namesCell(names: readonly string[], count: number): string {
  const shown = names.slice(0, NAMES_SHOWN);
  return `${shown.join(', ') || '-'}${count > shown.length ? ` (+${count - shown.length})` : ''}`;
}

function podsCell(s: Sampled<{ pod: string; afterSeconds?: number }>): string {
  const names = s.sample.map((p) => (p.afterSeconds ? `${p.pod} (after ${p.afterSeconds} s)` : p.pod));
  return namesCell(names, s.count);
}

/** The impact section of `relabel plan`'s text. */
export function impactText(impact: PlanImpact): string {
  if ('unavailable' in impact) return `workload impact not weighed: ${impact.unavailable}`;
  const t = impact.totals;
  const parts = [
    `workload impact on ${t.nodesChanged} node(s) whose labels or taints change: ` +
      `DaemonSet pods +${t.podsGained} -${t.podsLost} (${t.daemonSets} DaemonSet(s)); ` +
      `${t.podsEvicted} pod(s) evicted by NoExecute taints; ${t.podsStranded} pod(s) no longer matching their node selector or affinity; ` +
      `${t.disruptionBudgets} PodDisruptionBudget(s) concerned`,
  ];
  if (impact.daemonSets.length > 0) {
    const rows = impact.daemonSets.map((d) => [
      `${d.namespace}/${d.name}`,
      String(d.gains.count),
      String(d.loses.count),
      namesCell(d.gains.sample, d.gains.count),
      namesCell(d.loses.sample, d.loses.count),
    ]);
    parts.push(
      table(['DAEMONSET', 'GAINS', 'LOSES', 'GAINED ON', 'LOST ON'], rows) +
        (impact.moreDaemonSets > 0 ? `\n(and ${impact.moreDaemonSets} more DaemonSets)` : ''),
    );
  }
  if (impact.workloads.length > 0) {
    const rows = impact.workloads.map((w) => [
      `${w.namespace}/${w.workload}`,
      String(w.evicted.count),
      String(w.stranded.count),
      podsCell(w.evicted),
      podsCell(w.stranded),
      w.disruptionBudgets.join(', ') || '-',
    ]);
    parts.push(
      table(['WORKLOAD', 'EVICTED', 'STRANDED', 'EVICTED PODS', 'STRANDED PODS', 'BUDGETS'], rows) +
        (impact.moreWorkloads > 0 ? `\n(and ${impact.moreWorkloads} more workloads)` : ''),
    );
  }
  return parts.join('\n');
}
