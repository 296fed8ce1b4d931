import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunStatusReport } from '../facade/runs/runs.ts';
import type { Progress, WaveProgress } from '../contracts/messages.ts';
import { outcomeText, progressLine, reportText } from './run-output.ts';
import { gateAnswerText, waveLine, waveLines, waveResultLines } from './wave-output.ts';

const ID = 'update-labels/site-a';
const wave = (extra: Partial<WaveProgress> = {}): WaveProgress => ({ current: { index: 1, name: 'rack r2', nodes: 12 }, count: 5, ...extra });
const progress = (w?: WaveProgress): Progress => ({
  phase: 'applying',
  dryRun: false,
  total: 60,
  counts: { pending: 36, running: 0, success: 24, failure: 0, written: 24 },
  failures: [],
  ...(w ? { wave: w } : {}),
});
const running = (w?: WaveProgress): RunStatusReport => ({
  workflowId: ID,
  runId: 'r1',
  execution: 'RUNNING',
  startTime: '2026-01-01T00:00:00.000Z',
  progress: progress(w),
});

test('a running run in waves names its wave, numbered from 1', () => {
  assert.equal(waveLine(wave()), 'wave 2 of 5 (rack r2, 12 nodes)');
  assert.equal(waveLine(wave({ current: { index: 0, name: 'canary', nodes: 1 } })), 'wave 1 of 5 (canary, 1 node)');
  assert.deepEqual(waveLines(wave(), ID), ['wave 2 of 5 (rack r2, 12 nodes)'], 'applying: nothing waited for');
});

test('what a gate waits for comes with the command that moves the run on', () => {
  assert.deepEqual(waveLines(wave({ waiting: 'approval' }), ID), ['wave 2 of 5 (rack r2, 12 nodes)', `waiting for approval: relabel approve ${ID}`]);
  assert.equal(
    waveLines(wave({ waiting: 'halted', reason: '3 nodes failed (max_failed_nodes 0)' }), ID)[1],
    `halted: 3 nodes failed (max_failed_nodes 0) — relabel resume ${ID} or relabel abort ${ID}`,
  );
  assert.equal(
    waveLines(
      wave({ waiting: 'halted', reason: 'wave 2 (rack r2): 3 node(s) failed, more than the 0 allowed; resume to go on, abort to end the run here' }),
      ID,
    )[1],
    `halted: wave 2 (rack r2): 3 node(s) failed, more than the 0 allowed — relabel resume ${ID} or relabel abort ${ID}`,
    'the words of what to do give way to the commands',
  );
  assert.equal(waveLines(wave({ waiting: 'health', reason: 'ceph/ceph-osd: 2 of 12 pods Ready' }), ID)[1], 'health gate: ceph/ceph-osd: 2 of 12 pods Ready');
  assert.match(waveLines(wave({ waiting: 'health' }), ID)[1] ?? '', /^health gate: waiting for the wave's DaemonSet pods/);
  assert.equal(waveLines(wave({ approved: { wave: 0, by: 'ops-alice' } }), ID)[1], 'approved after wave 1 by ops-alice');
});

test('status shows the wave under the progress line, and the live line carries it short', () => {
  const text = reportText(running(wave({ waiting: 'approval' })));
  assert.match(text, /progress: applying \[wave 2\/5 rack r2, waiting for approval\]: 24\/60 done/);
  assert.match(text, /\nwave 2 of 5 \(rack r2, 12 nodes\)\nwaiting for approval: relabel approve update-labels\/site-a/);
  assert.doesNotMatch(reportText(running()), /wave/, 'a run without waves shows none');
  assert.equal(progressLine(progress()), 'applying: 24/60 done (24 ok, 0 failed, 0 running, 36 pending, 24 written)', 'unchanged without waves');
});

test('the final result says how many waves and who aborted after which', () => {
  assert.deepEqual(waveResultLines({}), []);
  assert.deepEqual(waveResultLines({ waves: 5 }), ['waves: 5']);
  const aborted = waveResultLines({ waves: 5, aborted: { wave: 1, by: 'ops-bob', notStarted: 36 } });
  assert.equal(aborted[1], 'aborted after wave 2 by ops-bob: 36 node(s) of later waves were not started (nothing written to them)');
  const report: RunStatusReport = {
    workflowId: ID,
    runId: 'r1',
    execution: 'COMPLETED',
    startTime: '2026-01-01T00:00:00.000Z',
    result: {
      status: 'partial_success',
      run: 3,
      revision: 2,
      site: 'site-a',
      dryRun: false,
      counts: { total: 60, success: 24, failure: 0, written: 24 },
      failures: [],
      waves: 5,
      aborted: { wave: 1, by: 'ops-bob', notStarted: 36 },
    },
  };
  assert.match(outcomeText(report), /status: partial_success: 24 of 60 node\(s\) succeeded, 0 failed, 24 written\nwaves: 5\naborted after wave 2 by ops-bob/);
});

test('a gate verb says what it did and where the run stands', () => {
  const answer = {
    paused: false,
    changed: true,
    running: 3,
    pending: 36,
    wave: wave({ current: { index: 2, name: 'rack r3', nodes: 12 }, approved: { wave: 1, by: 'ops-alice' } }),
  };
  assert.equal(
    gateAnswerText('approve', ID, 'r1', answer),
    `${ID} (run r1) approved: 3 node(s) running, 36 not started\nwave 3 of 5 (rack r3, 12 nodes)\napproved after wave 2 by ops-alice`,
  );
  assert.match(
    gateAnswerText('abort', ID, 'r1', undefined),
    /aborted: no more nodes start; those not started are settled as not started, and the run ends as a partial run$/,
  );
});
