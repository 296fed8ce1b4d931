/**
 * Counts read from the local Temporal server's own Prometheus /metrics, for
 * the benchmark's account of where the server's time goes: its database
 * operations and how its workflow tasks reached a worker.
 */

/** The counters the benchmark reads, summed over their label sets. */
export interface TemporalCounts {
  /** Database operations of the history, matching and frontend services, by operation. */
  persistence: Record<string, number>;
  /** Visibility store writes and reads. */
  visibility: number;
  /** Workflow tasks handed to a worker on the task queue `taskQueue`, and of those, the ones matched to a waiting poll without being stored. */
  workflowTasks: { polled: number; syncMatched: number };
}

/** The value of a Prometheus text line, and one label of it. */
function sample(line: string): { value: number; label(name: string): string | undefined } {
  const value = Number(line.slice(line.lastIndexOf(' ') + 1));
  return {
    value: Number.isFinite(value) ? value : 0,
    label(name) {
      const at = line.indexOf(`${name}="`);
      if (at < 0) return undefined;
      const start = at + name.length + 2;
      return line.slice(start, line.indexOf('"', start));
    },
  };
}

/** Reads the counters from the server's metrics at `metricsUrl` (http://host:port/metrics). */
export async function temporalCounts(metricsUrl: string, taskQueue: string): Promise<TemporalCounts> {
  const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(10_000) });
  if (!res.ok) throw new Error(`${metricsUrl} answered ${res.status}`);
  const counts: TemporalCounts = { persistence: {}, visibility: 0, workflowTasks: { polled: 0, syncMatched: 0 } };
  // Metric names carry the queue's name with '-' as '_'.
  const queue = taskQueue.replace(/-/g, '_');
  for (const line of (await res.text()).split('\n')) {
    if (line.startsWith('persistence_requests{')) {
      const s = sample(line);
      const op = s.label('operation') ?? '?';
      counts.persistence[op] = (counts.persistence[op] ?? 0) + s.value;
    } else if (line.startsWith('visibility_persistence_requests{')) {
      counts.visibility += sample(line).value;
    } else if (line.startsWith('poll_success{') || line.startsWith('poll_success_sync{')) {
      const s = sample(line);
      if (s.label('task_type') !== 'Workflow' || s.label('taskqueue') !== queue) continue;
      if (line.startsWith('poll_success{')) counts.workflowTasks.polled += s.value;
      else counts.workflowTasks.syncMatched += s.value;
    }
  }
  return counts;
}

/**
 * What happened between two readings, per changed node: database operations
 * (the largest few by name) and the share of workflow tasks matched without
 * being stored. Nothing when no node changed.
 */
export function temporalFigures(before: TemporalCounts, after: TemporalCounts, changedNodes: number, top = 6): Record<string, unknown> {
  if (changedNodes === 0) return {};
  const per = (n: number) => +(n / changedNodes).toFixed(2);
  const ops = Object.entries(after.persistence)
    .map(([op, n]) => [op, n - (before.persistence[op] ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
  const polled = after.workflowTasks.polled - before.workflowTasks.polled;
  const synced = after.workflowTasks.syncMatched - before.workflowTasks.syncMatched;
  return {
    dbOpsPerChangedNode: per(ops.reduce((sum, [, n]) => sum + n, 0)),
    dbOpsPerChangedNodeByOp: Object.fromEntries(ops.slice(0, top).map(([op, n]) => [op, per(n)])),
    visibilityOpsPerChangedNode: per(after.visibility - before.visibility),
    workflowTasksSyncMatched: polled > 0 ? +(synced / polled).toFixed(2) : null,
  };
}
