/**
 * The state of the run an action or task id names, read through the runs
 * facade: its status report and the per-node outcomes known so far.
 */
import type { Runs } from '../facade/runs.ts';
import type { NodeOutcome } from '../workflows/messages.ts';
import { decodeRunId, type RunKey } from './run-ids.ts';
import type { RunState } from './run-views.ts';
import { ApiError, ApiFailure } from './status.ts';

/** The run an action or task id names; ActionNotFound for an id that names none. */
export function runKeyOf(id: string, what = 'action'): RunKey {
  const key = decodeRunId(id);
  if (!key) throw new ApiError(ApiFailure.ActionNotFound, `no ${what} ${id}`);
  return key;
}

/**
 * A run's report and per-node outcomes: the result's when it completed,
 * else what the nodeResults query answers (nodes done so far). A query needs
 * a worker: none is made for a rejected run or a running one that answered
 * no progress (no worker has it), and the facade bounds each in time.
 */
export async function runState(runs: Runs, key: RunKey): Promise<RunState> {
  const report = await runs.status(key.workflowId, key.runId);
  if (report.result) return { report, nodes: report.result.nodes };
  if (report.execution === 'FAILED' || (report.execution === 'RUNNING' && report.progress === undefined)) return { report, nodes: [] };
  const nodes: NodeOutcome[] = [];
  for (let offset = 0; ; ) {
    const page = await runs.nodeResults(key.workflowId, key.runId, { offset, limit: 1000 }).catch(() => undefined);
    if (!page) break;
    nodes.push(...page.items);
    offset += page.items.length;
    if (page.items.length === 0 || offset >= page.total) break;
  }
  return { report, nodes };
}
