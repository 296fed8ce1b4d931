import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunStatusReport } from '../../facade/runs/runs.ts';
import type { RunNodeRow, RunWave } from '../../store/runs/run-store.ts';
import type { WaveProgress } from '../../contracts/messages.ts';
import { StepDetailView, StepSummaryView } from './action-schemas.ts';
import { stepDetail, stepFacts, stepLog, stepSummaries, workflowDetail, type ActionFacts } from './action-views.ts';
import { ActionView } from '../http/response-schemas.ts';
import { actionView } from '../runs/run-views.ts';
import { waveNoteText, type WaveFacts } from './wave-steps.ts';

const ID = '01KAX3Z0G2W8Q9T5M7N4R6S1VB';
const start = '2026-01-02T03:04:05.678Z';
const waves: RunWave[] = [
  { index: 0, name: 'canary', nodes: 1, success: 1, failure: 0, cancelled: 0, pending: 0 },
  { index: 1, name: 'rack rack-a', nodes: 3, success: 3, failure: 0, cancelled: 0, pending: 0 },
  { index: 2, name: 'rack rack-b', nodes: 4, success: 0, failure: 0, cancelled: 0, pending: 4 },
];
const waiting: WaveProgress = { current: { index: 1, name: 'rack rack-a', nodes: 3 }, count: 3, waiting: 'approval' };

function report(wave: WaveProgress = waiting): RunStatusReport {
  return {
    workflowId: 'update-labels/s',
    runId: 'r',
    execution: 'RUNNING',
    startTime: start,
    run: 7,
    progress: {
      phase: 'applying',
      run: 7,
      dryRun: false,
      total: 8,
      counts: { pending: 4, running: 0, success: 4, failure: 0, written: 4 },
      failures: [],
      wave,
    },
  };
}

function facts(extra: Partial<ActionFacts> = {}): ActionFacts {
  return {
    id: ID,
    name: 'update_labels',
    report: report(),
    lifecycle: 'Paused',
    failure: null,
    run: 7,
    record: null,
    commands: [],
    times: {},
    failed: { rows: [], total: 0 },
    waves,
    ...extra,
  };
}

test("a wave's note names it, counts its nodes and says what its gate waits for and how to move it on", () => {
  const w: WaveFacts = { ...(waves[1] as RunWave), count: 3, waiting: 'approval' };
  assert.equal(
    waveNoteText(w, false),
    'wave 2 of 3: rack rack-a (3 nodes: 3 succeeded, 0 failed, 0 not done); waiting for approval: unpause (or approve) the action to go on, abort to end it here',
  );
  assert.match(waveNoteText({ ...w, waiting: 'halted' }, false), /halted: unpause \(or resume\) the action to go on, abort to end it here$/);
  assert.match(
    waveNoteText({ ...w, waiting: undefined, more: 4900 }, true),
    /paused: no node starts until the action is unpaused; 4900 more waves not listed as steps/,
  );
});

test('the wave steps pass the step schemas, each with its note; the workflow lists them too', () => {
  const f = facts();
  const summaries = stepSummaries(f);
  assert.deepEqual(
    summaries.map((s) => [s.id, s.state]),
    [
      ['validate_site_design', 'success'],
      ['plan_labels', 'success'],
      ['relabel_wave_1', 'success'],
      ['relabel_wave_2', 'up_for_reschedule'],
      ['relabel_wave_3', null],
    ],
  );
  for (const s of summaries) StepSummaryView.parse(s);
  assert.equal(summaries[3]?.url, `/actions/${ID}/steps/relabel_wave_2`);
  assert.match(summaries[3]?.notes[0]?.note_val ?? '', /^wave 2 of 3: rack rack-a .*waiting for approval/);
  assert.equal(summaries[3]?.notes[0]?.assoc_id, `step/${ID}/relabel_wave_2`);
  const ids = summaries.flatMap((s) => s.notes.map((n) => n.note_id));
  assert.equal(new Set(ids).size, ids.length, 'one id per note');
  StepDetailView.parse(stepDetail(f, stepFacts(f)[3]!));
  assert.deepEqual(
    workflowDetail(f).steps.map((s) => s.task_id),
    ['validate_site_design', 'plan_labels', 'relabel_wave_1', 'relabel_wave_2', 'relabel_wave_3'],
  );
  const view = ActionView.parse(
    actionView({
      report: report(),
      nodes: [],
      page: { run: 7, total: 8, offset: 0, limit: 1 },
      action: { record: null, commands: [], times: {}, failed: { rows: [], total: 0 }, counts: null, waves },
    }),
  );
  assert.deepEqual(view.steps.map((s) => s.id).slice(2), ['relabel_wave_1', 'relabel_wave_2', 'relabel_wave_3']);
  assert.equal(view.action_lifecycle, 'Paused');
});

test("a wave's log names the wave and lists its nodes", () => {
  const f = facts({ report: report({ ...waiting, waiting: undefined }) });
  const step = stepFacts(f)[3]!;
  const rows: RunNodeRow[] = [{ seq: 1, node: 'n1', status: 'success', written: true, detail: { set: { 'example.com/ceph-osd': 'enabled' } } }];
  const log = stepLog(f, step, rows, 3);
  assert.match(log, /^\[-\] relabel_wave_2 \(apply wave 2 of 3, rack rack-a: write each of its nodes, verify it, and record its outcome\): running\n/);
  assert.match(log, /\nwave 2 of 3: rack rack-a \(3 nodes: 3 succeeded, 0 failed, 0 not done\)\nn1: success; written; set example.com\/ceph-osd\n/);
  assert.match(log, /… 2 more nodes of this wave/);
});
