/**
 * The state of the run an action or task id names, read through the runs
 * facade: its status report and a page of its per-node outcomes from the
 * revision store.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { Runs } from '../../facade/runs/runs.ts';
import type { RunRecord, RunWave } from '../../store/runs/run-store.ts';
import { isUlid } from '../../store/ulid.ts';
import { NOTE_LIMIT } from '../shipyard/action-views.ts';
import { MAX_WAVE_STEPS } from '../shipyard/wave-steps.ts';
import { decodeRunId, type RunKey } from './run-ids.ts';
import type { RunState } from './run-views.ts';
import { ApiError } from '../http/status.ts';

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

/**
 * The run an action id names and, for a ULID, the store's record of it: a
 * ULID is looked up in the store, an old id (see `run-ids.ts`) decoded.
 * ActionNotFound for an id that names no run (or a run whose workflow has
 * not started).
 */
export async function actionRun(runs: Runs, id: string, what = 'action'): Promise<{ key: RunKey; record: RunRecord | null }> {
  if (!isUlid(id)) return { key: runKeyOf(id, what), record: null };
  const record = await runs.byActionId(id);
  if (!record?.workflowId || !record.executionRunId) throw new ApiError(FailureType.ActionNotFound, `no ${what} ${id}`);
  return { key: { workflowId: record.workflowId, runId: record.executionRunId }, record };
}

/**
 * The run an action id (a ULID or an old id) names; ActionNotFound (naming
 * `what`: an action, a task) for none. A task may be named by its action's id.
 */
export async function actionKeyOf(runs: Runs, id: string, what = 'action'): Promise<RunKey> {
  return (await actionRun(runs, id, what)).key;
}

/** The first waves of run `run` the steps list, and one more to tell there are more. */
async function firstWaves(runs: Runs, run: number): Promise<RunWave[]> {
  return runs.waves(run, { limit: MAX_WAVE_STEPS + 1 });
}

/**
 * An action's state: its run's report and page of outcomes (as
 * {@link runState}), and what the store holds of its action (record,
 * command audit, counts, the first {@link NOTE_LIMIT} failed rows) with when
 * its first steps ran.
 */
export async function actionState(runs: Runs, id: string, page: { offset?: string; limit?: string } = {}): Promise<RunState> {
  const { key, record } = await actionRun(runs, id);
  const state = await runState(runs, key, page);
  const run = state.page.run ?? record?.id ?? null;
  const found = record ?? (run !== null ? await runs.record(run) : null);
  const [commands, counts, rows, times, waves] = await Promise.all([
    run !== null ? runs.commands(run) : [],
    run !== null ? runs.counts(run) : null,
    run !== null ? runs.nodeRows(run, { status: 'failure', limit: NOTE_LIMIT }) : [],
    runs.stepTimes(key.workflowId, found?.executionRunId ?? key.runId),
    run !== null ? firstWaves(runs, run) : [],
  ]);
  state.action = { record: found, commands, times, failed: { rows, total: counts?.failure ?? rows.length }, counts, waves };
  return state;
}
