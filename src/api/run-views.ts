/**
 * How an update run looks through Airship's eyes: a Shipyard action (its
 * lifecycle) or a Drydock task (status, result, one subtask per node). Pure
 * mappings from the runs facade's status report.
 */
import type { NodeOutcome, RunListing, RunStatusReport } from '../facade/runs.ts';
import { RunStatus } from '../workflows/messages.ts';
import { encodeRunId } from './run-ids.ts';
import { ActionName } from './schemas.ts';
import type { ActionLifecycle, ActionSummary, ActionView, NodeResultView } from './response-schemas.ts';

/** Which part of a run's nodes a view holds. */
export type NodePageInfo = { run: number | null; total: number; offset: number; limit: number };

/** The state of a run the views need: the facade's report and a page of its per-node outcomes. */
export type RunState = { report: RunStatusReport; nodes: NodeOutcome[]; page: NodePageInfo };

/**
 * Shipyard's lifecycle of a run from Temporal's status and, once it has
 * completed, the run's own status: RUNNING is Pending until a worker has
 * picked the run up (no progress to report yet), then Processing;
 * CONTINUED_AS_NEW stays Processing (the chain goes on). COMPLETED is
 * Complete only when every node succeeded: a run with any failed node
 * (`partial_success` or `failure`) is Failed, as Shipyard dispositions a step
 * with an unsuccessful node; an unknown run status (`runStatus` absent)
 * counts as Complete. FAILED (a rejection), CANCELLED, TERMINATED and
 * TIMED_OUT are Failed.
 */
export function actionLifecycle(execution: string, hasProgress: boolean, runStatus?: string): ActionLifecycle {
  switch (execution) {
    case 'RUNNING':
      return hasProgress ? 'Processing' : 'Pending';
    case 'CONTINUED_AS_NEW':
      return 'Processing';
    case 'COMPLETED':
      return runStatus === RunStatus.partialSuccess || runStatus === RunStatus.failure ? 'Failed' : 'Complete';
    default:
      return 'Failed';
  }
}

/** The action name a run was started with, `update_labels` when it has none (started by the CLI). */
function actionNameOf(action: string | undefined): ActionName {
  const parsed = ActionName.safeParse(action);
  return parsed.success ? parsed.data : 'update_labels';
}

/** A list entry from what Temporal's visibility knows of a run. */
export function actionSummary(run: Omit<RunListing, 'run'>): ActionSummary {
  return {
    id: encodeRunId(run),
    name: actionNameOf(run.action),
    // Visibility cannot tell whether a worker has started the run: a running run is Processing here.
    action_lifecycle: actionLifecycle(run.execution, true, run.outcome),
    execution: run.execution,
    datetime: run.startTime,
    completed_at: run.closeTime ?? null,
    workflow_id: run.workflowId,
    run_id: run.runId,
    user: run.startedBy ?? null,
    started_via: run.startedVia ?? null,
  };
}

/** One node's outcome as the API shows it. */
export function nodeResult(outcome: NodeOutcome): NodeResultView {
  const { node, status, set, removed, adopted, unchanged, written, taintLifted, annotations, taints, error } = outcome;
  return {
    node,
    status,
    ...(set !== undefined ? { set } : {}),
    ...(removed !== undefined ? { removed } : {}),
    ...(adopted !== undefined ? { adopted } : {}),
    ...(unchanged !== undefined ? { unchanged } : {}),
    written,
    ...(taintLifted ? { taint_lifted: true } : {}),
    ...(annotations !== undefined ? { annotations } : {}),
    ...(taints !== undefined ? { taints } : {}),
    ...(error !== undefined ? { error: { type: error.type, message: error.message } } : {}),
  };
}

/** Why a run was rejected or ended early (stopped, terminated, timed out), or null. */
export function failureOf(report: RunStatusReport): { type: string; message: string } | null {
  if (report.failure) return report.failure;
  if (report.execution === 'CANCELLED') return { type: 'Cancelled', message: 'the run was stopped; nodes already relabelled stay relabelled (no rollback)' };
  if (report.execution === 'TERMINATED') return { type: 'Terminated', message: 'the run was terminated' };
  if (report.execution === 'TIMED_OUT') return { type: 'TimedOut', message: 'the run timed out' };
  return null;
}

/**
 * A Shipyard action. `name` is the one it was started with (kept in the
 * run's memo; `update_labels` for runs started without one); `targets` are
 * known when the run was just started or has finished.
 */
export function actionView(state: RunState, extra: { name?: ActionName; targets?: string[]; revision?: number } = {}): ActionView {
  const { report } = state;
  const result = report.result;
  const revision = result?.revision ?? report.progress?.revision ?? extra.revision ?? null;
  const targets = extra.targets ?? (state.nodes.length > 0 ? state.nodes.map((n) => n.node) : undefined);
  return {
    id: encodeRunId(report),
    name: extra.name ?? actionNameOf(report.action),
    parameters: targets ? { target_nodes: targets } : {},
    action_lifecycle: actionLifecycle(report.execution, report.progress !== undefined, result?.status),
    execution: report.execution,
    datetime: report.startTime,
    completed_at: report.closeTime ?? null,
    workflow_id: report.workflowId,
    run_id: report.runId,
    user: report.startedBy ?? null,
    started_via: report.startedVia ?? null,
    revision,
    committed_rev_id: revision,
    ui_link: report.uiLink ?? null,
    result: result ? { status: result.status, counts: result.counts, failures: result.failures } : null,
    node_results: state.nodes.map(nodeResult),
    node_results_page: state.page,
    failure: failureOf(report),
  };
}
