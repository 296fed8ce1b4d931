/**
 * An update run as Drydock's eyes see it: a `relabel_nodes` task shaped as
 * Drydock's `Task.to_dict` (lower-case status and result, `subtask_id_list`,
 * `created_by`, `terminated`, …), and one subtask per target node whose id,
 * `<task id>.<position>`, is stable for the life of the run. Pure mappings.
 */
import type { NodeFilterSet } from '../../core/site/node-filter.ts';
import type { NodeOutcome } from '../../facade/runs/runs.ts';
import { RunStatus } from '../../contracts/messages.ts';
import type { TaskResultView, TaskStatus, TaskView } from './task-schemas.ts';
import type { NodePageInfo } from '../runs/run-views.ts';

/** What a task view is made from: the run as the facade reports (or lists) it and a page of its nodes in target order. */
export interface TaskSource {
  /** The task's id (the run's). */
  id: string;
  /** Temporal's status of the run. */
  execution: string;
  /** Whether a worker has reported progress (a running run without it is still queued). */
  hasProgress: boolean;
  /** How a completed run ended: success, partial_success or failure. */
  runStatus?: string;
  /** Why the run was rejected or ended early. */
  failure: { type: string; message: string } | null;
  startTime: string;
  closeTime?: string;
  startedBy?: string;
  revision: number | null;
  uiLink: string | null;
  designRef: string | null;
  nodeFilter: NodeFilterSet | null;
  /** The node sets whose members the task targets, when it was started for node_sets. */
  nodeSets?: readonly string[];
  page: NodePageInfo;
  /** The page's nodes; the first is at position `page.offset`. */
  nodes: readonly NodeOutcome[];
  /** Messages about the task as a whole (nodes a filter named that the design lacks). */
  notes?: readonly string[];
}

/** Longest position in a subtask id. */
const SUBTASK = /^([A-Za-z0-9_-]+)\.(0|[1-9][0-9]{0,8})$/;

/** The id of the subtask of node `position` (from 0, target order) of task `taskId`. */
export const subtaskId = (taskId: string, position: number): string => `${taskId}.${position}`;

/** The task and node position a subtask id names, or null for a task's own id. */
export function parseSubtaskId(id: string): { taskId: string; position: number } | null {
  const match = SUBTASK.exec(id);
  return match ? { taskId: match[1] as string, position: Number(match[2]) } : null;
}

/**
 * Drydock's status of a run: `queued` until a worker reports progress,
 * `running` (also across continue-as-new), `complete` once it ended on its
 * own (a rejection included: its result is `failure`), `terminated` when
 * stopped, terminated or timed out.
 */
export function taskStatusOf(execution: string, hasProgress: boolean): TaskStatus {
  switch (execution) {
    case 'RUNNING':
      return hasProgress ? 'running' : 'queued';
    case 'CONTINUED_AS_NEW':
      return 'running';
    case 'COMPLETED':
    case 'FAILED':
      return 'complete';
    default:
      return 'terminated';
  }
}

type Message = TaskResultView['details']['messageList'][number];

const message = (text: string, error: boolean, context: string, ts: string, contextType = 'node'): Message => ({
  message: text,
  error,
  context_type: contextType,
  context,
  ts,
  extra: {},
});

function result(
  status: TaskResultView['status'],
  successes: string[],
  failures: string[],
  messages: Message[],
  reason: string | null,
  text: string | null,
): TaskResultView {
  return {
    kind: 'Status',
    apiVersion: 'v1.0',
    metadata: {},
    message: text,
    reason,
    status,
    successes,
    failures,
    links: [],
    details: { errorCount: messages.filter((m) => m.error).length, messageList: messages },
  };
}

/** What happened to one node, in one sentence. */
function nodeMessage(n: NodeOutcome): string {
  if (n.status === 'failure') return `${n.error?.type ?? 'Error'}: ${n.error?.message ?? 'failed'}`;
  if (n.status !== 'success') return n.status === 'pending' ? 'planned; labels being applied' : 'queued';
  if (!n.written) return 'labels already as the revision wants; nothing written';
  const set = Object.keys(n.set ?? {}).length;
  return `labels applied: ${set} set, ${n.removed?.length ?? 0} removed, ${n.adopted?.length ?? 0} adopted`;
}

const filterOf = (node: string): NodeFilterSet => ({ filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: [node] }] });

function common(source: TaskSource, status: TaskStatus) {
  return {
    kind: 'Task' as const,
    apiVersion: 'v1' as const,
    action: 'relabel_nodes' as const,
    design_ref: source.designRef,
    status,
    created: source.startTime,
    created_by: source.startedBy ?? null,
    updated: source.closeTime ?? null,
    terminated: status === 'terminated' ? (source.closeTime ?? null) : null,
    terminated_by: null,
    terminate: status === 'terminated',
    retry: 0,
    revision: source.revision,
    ui_link: source.uiLink,
  };
}

