/**
 * Counts read from the local Temporal server's own Prometheus /metrics, for
 * the benchmark's account of where the server's time goes: its database
 * operations and how its workflow tasks reached a worker.
 */
import { samples } from './prometheus.ts';

/** The counters the benchmark reads, summed over their label sets. */
export interface TemporalCounts {
  /** Database operations of the history, matching and frontend services (`persistence_requests`), by operation. */
  persistence: Record<string, number>;
  /** The same operations by the service that made them (its `service_name` label). */
  persistenceByService: Record<string, number>;
  /** Visibility store writes and reads (`visibility_persistence_requests`: apart from the operations above), by operation. */
  visibility: Record<string, number>;
  /** Workflow tasks handed to a worker on the task queue `taskQueue`, and of those, the ones matched to a waiting poll without being stored. */
  workflowTasks: { polled: number; syncMatched: number };
}

/** Reads the counters from the server's metrics at `metricsUrl` (http://host:port/metrics). */
export async function temporalCounts(metricsUrl: string, taskQueue: string): Promise<TemporalCounts> {
  const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${metricsUrl} answered ${res.status}`);
  const counts: TemporalCounts = { persistence: {}, persistenceByService: {}, visibility: {}, workflowTasks: { polled: 0, syncMatched: 0 } };
  const add = (to: Record<string, number>, key: string | undefined, value: number) => (to[key ?? '?'] = (to[key ?? '?'] ?? 0) + value);
  // Metric names carry the queue's name with '-' as '_'.
  const queue = taskQueue.replace(/-/g, '_');
  for (const { name, labels, value } of samples(await res.text())) {
    if (name === 'persistence_requests') {
      add(counts.persistence, labels.operation, value);
      add(counts.persistenceByService, labels.service_name, value);
    } else if (name === 'visibility_persistence_requests') {
      add(counts.visibility, labels.operation, value);
    } else if ((name === 'poll_success' || name === 'poll_success_sync') && labels.task_type === 'Workflow' && labels.taskqueue === queue) {
      if (name === 'poll_success') counts.workflowTasks.polled += value;
      else counts.workflowTasks.syncMatched += value;
    }
  }
  return counts;
}

/** The growth of each counter of `after` over `before`, largest first, those that grew only. */
function grown(before: Record<string, number>, after: Record<string, number>): [string, number][] {
  return Object.entries(after)
    .map(([k, n]): [string, number] => [k, n - (before[k] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/**
 * What happened between two readings, per changed node: database operations
 * (the largest few by name, and by service), visibility operations (by
 * name), and the share of workflow tasks matched without being stored.
 * Nothing when no node changed.
 */
export function temporalFigures(before: TemporalCounts, after: TemporalCounts, changedNodes: number, top = 6): Record<string, unknown> {
  if (changedNodes === 0) return {};
  const per = (n: number) => +(n / changedNodes).toFixed(2);
  const ops = grown(before.persistence, after.persistence);
  const visibility = grown(before.visibility, after.visibility);
  const each = (entries: [string, number][]) => Object.fromEntries(entries.slice(0, top).map(([k, n]) => [k, per(n)]));
  const polled = after.workflowTasks.polled - before.workflowTasks.polled;
  const synced = after.workflowTasks.syncMatched - before.workflowTasks.syncMatched;
  return {
    dbOpsPerChangedNode: per(ops.reduce((sum, [, n]) => sum + n, 0)),
    dbOpsPerChangedNodeByOp: each(ops),
    dbOpsPerChangedNodeByService: each(grown(before.persistenceByService, after.persistenceByService)),
    visibilityOpsPerChangedNode: per(visibility.reduce((sum, [, n]) => sum + n, 0)),
    visibilityOpsPerChangedNodeByOp: each(visibility),
    workflowTasksSyncMatched: polled > 0 ? +(synced / polled).toFixed(2) : null,
  };
}
