import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NodeOutcome } from '../../facade/runs/runs.ts';
import { TaskView } from './task-schemas.ts';
import { nodeTaskView, parseSubtaskId, subtaskErrors, subtaskId, subtaskViews, taskLayers, taskStatusOf, taskView, type TaskSource } from './task-views.ts';

const nodes: NodeOutcome[] = [
  { node: 'a', status: 'success', written: true, set: { x: '1' } },
  { node: 'b', status: 'failure', written: false, error: { type: 'NodeNotFound', message: 'node b not found' } },
  { node: 'c', status: 'success', written: false },
];
const source: TaskSource = {
  id: 'dGFzaw',
  execution: 'COMPLETED',
  hasProgress: true,
  runStatus: 'partial_success',
  failure: null,
  startTime: '2026-01-01T00:00:00.000Z',
  closeTime: '2026-01-01T00:00:05.000Z',
  startedBy: 'shipyard',
  revision: 3,
  uiLink: null,
  designRef: 'deckhand+http://deckhand/api/v1.0/revisions/3/rendered-documents',
  nodeFilter: null,
  page: { run: 7, total: 3, offset: 0, limit: 1000 },
  nodes,
};

describe("runs through Drydock's eyes", () => {
  it("maps Temporal's status onto Drydock's lower-case task statuses", () => {
    const table: [string, boolean, string][] = [
      ['RUNNING', false, 'queued'],
      ['RUNNING', true, 'running'],
      ['CONTINUED_AS_NEW', true, 'running'],
      ['COMPLETED', true, 'complete'],
      ['FAILED', false, 'complete'],
      ['CANCELLED', true, 'terminated'],
      ['TERMINATED', true, 'terminated'],
      ['TIMED_OUT', false, 'terminated'],
    ];
    for (const [execution, progress, status] of table) assert.equal(taskStatusOf(execution, progress), status, execution);
  });

  it("shapes a partial run as Drydock's Task.to_dict, one stable subtask per node", () => {
    const task = TaskView.parse(taskView(source));
    assert.equal(task.kind, 'Task');
    assert.equal(task.status, 'complete');
    assert.equal(task.result.status, 'partial_success');
    assert.deepEqual(task.result.successes, ['a', 'c']);
    assert.deepEqual(task.result.failures, ['b']);
    assert.equal(task.result.details.errorCount, 1);
    assert.deepEqual(
      task.result.details.messageList.map((m) => [m.context_type, m.context, m.error, m.message]),
      [['node', 'b', true, 'NodeNotFound: node b not found']],
    );
    assert.deepEqual(task.subtask_id_list, ['dGFzaw.0', 'dGFzaw.1', 'dGFzaw.2']);
    assert.equal(task.created_by, 'shipyard');
    assert.equal(task.design_ref, source.designRef);
    const subtasks = subtaskViews(source).map((t) => TaskView.parse(t));
    assert.deepEqual(
      subtasks.map((t) => [t.task_id, t.parent_task_id, t.status, t.result.status]),
      [
        ['dGFzaw.0', 'dGFzaw', 'complete', 'success'],
        ['dGFzaw.1', 'dGFzaw', 'complete', 'failure'],
        ['dGFzaw.2', 'dGFzaw', 'complete', 'success'],
      ],
    );
    assert.deepEqual(subtasks[1]?.node_filter, { filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: ['b'] }] });
    assert.deepEqual(Object.keys(subtaskErrors(subtasks)), ['dGFzaw.1']);
    assert.equal(subtaskErrors(subtasks)['dGFzaw.1']?.task_id, 'dGFzaw.1');
    // A page further on keeps each node's id: positions count from the run's first node.
    const later = { ...source, nodes: nodes.slice(2), page: { ...source.page, offset: 2, limit: 1 } };
    assert.deepEqual(taskView(later).subtask_id_list, ['dGFzaw.2']);
    assert.equal(nodeTaskView(later, nodes[2] as NodeOutcome, 2).task_id, subtaskId('dGFzaw', 2));
  });

  it('answers layers as Drydock: the task alone, or with its subtasks', () => {
    const task = taskView(source);
    const subtasks = subtaskViews(source);
    assert.deepEqual(Object.keys(taskLayers(task, subtasks, 1)), ['init_task_id', 'dGFzaw']);
    assert.deepEqual(Object.keys(taskLayers(task, subtasks, -1)).length, 5);
    assert.deepEqual(Object.keys(taskLayers(task, subtasks, 2)).length, 5);
  });

  it('parses subtask ids and tells them from task ids', () => {
    assert.deepEqual(parseSubtaskId('dGFzaw.12'), { taskId: 'dGFzaw', position: 12 });
    assert.equal(parseSubtaskId('dGFzaw'), null);
    assert.equal(parseSubtaskId('dGFzaw.01'), null);
    assert.equal(parseSubtaskId('dGFzaw.1.2'), null);
  });

  it('reports a rejection as a completed failed task, and a stopped one as terminated', () => {
    const rejected = taskView({
      ...source,
      execution: 'FAILED',
      runStatus: undefined,
      failure: { type: 'MassRemovalRefused', message: 'too many' },
      nodes: [],
    });
    assert.equal(rejected.status, 'complete');
    assert.equal(rejected.result.status, 'failure');
    assert.equal(rejected.result.reason, 'MassRemovalRefused');
    const stopped = taskView({ ...source, execution: 'CANCELLED', nodes: [nodes[0] as NodeOutcome, { node: 'd', status: 'queued', written: false }] });
    assert.equal(stopped.status, 'terminated');
    assert.equal(stopped.result.status, 'partial_success');
    assert.equal(nodeTaskView({ ...source, execution: 'CANCELLED' }, { node: 'd', status: 'queued', written: false }, 1).status, 'terminated');
    const running = taskView({ ...source, execution: 'RUNNING', nodes: [] });
    assert.equal(running.result.status, 'incomplete');
  });
});