/** The subtask of the node at `position` of the run (`outcome` its row). */
export function nodeTaskView(source: TaskSource, outcome: NodeOutcome, position: number): TaskView {
  const parent = taskStatusOf(source.execution, source.hasProgress);
  const done = outcome.status === 'success' || outcome.status === 'failure';
  const status: TaskStatus = done
    ? 'complete'
    : parent === 'terminated' || parent === 'complete'
      ? 'terminated'
      : outcome.status === 'pending'
        ? 'running'
        : 'queued';
  const ts = source.closeTime ?? source.startTime;
  const failed = outcome.status === 'failure';
  const state = done ? (failed ? 'failure' : 'success') : 'incomplete';
  return {
    ...common(source, status),
    task_id: subtaskId(source.id, position),
    parent_task_id: source.id,
    node_filter: filterOf(outcome.node),
    result: result(
      state,
      outcome.status === 'success' ? [outcome.node] : [],
      failed ? [outcome.node] : [],
      [message(nodeMessage(outcome), failed, outcome.node, ts)],
      failed ? (outcome.error?.type ?? 'Error') : null,
      nodeMessage(outcome),
    ),
    subtask_id_list: [],
  };
}

/**
 * The task of a run. `result.successes` and `failures` name the nodes of
 * this page (all of them when `page.total` ≤ its limit) and its messages
 * say why each failed node failed; `subtask_id_list` holds this page's
 * subtask ids. The result is `incomplete` while the run goes on; a run
 * stopped early is `partial_success` when a node of the page succeeded,
 * else `failure`.
 */
export function taskView(source: TaskSource): TaskView {
  const status = taskStatusOf(source.execution, source.hasProgress);
  const ts = source.closeTime ?? source.startTime;
  const successes = source.nodes.filter((n) => n.status === 'success').map((n) => n.node);
  const failed = source.nodes.filter((n) => n.status === 'failure');
  const messages = [
    ...(source.notes ?? []).map((note) => message(note, false, source.id, ts, 'task')),
    ...failed.map((n) => message(nodeMessage(n), true, n.node, ts)),
    ...(source.failure ? [message(`${source.failure.type}: ${source.failure.message}`, true, source.id, ts, 'task')] : []),
  ];
  let state: TaskResultView['status'] = 'incomplete';
  if (status === 'complete') {
    const known = [RunStatus.success, RunStatus.partialSuccess, RunStatus.failure] as string[];
    state =
      source.runStatus !== undefined && known.includes(source.runStatus)
        ? (source.runStatus as TaskResultView['status'])
        : source.failure
          ? 'failure'
          : 'success';
  } else if (status === 'terminated') {
    state = successes.length > 0 ? 'partial_success' : 'failure';
  }
  const summary =
    status === 'complete' || status === 'terminated'
      ? `${successes.length} node(s) succeeded, ${failed.length} failed${source.page.total > source.nodes.length ? ` (of ${source.nodes.length} shown; ${source.page.total} in all)` : ''}`
      : null;
  return {
    ...common(source, status),
    task_id: source.id,
    parent_task_id: null,
    node_filter: source.nodeFilter,
    ...(source.nodeSets ? { node_sets: [...source.nodeSets] } : {}),
    result: result(
      state,
      successes,
      failed.map((n) => n.node),
      messages,
      source.failure?.type ?? null,
      source.failure?.message ?? summary,
    ),
    subtask_id_list: source.nodes.map((_, i) => subtaskId(source.id, source.page.offset + i)),
    subtasks_page: source.page,
  };
}

/** The page's subtasks, in target order. */
export const subtaskViews = (source: TaskSource): TaskView[] => source.nodes.map((n, i) => nodeTaskView(source, n, source.page.offset + i));

/** Drydock's `subtask_errors`: each subtask of the page whose result has errors, by id, its result carrying its `task_id`. */
export function subtaskErrors(subtasks: readonly TaskView[]): Record<string, TaskResultView & { task_id: string }> {
  const errors: Record<string, TaskResultView & { task_id: string }> = {};
  for (const t of subtasks) if (t.result.details.errorCount > 0) errors[t.task_id] = { ...t.result, task_id: t.task_id };
  return errors;
}

/**
 * Drydock's answer to `layers=N`: `init_task_id` and the task by its id,
 * and with N of 2 and more (or -1) every subtask of the page by its id.
 */
export function taskLayers(task: TaskView, subtasks: readonly TaskView[], layers: number): Record<string, unknown> {
  const answer: Record<string, unknown> = { init_task_id: task.task_id, [task.task_id]: task };
  if (layers === -1 || layers >= 2) for (const t of subtasks) answer[t.task_id] = t;
  return answer;
}
