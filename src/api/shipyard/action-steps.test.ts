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
  assert.deepEqual(
    running.map((s) => [s.start, s.end, s.duration]),
    [
      [times.resolve.started, times.resolve.closed, 0.5],
      [times.resolve.closed, null, null],
      [null, null, null],
    ],
  );
  const rejected = actionSteps({ execution: 'FAILED', failure: { type: 'DocumentValidationFailed' }, startTime: start, closeTime: close });
  assert.deepEqual(
    rejected.map((s) => [s.start, s.end, s.tryNumber]),
    [
      [start, close, 1],
      [null, null, null],
      [null, null, null],
    ],
  );
});

test('dag status and execution dates as Shipyard writes them', () => {
  assert.deepEqual(['Pending', 'Processing', 'Paused', 'Complete', 'Failed'].map(dagStatus), ['queued', 'running', 'paused', 'success', 'failed']);
  assert.equal(executionDate('2026-01-02T03:04:05.678Z'), '2026-01-02T03:04:05.678000');
});

/** A wave as the store counts it. */
const wave = (index: number, nodes: number, c: Partial<{ success: number; failure: number; cancelled: number }> = {}) => {
  const success = c.success ?? 0;
  const failure = c.failure ?? 0;
  const cancelled = c.cancelled ?? 0;
  return { index, name: index === 0 ? 'canary' : `rack r${index}`, nodes, success, failure, cancelled, pending: nodes - success - failure - cancelled };
};
const wavesOf = (input: Partial<StepInput>) => actionSteps({ execution: 'RUNNING', startTime: start, ...input }).slice(2);

test("a run in waves has one step per wave instead of relabel_nodes, its id the wave's position", () => {
  const waves = [wave(0, 1, { success: 1 }), wave(1, 4, { success: 2 }), wave(2, 4)];
  const steps = actionSteps({ execution: 'RUNNING', phase: 'applying', startTime: start, times, waves: { waves, count: 3, current: { index: 1 } } });
  assert.deepEqual(
    steps.map((s) => [s.id, s.index, s.state]),
    [
      ['validate_site_design', 1, 'success'],
      ['plan_labels', 2, 'success'],
      ['relabel_wave_1', 3, 'success'],
      ['relabel_wave_2', 4, 'running'],
      ['relabel_wave_3', 5, null],
    ],
  );
  assert.deepEqual(
    steps.slice(2).map((s) => [s.wave?.name, s.start, s.tryNumber]),
    [
      ['canary', times.plan.closed, 1],
      ['rack r1', null, 1],
      ['rack r2', null, null],
    ],
  );
  assert.equal(
    actionSteps({ execution: 'RUNNING', phase: 'applying', startTime: start, waves: { waves: [] } }).at(-1)?.id,
    'relabel_nodes',
    'no waves recorded: one step',
  );
});

test('a wave whose gate waits is up_for_reschedule, whatever the gate; later waves are not reached', () => {
  for (const waiting of ['health', 'approval', 'halted'] as const) {
    const waves = [wave(0, 1, { success: 1 }), wave(1, 4, { success: 3, failure: 1 }), wave(2, 4)];
    const steps = wavesOf({ phase: 'applying', waves: { waves, count: 3, current: { index: 1, waiting } } });
    assert.deepEqual(
      steps.map((s) => s.state),
      ['success', 'up_for_reschedule', null],
      waiting,
    );
    assert.equal(steps[1]?.wave?.waiting, waiting);
  }
  const failedEarlier = wavesOf({
    phase: 'applying',
    waves: { waves: [wave(0, 2, { success: 1, failure: 1 }), wave(1, 2, { success: 1 })], count: 2, current: { index: 1 } },
  });
  assert.deepEqual(
    failedEarlier.map((s) => s.state),
    ['failed', 'running'],
    'an earlier wave with a failure is failed',
  );
  const unknown = wavesOf({ phase: 'applying', waves: { waves: [wave(0, 2, { success: 2 }), wave(1, 2, { success: 1 }), wave(2, 2)] } });
  assert.deepEqual(
    unknown.map((s) => s.state),
    ['success', 'running', null],
    'no current wave reported: by the counts',
  );
});

test('once ended, each wave by its counts; waves not started are skipped when aborted, upstream_failed when stopped', () => {
  const close = '2026-01-02T03:05:00.000Z';
  const done = wavesOf({
    execution: 'COMPLETED',
    status: 'partial_success',
    closeTime: close,
    times,
    waves: { waves: [wave(0, 1, { success: 1 }), wave(1, 4, { success: 3, failure: 1 })], count: 2 },
  });
  assert.deepEqual(
    done.map((s) => [s.state, s.end]),
    [
      ['success', null],
      ['failed', close],
    ],
    'the last wave ends when the run closed',
  );
  const aborted = wavesOf({
    execution: 'COMPLETED',
    status: 'partial_success',
    waves: { waves: [wave(0, 1, { success: 1 }), wave(1, 4, { cancelled: 4 }), wave(2, 4, { cancelled: 4 })], count: 3, aborted: true },
  });
  assert.deepEqual(
    aborted.map((s) => [s.state, s.tryNumber]),
    [
      ['success', 1],
      ['skipped', null],
      ['skipped', null],
    ],
  );
  const stopped = wavesOf({
    execution: 'CANCELLED',
    planned: true,
    waves: { waves: [wave(0, 1, { success: 1 }), wave(1, 4, { success: 2, cancelled: 2 }), wave(2, 4, { cancelled: 4 })], count: 3 },
  });
  assert.deepEqual(
    stopped.map((s) => s.state),
    ['success', 'failed', 'upstream_failed'],
    'the wave stopped midway did not finish',
  );
  const rejected = wavesOf({ execution: 'FAILED', failure: { type: 'MassRemovalRefused' }, waves: { waves: [wave(0, 1), wave(1, 4)], count: 2 } });
  assert.deepEqual(
    rejected.map((s) => s.state),
    ['upstream_failed', 'upstream_failed'],
  );
  const queued = wavesOf({ phase: 'planning', waves: { waves: [wave(0, 1), wave(1, 4)], count: 2 } });
  assert.deepEqual(
    queued.map((s) => s.state),
    [null, null],
  );
});

test('at most 100 wave steps are listed, the last saying how many more', () => {
  const waves = Array.from({ length: 101 }, (_, i) => wave(i, 10));
  const steps = wavesOf({ phase: 'applying', waves: { waves, count: 5000, current: { index: 0 } } });
  assert.equal(steps.length, 100);
  assert.equal(steps.at(-1)?.id, 'relabel_wave_100');
  assert.equal(steps.at(-1)?.wave?.more, 4900);
  assert.equal(steps.slice(0, -1).filter((s) => s.wave?.more !== undefined).length, 0);
  assert.equal(
    wavesOf({ phase: 'applying', waves: { waves: waves.slice(0, 3), current: { index: 0 } } }).at(-1)?.wave?.more,
    undefined,
    'count unknown: the waves given',
  );
});
