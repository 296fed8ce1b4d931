import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { RunStatusReport } from '../../facade/runs/runs.ts';
import { actionLifecycle, actionView } from './run-views.ts';
import { ActionView } from '../http/response-schemas.ts';

const RUN = '0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const base: RunStatusReport = {
  workflowId: 'update-labels/s',
  runId: RUN,
  execution: 'COMPLETED',
  startTime: '2026-01-01T00:00:00.000Z',
  closeTime: '2026-01-01T00:00:05.000Z',
};

describe('runs through Airship eyes', () => {
  it("maps Temporal's status onto Shipyard's lifecycle", () => {
    const table: [string, boolean, string][] = [
      ['RUNNING', false, 'Pending'],
      ['RUNNING', true, 'Processing'],
      ['CONTINUED_AS_NEW', true, 'Processing'],
      ['COMPLETED', true, 'Complete'],
      ['FAILED', false, 'Failed'],
      ['CANCELLED', true, 'Failed'],
      ['TERMINATED', true, 'Failed'],
      ['TIMED_OUT', false, 'Failed'],
    ];
    for (const [execution, progress, lifecycle] of table) assert.equal(actionLifecycle(execution, progress), lifecycle, execution);
    // A completed run is Complete only when every node succeeded.
    const completed: [string | undefined, string][] = [
      ['success', 'Complete'],
      ['dry_run', 'Complete'],
      [undefined, 'Complete'],
      ['partial_success', 'Failed'],
      ['failure', 'Failed'],
    ];
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
      result: {
        status: 'partial_success',
        run: 7,
        revision: 3,
        site: 's',
        dryRun: false,
        counts: { total: 2, success: 1, failure: 1, written: 1 },
        failures: [{ node: 'b', error: { type: 'NodeNotFound', message: 'node b not found' } }],
      },
    };
    const action = ActionView.parse(actionView({ report, nodes, page }));
    assert.equal(action.action_lifecycle, 'Failed', 'a node failed');
    assert.equal(action.revision, 3);
    assert.deepEqual(action.parameters, { target_nodes: ['a', 'b'] });
    assert.deepEqual(action.node_results[1], { node: 'b', status: 'failure', written: false, error: { type: 'NodeNotFound', message: 'node b not found' } });
    assert.deepEqual(action.node_results_page, page);
  });

  it('reports a rejection as a failed action', () => {
    const report: RunStatusReport = { ...base, execution: 'FAILED', failure: { type: 'NoSiteActionRevision', message: 'deploy first' } };
    assert.deepEqual(actionView({ report, nodes: [], page: { run: null, total: 0, offset: 0, limit: 1000 } }).failure, {
      type: 'NoSiteActionRevision',
      message: 'deploy first',
    });
  });
});
