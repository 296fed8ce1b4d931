import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actionSteps, dagStatus, executionDate, type StepInput } from './action-steps.ts';

const start = '2026-01-02T03:04:05.000Z';
const times = {
  resolve: { scheduled: '2026-01-02T03:04:05.100Z', started: '2026-01-02T03:04:05.200Z', closed: '2026-01-02T03:04:05.700Z', attempt: 1, failed: false },
  plan: { scheduled: '2026-01-02T03:04:05.800Z', started: '2026-01-02T03:04:06.000Z', closed: '2026-01-02T03:04:08.000Z', attempt: 2, failed: false },
};
const stateOf = (input: Partial<StepInput>) => actionSteps({ execution: 'RUNNING', startTime: start, ...input }).map((s) => s.state);

test('steps follow the run: queued, then each phase running, then done', () => {
  assert.deepEqual(stateOf({}), ['queued', null, null]);
  assert.deepEqual(stateOf({ phase: 'resolving' }), ['running', null, null]);
  assert.deepEqual(stateOf({ phase: 'planning' }), ['success', 'running', null]);
  assert.deepEqual(stateOf({ phase: 'applying' }), ['success', 'success', 'running']);
  assert.deepEqual(stateOf({ execution: 'COMPLETED', status: 'success' }), ['success', 'success', 'success']);
  assert.deepEqual(stateOf({ execution: 'COMPLETED', status: 'partial_success' }), ['success', 'success', 'failed']);
  assert.deepEqual(stateOf({ execution: 'COMPLETED', status: 'failure' }), ['success', 'success', 'failed']);
  assert.deepEqual(stateOf({ execution: 'COMPLETED', status: 'success', dryRun: true }), ['success', 'success', 'skipped']);
});

test('a rejection fails the step that found it, and the later steps are upstream_failed', () => {
  for (const type of ['DocumentValidationFailed', 'NoCommittedRevision', 'NoSiteActionRevision', 'InvalidTargets']) {
    assert.deepEqual(stateOf({ execution: 'FAILED', failure: { type } }), ['failed', 'upstream_failed', 'upstream_failed'], type);
  }
  assert.deepEqual(stateOf({ execution: 'FAILED', failure: { type: 'MassRemovalRefused' } }), ['success', 'failed', 'upstream_failed']);
  assert.deepEqual(stateOf({ execution: 'CANCELLED', planned: true }), ['success', 'success', 'failed']);
  assert.deepEqual(stateOf({ execution: 'CANCELLED', times: { resolve: times.resolve } }), ['success', 'failed', 'upstream_failed']);
  assert.deepEqual(stateOf({ execution: 'TERMINATED' }), ['failed', 'upstream_failed', 'upstream_failed']);
});

test('times come from the activities, the last step ends when the run closed', () => {
  const close = '2026-01-02T03:04:10.000Z';
  const steps = actionSteps({ execution: 'COMPLETED', status: 'success', startTime: start, closeTime: close, times });
  assert.deepEqual(
    steps.map((s) => [s.id, s.index, s.operator, s.start, s.end, s.duration, s.tryNumber]),
    [
      ['validate_site_design', 1, 'resolveRevision', times.resolve.started, times.resolve.closed, 0.5, 1],
      ['plan_labels', 2, 'planRun', times.plan.started, times.plan.closed, 2, 2],
      ['relabel_nodes', 3, 'relabelNode', times.plan.closed, close, 2, 1],
    ],
  );
  const running = actionSteps({ execution: 'RUNNING', phase: 'planning', startTime: start, times: { resolve: times.resolve } });
  assert.deepEqual(running.map((s) => [s.start, s.end, s.duration]), [[times.resolve.started, times.resolve.closed, 0.5], [times.resolve.closed, null, null], [null, null, null]]);
  const rejected = actionSteps({ execution: 'FAILED', failure: { type: 'DocumentValidationFailed' }, startTime: start, closeTime: close });
  assert.deepEqual(rejected.map((s) => [s.start, s.end, s.tryNumber]), [[start, close, 1], [null, null, null], [null, null, null]]);
});

test('dag status and execution dates as Shipyard writes them', () => {
  assert.deepEqual(['Pending', 'Processing', 'Paused', 'Complete', 'Failed'].map(dagStatus), ['queued', 'running', 'paused', 'success', 'failed']);
  assert.equal(executionDate('2026-01-02T03:04:05.678Z'), '2026-01-02T03:04:05.678000');
});
