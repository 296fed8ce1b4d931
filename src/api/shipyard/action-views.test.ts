import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RunStatusReport } from '../../facade/runs/runs.ts';
import type { RunNodeRow } from '../../store/runs/run-store.ts';
import { actionNotes, commandAudit, NOTE_LIMIT, stepFacts, stepLog, stepSummaries, validations, workflowDetail, type ActionFacts } from './action-views.ts';
import { parseNoteId } from './note-ids.ts';

const ID = '01KAX3Z0G2W8Q9T5M7N4R6S1VB';
const start = '2026-01-02T03:04:05.678Z';
const close = '2026-01-02T03:05:00.000Z';

function facts(report: Partial<RunStatusReport>, extra: Partial<ActionFacts> = {}): ActionFacts {
  return {
    id: ID,
    name: 'relabel_nodes',
    report: { workflowId: 'update-labels/s', runId: 'r', execution: 'COMPLETED', startTime: start, closeTime: close, ...report },
    lifecycle: 'Failed',
    failure: null,
    run: 7,
    record: null,
    commands: [],
    times: {},
    failed: { rows: [], total: 0 },
    ...extra,
  };
}

const row = (seq: number, node: string): RunNodeRow => ({
  seq,
  node,
  status: 'failure',
  written: false,
  detail: { error: { type: 'NodeNotFound', message: `node ${node} not found in the cluster` }, attempts: 1 },
});

test('a rejected run says why in its notes, its first step and its validation', () => {
  const message = `revision 3 has invalid documents: ${'x'.repeat(500)}`;
  const f = facts({ execution: 'FAILED' }, { failure: { type: 'DocumentValidationFailed', message } });
  const notes = actionNotes(f);
  assert.equal(notes.length, 1, 'no revision known: only the reason');
  const [reason] = notes;
  assert.equal(reason?.view.note_val.length, 300);
  assert.ok(reason?.view.note_val.startsWith('DocumentValidationFailed: revision 3 has invalid documents'));
  assert.equal(reason?.detail, `DocumentValidationFailed: ${message}`, 'the whole message is the detail');
  assert.equal(reason?.view.resolved_url_value, `Details at notedetails/${reason?.view.note_id}`);
  assert.deepEqual(parseNoteId(reason?.view.note_id ?? ''), { kind: 'A', run: 7, seq: 1 });
  const steps = stepSummaries(f);
  assert.deepEqual(
    steps.map((s) => s.state),
    ['failed', 'upstream_failed', 'upstream_failed'],
  );
  assert.equal(steps[0]?.notes[0]?.assoc_id, `step/${ID}/validate_site_design`);
  assert.match(validations(f)[0]?.details ?? '', /^DocumentValidationFailed: revision 3/);
});

test('failed nodes each get a note up to the limit, then one note counts the rest', () => {
  const rows = Array.from({ length: NOTE_LIMIT }, (_, i) => row(i * 2, `n${i}`));
  const f = facts(
    {
      result: {
        status: 'partial_success',
        run: 7,
        revision: 2,
        site: 's',
        dryRun: false,
        counts: { total: 500, success: 380, failure: 120, written: 380 },
        failures: [],
      },
    },
    { failed: { rows, total: 120 } },
  );
  const notes = actionNotes(f);
  assert.equal(notes.length, 1 + NOTE_LIMIT + 1);
  assert.equal(notes[0]?.view.note_val, 'Configdoc revision 2');
  assert.equal(notes[0]?.detail, null);
  assert.equal(notes[1]?.view.note_val, 'n0: NodeNotFound: node n0 not found in the cluster');
  assert.deepEqual(parseNoteId(notes[2]?.view.note_id ?? ''), { kind: 'F', run: 7, seq: 2 }, 'a node note is named by its position');
  assert.match(
    notes[2]?.detail ?? '',
    /^node: n1\nposition: 2\nstatus: failure\nerror: NodeNotFound: node n1 not found in the cluster\nwritten: false\nattempts: 1$/,
  );
  assert.match(notes.at(-1)?.view.note_val ?? '', /^70 more failed nodes are not listed here; /);
  assert.ok(JSON.stringify(notes.map((n) => n.view)).length < 30_000, 'bounded whatever the failures');
  const apply = stepSummaries(f)[2];
  assert.equal(apply?.state, 'failed');
  assert.equal(apply?.notes[0]?.note_val, "120 of 500 nodes failed; the action's notes name them and why");
});

test('a step log is bounded and counts the nodes it leaves out', () => {
  const f = facts({
    result: { status: 'failure', run: 7, revision: 2, site: 's', dryRun: false, counts: { total: 5000, success: 0, failure: 5000, written: 0 }, failures: [] },
  });
  const apply = stepFacts(f)[2];
  assert.ok(apply);
  const log = stepLog(f, apply, [row(0, 'a'), row(1, 'b')], 5000);
  assert.deepEqual(log.trim().split('\n').slice(1), [
    'a: failure; not written; NodeNotFound: node a not found in the cluster',
    'b: failure; not written; NodeNotFound: node b not found in the cluster',
    `… 4998 more nodes: GET /api/v1.0/actions/${ID}?offset=2&limit=1000 pages them`,
    `[${close}] relabel_nodes: failed`,
  ]);
});

test('a workflow is dated by its first execution and lists the steps', () => {
  const f = facts(
    { result: { status: 'success', run: 7, revision: 2, site: 's', dryRun: false, counts: { total: 1, success: 1, failure: 0, written: 1 }, failures: [] } },
    { lifecycle: 'Complete', times: { started: '2026-01-02T03:00:00.001Z' } },
  );
  const w = workflowDetail(f);
  assert.equal(w.workflow_id, 'relabel_nodes__2026-01-02T03:00:00.001000');
  assert.deepEqual([w.state, w.run_id, w.external_trigger, w.sub_dags], ['success', ID, true, []]);
  assert.deepEqual(
    w.steps.map((s) => [s.task_id, s.state]),
    [
      ['validate_site_design', 'success'],
      ['plan_labels', 'success'],
      ['relabel_nodes', 'success'],
    ],
  );
  const at = new Date('2026-01-02T03:04:06.000Z');
  assert.deepEqual(commandAudit(facts({}, { commands: [{ id: 'C', command: 'invoke', user: 'ops', at }] })), [
    { id: 'C', action_id: ID, command: 'invoke', user: 'ops', datetime: at.toISOString() },
  ]);
});
