import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunStatusReport } from '../facade/runs.ts';
import { actionLifecycle, actionView, taskStatus, taskView } from './run-views.ts';
import { ActionView, TaskView } from './response-schemas.ts';

const RUN = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const base: RunStatusReport = { workflowId: 'update-labels/s', runId: RUN, execution: 'COMPLETED', startTime: '2026-01-01T00:00:00.000Z', closeTime: '2026-01-01T00:00:05.000Z' };

describe('runs through Airship eyes', () => {
  it("maps Temporal's status onto Shipyard's lifecycle and Drydock's task status", () => {
    const table: [string, boolean, string, string][] = [
      ['RUNNING', false, 'Pending', 'Queued'],
      ['RUNNING', true, 'Processing', 'Running'],
      ['CONTINUED_AS_NEW', true, 'Processing', 'Running'],
      ['COMPLETED', true, 'Complete', 'Complete'],
      ['FAILED', false, 'Failed', 'Complete'],
      ['CANCELLED', true, 'Failed', 'Terminated'],
      ['TERMINATED', true, 'Failed', 'Terminated'],
      ['TIMED_OUT', false, 'Failed', 'Terminated'],
    ];
    for (const [execution, progress, lifecycle, task] of table) {
      assert.equal(actionLifecycle(execution, progress), lifecycle, execution);
      assert.equal(taskStatus(execution, progress), task, execution);
    }
    // A completed run is Complete only when every node succeeded.
    const completed: [string | undefined, string][] = [['success', 'Complete'], ['dry_run', 'Complete'], [undefined, 'Complete'], ['partial_success', 'Failed'], ['failure', 'Failed']];
    for (const [status, lifecycle] of completed) assert.equal(actionLifecycle('COMPLETED', true, status), lifecycle, String(status));
    assert.equal(actionLifecycle('RUNNING', true, 'failure'), 'Processing', 'a run still going is not judged yet');
  });

  it('reports a partial success with per-node reasons', () => {
    const nodes = [
      { node: 'a', status: 'success' as const, set: { x: '1' }, removed: [], adopted: [], unchanged: 0, written: true },
      { node: 'b', status: 'failure' as const, written: false, error: { type: 'NodeNotFound', message: 'node b not found' } },
    ];
    const page = { run: 7, total: 2, offset: 0, limit: 1000 };
    const report: RunStatusReport = {
      ...base,
      result: { status: 'partial_success', run: 7, revision: 3, site: 's', dryRun: false, counts: { total: 2, success: 1, failure: 1, written: 1 }, failures: [{ node: 'b', error: { type: 'NodeNotFound', message: 'node b not found' } }] },
    };
    const action = ActionView.parse(actionView({ report, nodes, page }));
    assert.equal(action.action_lifecycle, 'Failed', 'a node failed');
    assert.equal(action.revision, 3);
    assert.deepEqual(action.parameters, { target_nodes: ['a', 'b'] });
    assert.deepEqual(action.node_results[1], { node: 'b', status: 'failure', written: false, error: { type: 'NodeNotFound', message: 'node b not found' } });
    assert.deepEqual(action.node_results_page, page);
    const task = TaskView.parse(taskView({ report, nodes, page }));
    assert.equal(task.status, 'Complete');
    assert.deepEqual(task.result.successes, ['a']);
    assert.deepEqual(task.result.failures, ['b']);
    assert.deepEqual(task.result.details.messageList, [{ message: 'b: NodeNotFound: node b not found', error: true }]);
    assert.deepEqual(task.subtasks.map((s) => [s.node_name, s.result.status]), [['a', 'success'], ['b', 'failure']]);
  });

  it('reports a rejection as a failed action and a failed task', () => {
    const report: RunStatusReport = { ...base, execution: 'FAILED', failure: { type: 'NoSiteActionRevision', message: 'deploy first' } };
    assert.deepEqual(actionView({ report, nodes: [], page: { run: null, total: 0, offset: 0, limit: 1000 } }).failure, { type: 'NoSiteActionRevision', message: 'deploy first' });
    const task = taskView({ report, nodes: [], page: { run: null, total: 0, offset: 0, limit: 1000 } });
    assert.equal(task.result.status, 'failure');
    assert.equal(task.result.details.errorCount, 1);
  });
});
