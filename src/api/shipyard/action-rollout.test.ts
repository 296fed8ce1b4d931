import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunStatusReport } from '../../facade/runs/runs.ts';
import type { WaveProgress } from '../../contracts/messages.ts';
import { appliedVerb, rolloutOfParameters, waitsForPerson, waveState } from './action-rollout.ts';
import { ActionView } from '../http/response-schemas.ts';
import { issueMessages } from '../http/route.ts';
import { actionView } from '../runs/run-views.ts';
import { ActionControlPath, ActionRequest } from '../http/schemas.ts';

const request = (parameters: Record<string, unknown>) =>
  ActionRequest.safeParse({ name: 'update_labels', parameters: { target_nodes: 'n1,n2', ...parameters } });

test('the rollout parameters parse as JSON values or as the text shipyard create action --param sends', () => {
  const json = request({ waves: 'rack', wave_size: '10%', canary: 1, approval: 'first', health_timeout_seconds: 600, max_failed_nodes: 0 });
  assert.ok(json.success);
  assert.deepEqual(rolloutOfParameters(json.data.parameters), {
    by: 'rack',
    size: { percent: 10 },
    canary: 1,
    approval: 'first',
    healthTimeoutSeconds: 600,
    maxFailedNodes: 0,
  });
  const text = request({ waves: 'label:example.com/ceph-osd', wave_size: '25', canary: '2', health_timeout_seconds: '0', max_failed_nodes: '3' });
  assert.ok(text.success);
  assert.deepEqual(rolloutOfParameters(text.data.parameters), {
    by: { label: 'example.com/ceph-osd' },
    size: { count: 25 },
    canary: 2,
    healthTimeoutSeconds: 0,
    maxFailedNodes: 3,
  });
  assert.deepEqual(rolloutOfParameters({ ...(request({}).data?.parameters ?? {}) }), undefined, 'none given: the policy decides');
  assert.deepEqual(request({ wave_size: 5 }).data?.parameters.wave_size, { count: 5 });
});

test('a bad rollout parameter is refused naming it, with the reason', () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ waves: 'row' }, /^body\.parameters\.waves: waves "row": expected rack, label:<key> or none$/],
    [{ wave_size: '0%' }, /^body\.parameters\.wave_size: wave size "0%": expected a positive count/],
    [{ canary: 0 }, /^body\.parameters\.canary: must be a whole number of nodes ≥ 1$/],
    [{ canary: 1.5 }, /^body\.parameters\.canary: must be a whole number/],
    [{ approval: 'always' }, /^body\.parameters\.approval: must be one of none, first, each$/],
    [{ health_timeout_seconds: '86401' }, /^body\.parameters\.health_timeout_seconds: must be whole seconds from 0 to 86400$/],
    [{ max_failed_nodes: -1 }, /^body\.parameters\.max_failed_nodes: must be a whole number of nodes ≥ 0$/],
    [{ max_failed_nodes: true }, /^body\.parameters\.max_failed_nodes: /],
    [{ waves: 'rack', wave: 'x' }, /^body\.parameters\.wave: unknown field$/],
  ];
  for (const [parameters, message] of cases) {
    const parsed = request(parameters);
    assert.ok(!parsed.success, JSON.stringify(parameters));
    const messages = issueMessages(parsed.error, 'body');
    assert.equal(messages.length, 1, messages.join('; '));
    assert.match(messages[0] ?? '', message);
  }
});

test("Shipyard's unpause moves a run on at a gate; the other verbs are applied as given", () => {
  const wave = (waiting?: WaveProgress['waiting']): WaveProgress => ({
    current: { index: 0, name: 'canary', nodes: 1 },
    count: 4,
    ...(waiting ? { waiting } : {}),
  });
  assert.equal(appliedVerb('unpause', { wave: wave('approval') }), 'approve');
  assert.equal(appliedVerb('unpause', { wave: wave('halted') }), 'resume');
  assert.equal(appliedVerb('unpause', { wave: wave('health') }), 'unpause', 'the health gate passes by itself');
  assert.equal(appliedVerb('unpause', { wave: wave() }), 'unpause');
  assert.equal(appliedVerb('unpause', { paused: true, wave: wave('approval') }), 'unpause', 'a paused run is unpaused first');
  assert.equal(appliedVerb('unpause', undefined), 'unpause');
  assert.equal(appliedVerb('stop', { wave: wave('approval') }), 'stop', 'stop stays a cancellation');
  assert.equal(appliedVerb('abort', { wave: wave('halted') }), 'abort');
  assert.ok(waitsForPerson({ wave: wave('approval') }) && waitsForPerson({ wave: wave('halted') }));
  assert.ok(!waitsForPerson({ wave: wave('health') }) && !waitsForPerson({}));
  for (const verb of ['pause', 'unpause', 'stop', 'approve', 'resume', 'abort']) assert.ok(ActionControlPath.safeParse({ id: 'x', verb }).success, verb);
  assert.match(
    ActionControlPath.safeParse({ id: 'x', verb: 'skip' }).error?.issues[0]?.message ?? '',
    /"pause", "unpause", "stop", "approve", "resume", "abort"/,
  );
});

test('an action in waves shows its wave; one waiting for a person is Paused', () => {
  const halted: WaveProgress = {
    current: { index: 1, name: 'rack r2', nodes: 12 },
    count: 5,
    waiting: 'halted',
    reason: '2 nodes failed',
    approved: { wave: 0, by: 'ops-alice' },
  };
  const report: RunStatusReport = {
    workflowId: 'update-labels/s',
    runId: 'r',
    execution: 'RUNNING',
    startTime: '2026-01-01T00:00:00.000Z',
    progress: {
      phase: 'applying',
      run: 4,
      dryRun: false,
      total: 60,
      counts: { pending: 47, running: 0, success: 11, failure: 2, written: 11 },
      failures: [],
      wave: halted,
    },
  };
  const view = ActionView.parse(actionView({ report, nodes: [], page: { run: 4, total: 60, offset: 0, limit: 1 } }));
  assert.equal(view.action_lifecycle, 'Paused');
  assert.equal(view.dag_status, 'paused');
  assert.deepEqual(view.waves, {
    count: 5,
    current: { index: 1, name: 'rack r2', nodes: 12, step_id: 'relabel_wave_2' },
    waiting: 'halted',
    reason: '2 nodes failed',
    approved: { wave: 0, by: 'ops-alice' },
    aborted: null,
  });
  const health = ActionView.parse(
    actionView({
      report: { ...report, progress: { ...report.progress!, wave: { ...halted, waiting: 'health' } } },
      nodes: [],
      page: { run: 4, total: 60, offset: 0, limit: 1 },
    }),
  );
  assert.equal(health.action_lifecycle, 'Processing', 'the health gate passes by itself');
  assert.deepEqual(waveState(undefined, { waves: 5, aborted: { wave: 1, by: 'ops-bob', notStarted: 36 } })?.aborted, {
    wave: 1,
    by: 'ops-bob',
    not_started: 36,
  });
  assert.equal(waveState(undefined, {}), null, 'no waves');
  assert.equal(waveState(undefined, undefined), null);
});
