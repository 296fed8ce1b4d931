/**
 * The state of the run an action or task id names, read through the runs
 * facade: its status report and a page of its per-node outcomes from the
 * revision store.
 */
import { FailureType } from '../core/failure-types.ts';
import type { Runs } from '../facade/runs.ts';
import { decodeRunId, type RunKey } from './run-ids.ts';
import type { RunState } from './run-views.ts';
import { ApiError } from './status.ts';

/** The run an action or task id names; ActionNotFound for an id that names none. */
export function runKeyOf(id: string, what = 'action'): RunKey {
  const key = decodeRunId(id);
  if (!key) throw new ApiError(FailureType.ActionNotFound, `no ${what} ${id}`);
  return key;
}

/** Default number of node outcomes in one answer. */
export const DEFAULT_NODE_PAGE = 1000;

/**
 * A run's report and one page of its per-node outcomes, as the store has
 * them now (nodes not yet done are `queued` or `pending`). A run started
 * before run numbers existed, or rejected before its targets were stored,
 * has no outcomes.
 */
export async function runState(runs: Runs, key: RunKey, page: { offset?: string; limit?: string } = {}): Promise<RunState> {
  const report = await runs.status(key.workflowId, key.runId);
  const offset = Number(page.offset ?? 0);
  const limit = Number(page.limit ?? DEFAULT_NODE_PAGE);
  const run = report.result?.run ?? report.run;
  if (run === undefined) return { report, nodes: [], page: { run: null, total: 0, offset, limit } };
  const found = await runs.nodes(run, { offset, limit });
  return { report, nodes: found.items, page: { run, total: found.total, offset, limit } };
}
