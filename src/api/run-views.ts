/**
 * How an update run looks through Airship's eyes: a Shipyard action (its
 * lifecycle) or a Drydock task (status, result, one subtask per node). Pure
 * mappings from the runs facade's status report.
 */
import type { NodeOutcome, RunListing, RunStatusReport } from '../facade/runs.ts';
import type { NodeFilterSet } from '../core/node-filter.ts';
import { RunStatus } from '../workflows/messages.ts';
import { encodeRunId } from './run-ids.ts';
import { ActionName } from './schemas.ts';
import type { ActionLifecycle, ActionSummary, ActionView, NodeResultView, StatusMessage, TaskResultView, TaskStatus, TaskView } from './response-schemas.ts';

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

/** The done nodes of a page: those with a final status. */
const isDone = (n: NodeOutcome) => n.status === 'success' || n.status === 'failure';

function failureOf(report: RunStatusReport): { type: string; message: string } | null {
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

const messages = (items: readonly string[], error: boolean): { errorCount: number; messageList: StatusMessage[] } => ({
  errorCount: error ? items.length : 0,
  messageList: items.map((message) => ({ message, error })),
});

/** Drydock's task status of a run. */
export function taskStatus(execution: string, hasProgress: boolean): TaskStatus {
  const lifecycle = actionLifecycle(execution, hasProgress);
  if (lifecycle === 'Pending') return 'Queued';
  if (lifecycle === 'Processing') return 'Running';
  // A rejection completes the task with a failure; a stopped run is Terminated.
  return execution === 'COMPLETED' || execution === 'FAILED' ? 'Complete' : 'Terminated';
}

/**
 * A Drydock task: `result` rolls up the nodes (`incomplete` until the run
 * has finished), `failures` name nodes and, for a rejection, the reason;
 * one subtask per node with an outcome (or, when `queued` lists nodes of a
 * run just started, one queued subtask each).
 */
export function taskView(
  state: RunState,
  extra: { designRef?: string; nodeFilter?: NodeFilterSet; queued?: string[]; notes?: string[]; revision?: number } = {},
): TaskView {
  const { report, nodes } = state;
  const status = taskStatus(report.execution, report.progress !== undefined);
  const failure = failureOf(report);
  const failed = nodes.filter((n) => n.status === 'failure');
  const reasons = [
    ...(extra.notes ?? []),
    ...failed.map((n) => `${n.node}: ${n.error?.type ?? 'Error'}: ${n.error?.message ?? 'failed'}`),
    ...(failure ? [`${failure.type}: ${failure.message}`] : []),
  ];
  const result: TaskResultView = {
    status: report.result?.status ?? (failure ? 'failure' : 'incomplete'),
    successes: nodes.filter((n) => n.status === 'success').map((n) => n.node),
    failures: failed.map((n) => n.node),
    details: messages(reasons, failed.length > 0 || failure !== null),
  };
  const queued = (node: string) => ({ node_name: node, status: 'Queued' as const, result: { status: 'incomplete' as const, details: messages([], false) } });
  const subtasks = [
    ...nodes.map((n) =>
      isDone(n)
        ? {
            node_name: n.node,
            status: 'Complete' as const,
            result: {
              status: n.status as 'success' | 'failure',
              details: messages(n.error ? [`${n.error.type}: ${n.error.message}`] : [], n.status === 'failure'),
            },
          }
        : queued(n.node),
    ),
    ...(extra.queued ?? []).map(queued),
  ];
  return {
    task_id: encodeRunId(report),
    action: 'relabel_nodes',
    status,
    design_ref: extra.designRef ?? null,
    node_filter: extra.nodeFilter ?? null,
    revision: report.result?.revision ?? report.progress?.revision ?? extra.revision ?? null,
    created: report.startTime,
    completed: report.closeTime ?? null,
    ui_link: report.uiLink ?? null,
    result,
    subtasks_page: state.page,
    subtasks,
  };
}
