/**
 * How an update run looks through Airship's eyes: a Shipyard action (its
 * lifecycle) or a Drydock task (status, result, one subtask per node). Pure
 * mappings from the runs facade's status report.
 */
import type { NodeOutcome, RunListing, RunStatusReport } from '../../facade/runs/runs.ts';
import { RunStatus } from '../../contracts/messages.ts';
import type { RunStepTimes } from '../../facade/runs/run-actions.ts';
import type { ActionCommand } from '../../store/runs/action-store.ts';
import type { RunNodeCounts, RunNodeRow, RunRecord, RunWave } from '../../store/runs/run-store.ts';
import { dagStatus, executionDate } from '../shipyard/action-steps.ts';
import { waitsForPerson, waveState } from '../shipyard/action-rollout.ts';
import { actionNotes, commandAudit, firstStart, stepFacts, stepSummaries, validations, type ActionFacts } from '../shipyard/action-views.ts';
import { encodeRunId } from './run-ids.ts';
import { ActionName } from '../http/schemas.ts';
import type { ActionLifecycle, ActionSummary, ActionView, NodeResultView } from '../http/response-schemas.ts';

/** Which part of a run's nodes a view holds. */
export type NodePageInfo = { run: number | null; total: number; offset: number; limit: number };

/** What the store holds of a run's action: its record, command audit, first failed rows and counts, and when its first steps ran. */
export type ActionExtras = {
  record: RunRecord | null;
  commands: ActionCommand[];
  times: RunStepTimes;
  failed: { rows: RunNodeRow[]; total: number };
  counts: RunNodeCounts | null;
  /** A run in waves: its first waves (at most MAX_WAVE_STEPS + 1), counted by status; absent or empty: no waves. */
  waves?: RunWave[];
};

/** The state of a run the views need: the facade's report, a page of its per-node outcomes and (for actions) its action extras. */
export type RunState = { report: RunStatusReport; nodes: NodeOutcome[]; page: NodePageInfo; action?: ActionExtras };

/**
 * Shipyard's lifecycle of a run from Temporal's status and, once it has
 * completed, the run's own status: RUNNING is Pending until a worker has
 * picked the run up (no progress to report yet), then Processing;
 * CONTINUED_AS_NEW stays Processing (the chain goes on). COMPLETED is
 * Complete only when every node succeeded: a run with any failed node
 * (`partial_success` or `failure`) is Failed, as Shipyard dispositions a step
 * with an unsuccessful node; an unknown run status (`runStatus` absent)
 * counts as Complete. FAILED (a rejection), CANCELLED, TERMINATED and
 * TIMED_OUT are Failed. A running run its progress says is paused is Paused,
 * as is a run in waves waiting at a gate only a person moves it past (an
 * approval, or halted): Shipyard's unpause moves it on.
 */
export function actionLifecycle(execution: string, hasProgress: boolean, runStatus?: string, paused = false): ActionLifecycle {
  switch (execution) {
    case 'RUNNING':
      return paused ? 'Paused' : hasProgress ? 'Processing' : 'Pending';
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
  // Visibility cannot tell whether a worker has started the run: a running run is Processing here.
  const lifecycle = actionLifecycle(run.execution, true, run.outcome);
  const id = run.actionId ?? encodeRunId(run);
  const name = actionNameOf(run.action);
  const report: RunStatusReport = {
    workflowId: run.workflowId,
    runId: run.runId,
    execution: run.execution,
    startTime: run.startTime,
    ...(run.closeTime ? { closeTime: run.closeTime } : {}),
  };
  const facts: ActionFacts = {
    id,
    name,
    report,
    lifecycle,
    failure: null,
    run: null,
    record: null,
    commands: [],
    times: {},
    failed: { rows: [], total: 0 },
    ...(run.outcome ? { status: run.outcome } : {}),
  };
  return {
    id,
    name,
    action_lifecycle: lifecycle,
    execution: run.execution,
    datetime: run.startTime,
    completed_at: run.closeTime ?? null,
    workflow_id: run.workflowId,
    run_id: run.runId,
    user: run.startedBy ?? null,
    started_via: run.startedVia ?? null,
    dag_id: name,
    dag_status: dagStatus(lifecycle),
    dag_execution_date: executionDate(run.startTime),
    steps: stepSummaries(facts),
    notes: [],
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
  const facts = actionFacts(state, extra.name);
  const steps = stepFacts(facts);
  return {
    id: facts.id,
    name: facts.name as ActionName,
    parameters: { ...(targets ? { target_nodes: targets } : {}), ...(report.nodeSets ? { node_sets: report.nodeSets } : {}) },
    action_lifecycle: facts.lifecycle as ActionLifecycle,
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
    failure: facts.failure,
    dag_id: facts.name as ActionName,
    dag_status: dagStatus(facts.lifecycle),
    dag_execution_date: executionDate(firstStart(facts)),
    context_marker: state.action?.record?.contextMarker ?? null,
    timestamp: state.action?.record?.createdAt.toISOString() ?? null,
    steps: stepSummaries(facts, steps),
    validations: validations(facts, steps),
    command_audit: commandAudit(facts),
    notes: actionNotes(facts).map((n) => n.view),
    waves: waveState(report.progress, result),
  };
}

/**
 * What the Shipyard parts of an action are built from: its id (the run's
 * ULID, or the old id of a run recorded without one), lifecycle, failure
 * and the store's action extras.
 */
export function actionFacts(state: RunState, name?: ActionName): ActionFacts {
  const { report } = state;
  const extras = state.action;
  return {
    id: report.actionId ?? extras?.record?.actionId ?? encodeRunId(report),
    name: name ?? actionNameOf(report.action),
    report,
    lifecycle: actionLifecycle(
      report.execution,
      report.progress !== undefined,
      report.result?.status,
      report.progress?.paused === true || waitsForPerson(report.progress),
    ),
    failure: failureOf(report),
    run: report.result?.run ?? report.run ?? extras?.record?.id ?? null,
    record: extras?.record ?? null,
    commands: extras?.commands ?? [],
    times: extras?.times ?? {},
    failed: extras?.failed ?? { rows: [], total: 0 },
    counts: extras?.counts ?? null,
    ...(extras?.waves && extras.waves.length > 0 ? { waves: extras.waves } : {}),
  };
}
