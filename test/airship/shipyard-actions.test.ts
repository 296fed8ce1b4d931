/**
 * Contract tests of Shipyard's action commands against relabel's API on the
 * real stack. Each request is built as the Shipyard client builds it
 * (`shipyard_client.api_client.shipyard_api_client` over `BaseClient`), and
 * every field the CLI's formatters read (`cli_format_common`, the
 * describe/get/logs actions) is asserted on the answer, as the CLI would
 * print it: `get actions`, `describe action`, `describe step`, `describe
 * validation`, `describe notedetails`, `logs step`, `get workflows`,
 * `describe workflow`. Written from reading the client, not copied.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { CommitStatus } from '../../src/api/http/response-schemas.ts';
import { noteId, parseNoteId } from '../../src/api/shipyard/note-ids.ts';
import { encodeRunId } from '../../src/api/runs/run-ids.ts';
import { adminCore, createNode, type startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite } from '../site.ts';
import { ADMIN, emptyStoreUrl, eventually, startApiAndWorker, type Answer, type TestApi } from '../api-support.ts';

/** A params dict as python-requests encodes it (None left out, `str()` of the rest). */
function query(params: Record<string, string | number | boolean | null>): string {
  const pairs = Object.entries(params)
    .filter(([, v]) => v !== null)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v))}`);
  return pairs.length ? `?${pairs.join('&')}` : '';
}

/**
 * The Shipyard client's calls: `get_resp` sends X-Context-Marker and
 * X-Auth-Token and adds `verbosity` (the CLI's default 1) to the query;
 * `post_resp` adds the content type.
 */
function shipyard(api: TestApi) {
  const marker = randomUUID();
  const get = (path: string, params: Record<string, string | number | boolean | null> = {}) =>
    api.call('GET', `/api/v1.0/${path}${query({ ...params, verbosity: 1 })}`, { token: null, headers: { 'X-Context-Marker': marker, 'X-Auth-Token': ADMIN } });
  return {
    marker,
    /** `post_actions(name, parameters, allow_intermediate_commits)`: JSON body, the flag in the query. */
    postActions: (name: string, parameters: Record<string, string>) =>
      api.call('POST', `/api/v1.0/actions${query({ 'allow-intermediate-commits': false, verbosity: 1 })}`, {
        token: null,
        headers: { 'X-Context-Marker': marker, 'X-Auth-Token': ADMIN },
        body: JSON.stringify({ name, parameters }),
        type: 'application/json',
      }),
    getActions: () => get('actions'),
    getActionDetail: (id: string) => get(`actions/${id}`),
    getStepDetail: (id: string, step: string) => get(`actions/${id}/steps/${step}`),
    getStepLog: (id: string, step: string, tryNumber: number | null = null) => get(`actions/${id}/steps/${step}/logs`, { try: tryNumber }),
    getValidationDetail: (id: string, validation: string) => get(`actions/${id}/validations/${validation}`),
    getNoteDetails: (note: string) => get(`notedetails/${note}`),
    getWorkflows: (since: string | null = null) => get('workflows', { since }),
    getDagDetail: (workflow: string) => get(`workflows/${workflow}`),
    /** `post_control_action(action_id, control_verb)`: `post_resp` with no data (so no body) and its default content type. */
    postControlAction: (id: string, verb: string) =>
      api.call('POST', `/api/v1.0/actions/${id}/control/${verb}${query({ verbosity: 1 })}`, {
        token: null,
        headers: { 'X-Context-Marker': marker, 'content-type': 'application/x-yaml', 'X-Auth-Token': ADMIN },
      }),
  };
}

/** `input_checks.check_id`: the CLI refuses any id that is not 26 letters and digits. */
const assertCliId = (id: unknown) => assert.match(String(id), /^[A-Za-z0-9]{26}$/, `the CLI's check_id accepts ${String(id)}`);
/** `check_workflow_id`: `<dag>__<YYYY-MM-DDTHH:mm:ss.SSSSSS>`. */
const assertWorkflowId = (id: unknown) => assert.match(String(id), /^[a-z_]+__\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/);

/** Asserts every key the CLI reads is present (Python's `dict.get` would print None for a missing one). */
function assertReads(what: string, value: Record<string, unknown>, keys: readonly string[]): void {
  for (const key of keys) assert.ok(key in value, `${what} has ${key}: ${JSON.stringify(value).slice(0, 300)}`);
}

/** `format_notes` reads these with `n[...]`: a note missing one prints as unparseable. */
const NOTE_KEYS = ['sub_type', 'subject', 'note_timestamp', 'note_val', 'resolved_url_value', 'note_id'] as const;

function json(answer: Answer, code = 200): any {
  assert.equal(answer.status, code, answer.text.slice(0, 500));
  assert.match(answer.headers.get('content-type') ?? '', /^application\/json/);
  return answer.json;
}

describe('Shipyard CLI commands on actions and workflows', () => {
  const prefix = `sya${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const [n0, n1, absent] = site.nodes as [string, string, string];
  const storeUrl = emptyStoreUrl();
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;
  let sy: ReturnType<typeof shipyard>;

  before(async () => {
    // `absent` is in the design but not in the cluster: its node fails NodeNotFound.
    ({ worker, api } = await startApiAndWorker(storeUrl, [n0, n1], { 'example.com/owner': 'people' }));
    sy = shipyard(api);
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: site.files.map((f) => f.text).join('') })).status, 201);
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs', { headers: { 'content-type': 'application/x-yaml' } });
    const revision = CommitStatus.parse(commit.json).revision.id;
    assert.equal((await api.call('POST', `/api/v1.0/revisions/${revision}/tags/site-action-success`, { body: {} })).status, 201);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('a partly failed relabel_nodes action: every command shows the failed node and why', async () => {
    // shipyard create action relabel_nodes --param="target_nodes=a,b,c"
    const created = await sy.postActions('relabel_nodes', { target_nodes: `${n0},${n1},${absent}` });
    const started = json(created, 201);
    assertCliId(started.id);
    assert.equal(created.headers.get('location'), `/api/v1.0/actions/${started.id}`);
    // create action prints gen_action_table of the answer: name, id, action_lifecycle, dag_execution_date, steps, notes.
    assertReads('created action', started, ['name', 'id', 'action_lifecycle', 'dag_execution_date', 'steps', 'notes']);
    assert.deepEqual([started.name, started.action_lifecycle, started.steps.length], ['relabel_nodes', 'Pending', 3]);

    // shipyard describe action/<id>
    const action = await eventually(
      async () => json(await sy.getActionDetail(started.id)),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
      60_000,
      200,
    );
    assertReads('action', action, [
      'name',
      'id',
      'action_lifecycle',
      'parameters',
      'datetime',
      'dag_status',
      'context_marker',
      'user',
      'steps',
      'command_audit',
      'validations',
      'notes',
    ]);
    assert.equal(action.id, started.id);
    assert.equal(action.name, 'relabel_nodes');
    assert.equal(action.action_lifecycle, 'Failed');
    assert.equal(action.dag_status, 'failed');
    assert.equal(action.context_marker, sy.marker, "the client's X-Context-Marker, as Shipyard keeps it");
    assert.ok(typeof action.user === 'string' && action.user.length > 0);
    assert.ok(!Number.isNaN(Date.parse(action.datetime)));
    assert.deepEqual(action.parameters, { target_nodes: [n0, n1, absent] });

    // gen_action_steps: id, index, state, notes (footnotes)
    assert.deepEqual(
      action.steps.map((s: any) => [s.id, s.index, s.state]),
      [
        ['validate_site_design', 1, 'success'],
        ['plan_labels', 2, 'success'],
        ['relabel_nodes', 3, 'failed'],
      ],
    );
    for (const step of action.steps) {
      assertReads('step', step, ['id', 'index', 'state', 'notes']);
      assert.equal(step.url, `/actions/${action.id}/steps/${step.id}`);
      for (const note of step.notes) assertReads('step note', note, NOTE_KEYS);
    }
    const applyNote = action.steps[2].notes[0];
    assert.equal(applyNote.note_val, "1 of 3 nodes failed; the action's notes name them and why");
    assert.equal(applyNote.sub_type, 'step');

    // gen_action_commands: command, user, datetime
    assert.deepEqual(
      action.command_audit.map((c: any) => [c.command, c.user]),
      [['invoke', action.user]],
    );
    assertReads('command', action.command_audit[0], ['command', 'user', 'datetime']);

    // gen_action_validations: validation_name, action_id, id, details
    assert.equal(action.validations.length, 1);
    const validation = action.validations[0];
    assertReads('validation', validation, ['validation_name', 'action_id', 'id', 'details']);
    assert.equal(validation.action_id, action.id);
    assertCliId(validation.id);
    assert.match(validation.details, /passed/);

    // gen_detail_notes("Action", …): the revision note, then the failed node with its reason
    for (const note of action.notes) assertReads('action note', note, NOTE_KEYS);
    assert.match(action.notes[0].note_val, /^Configdoc revision \d+$/);
    const failed = action.notes.filter((n: any) => n.note_val.startsWith(`${absent}:`));
    assert.equal(failed.length, 1, JSON.stringify(action.notes));
    assert.match(failed[0].note_val, new RegExp(`^${absent}: NodeNotFound: `));
    assert.equal(failed[0].sub_type, 'action');
    assert.equal(failed[0].subject, action.id);
    assertCliId(failed[0].note_id);
    assert.equal(failed[0].resolved_url_value, `Details at notedetails/${failed[0].note_id}`);
    assert.equal(action.notes.length, 2, 'no note for the nodes that succeeded');

    // shipyard describe notedetails/<note id>: plain text
    const detail = await sy.getNoteDetails(failed[0].note_id);
    assert.equal(detail.status, 200, detail.text);
    assert.match(detail.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(detail.text, new RegExp(`^node: ${absent}$`, 'm'));
    assert.match(detail.text, /^error: NodeNotFound: /m);
    assert.match(detail.text, /^written: false$/m);
    assert.equal((await sy.getNoteDetails(action.notes[0].note_id)).status, 404, 'the revision note has no details');
    assert.equal((await sy.getNoteDetails('F00000000000Z0000000000000')).status, 404);
    assert.equal((await sy.getNoteDetails('short')).status, 400);

    // shipyard describe step/<action id>/relabel_nodes: gen_action_step_details
    const step = json(await sy.getStepDetail(action.id, 'relabel_nodes'));
    assertReads('step detail', step, ['task_id', 'index', 'state', 'start_date', 'end_date', 'duration', 'try_number', 'operator', 'notes']);
    assert.deepEqual([step.task_id, step.index, step.state, step.try_number, step.operator], ['relabel_nodes', 3, 'failed', 1, 'relabelNode']);
    assert.ok(Date.parse(step.end_date) >= Date.parse(step.start_date));
    assert.equal(step.duration, (Date.parse(step.end_date) - Date.parse(step.start_date)) / 1000);
    assert.equal(step.dag_id, 'relabel_nodes');
    assert.equal(step.execution_date, action.dag_execution_date);
    assert.deepEqual(step.notes, action.steps[2].notes);
    const plan = json(await sy.getStepDetail(action.id, 'plan_labels'));
    assert.deepEqual([plan.state, plan.operator], ['success', 'planRun']);
    assert.ok(plan.start_date && plan.end_date && Date.parse(plan.end_date) <= Date.parse(step.end_date), 'plan times from the history');
    assert.equal((await sy.getStepDetail(action.id, 'deploy_site')).status, 404);

    // shipyard logs step/<action id>/relabel_nodes (raw text), with and without --try
    for (const attempt of [null, 1]) {
      const log = await sy.getStepLog(action.id, 'relabel_nodes', attempt);
      assert.equal(log.status, 200, log.text);
      assert.match(log.headers.get('content-type') ?? '', /^text\/plain/);
      assert.match(log.text, new RegExp(`^${absent}: failure; not written; NodeNotFound: `, 'm'));
      assert.match(log.text, new RegExp(`^${n0}: success; written; set `, 'm'));
      assert.ok(log.text.split('\n').length < 20);
    }
    assert.match((await sy.getStepLog(action.id, 'validate_site_design')).text, /^revision \d+$/m);

    // shipyard describe validation/<validation id>/<action id>
    const found = json(await sy.getValidationDetail(action.id, validation.id));
    assert.deepEqual(found, validation);
    assert.equal((await sy.getValidationDetail(action.id, 'V00000000000Z0000000000000')).status, 404);

    // shipyard get actions: gen_action_table reads name, id, action_lifecycle, dag_execution_date, steps[].state, notes
    const listed = json(await sy.getActions()).find((a: any) => a.id === action.id);
    assert.ok(listed, 'the action is listed');
    assertReads('listed action', listed, ['name', 'id', 'action_lifecycle', 'dag_execution_date', 'steps', 'notes']);
    assert.deepEqual([listed.name, listed.action_lifecycle, listed.dag_execution_date], ['relabel_nodes', 'Failed', action.dag_execution_date]);
    // _step_summary: success/failed/other
    const summary = ['success', 'failed'].map((s) => listed.steps.filter((x: any) => x.state === s).length);
    assert.deepEqual(summary, [2, 1]);

    // shipyard get workflows [--since]: gen_workflow_table reads workflow_id, state
    const workflowId = `relabel_nodes__${action.dag_execution_date}`;
    assertWorkflowId(workflowId);
    const workflows = await eventually(
      async () => json(await sy.getWorkflows()),
      (list) => list.some((w: any) => w.workflow_id === workflowId && w.state === 'failed'),
      30_000,
    );
    const workflow = workflows.find((w: any) => w.workflow_id === workflowId);
    assertReads('workflow', workflow, ['workflow_id', 'state', 'dag_id', 'execution_date', 'start_date', 'end_date', 'external_trigger', 'run_id']);
    assert.deepEqual([workflow.dag_id, workflow.run_id, workflow.external_trigger], ['relabel_nodes', action.id, true]);
    const hourAgo = new Date(Date.now() - 3600_000).toISOString();
    assert.ok(json(await sy.getWorkflows(hourAgo)).some((w: any) => w.workflow_id === workflowId));
    assert.ok(!json(await sy.getWorkflows(new Date(Date.now() + 3600_000).toISOString())).some((w: any) => w.workflow_id === workflowId));
    assert.equal((await sy.getWorkflows('yesterday-ish')).status, 400);

    // shipyard describe workflow/<workflow id>: gen_workflow_details, gen_workflow_steps, gen_sub_workflows
    const dag = json(await sy.getDagDetail(workflowId));
    assertReads('workflow detail', dag, [
      'workflow_id',
      'state',
      'dag_id',
      'execution_date',
      'start_date',
      'end_date',
      'external_trigger',
      'steps',
      'sub_dags',
    ]);
    assert.deepEqual([dag.workflow_id, dag.state, dag.dag_id, dag.execution_date], [workflowId, 'failed', 'relabel_nodes', action.dag_execution_date]);
    assert.deepEqual(
      dag.steps.map((s: any) => [s.task_id, s.state]),
      [
        ['validate_site_design', 'success'],
        ['plan_labels', 'success'],
        ['relabel_nodes', 'failed'],
      ],
    );
    assert.deepEqual(dag.sub_dags, []);
    assert.equal((await sy.getDagDetail('relabel_nodes__2001-01-01T00:00:00.000000')).status, 404);
    assert.equal((await sy.getDagDetail('no-separator')).status, 400);

    // The run's old id still names the same action.
    const old = json(await sy.getActionDetail(encodeRunId({ workflowId: action.workflow_id, runId: action.run_id })));
    assert.deepEqual([old.id, old.notes], [action.id, action.notes]);
    assert.equal((await sy.getActionDetail('01ARYZ6S410000000000000000')).status, 404);
  });

  it('notes of a run with more failures than they list stay bounded and say where the rest are', async () => {
    const missing = Array.from({ length: 53 }, (_, i) => `${n0}-gone-${String(i).padStart(2, '0')}`);
    const created = json(await sy.postActions('update_labels', { target_nodes: missing.join(',') }), 201);
    const action = await eventually(
      async () => json(await sy.getActionDetail(created.id)),
      (a) => a.action_lifecycle === 'Failed',
      60_000,
      200,
    );
    const nodeNotes = action.notes.filter((n: any) => n.note_id.startsWith('F'));
    assert.equal(nodeNotes.length, 50);
    assert.deepEqual(
      nodeNotes.map((n: any) => n.note_val.split(':')[0]),
      missing.slice(0, 50),
    );
    assert.ok(
      nodeNotes.every((n: any) => /: NodeNotInDesign: /.test(n.note_val)),
      nodeNotes[0].note_val,
    );
    assert.equal(action.notes.at(-1).note_val.split(';')[0], '3 more failed nodes are not listed here');
    // A node past the listed ones still has its details.
    const ref = parseNoteId(nodeNotes[0].note_id);
    assert.ok(ref);
    const last = await sy.getNoteDetails(noteId({ ...ref, seq: 52 }));
    assert.equal(last.status, 200, last.text);
    assert.match(last.text, new RegExp(`^node: ${missing[52]}$`, 'm'));
    assert.deepEqual(
      action.steps.map((s: any) => s.state),
      ['success', 'success', 'failed'],
    );
  });

  it('a run the mass-removal brake refuses fails its plan_labels step, and every command says why', async () => {
    // n0 and n1 carry the labels of the first run; a revision without the profiles' labels would remove most of them.
    const stripped = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/HostProfile/v1' && doc.data.metadata) doc.data.metadata = { ...doc.data.metadata, owner_data: {}, tags: [] };
      if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.generated_labels.rack_labels = false;
    });
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: stripped.files.map((f) => f.text).join('') })).status, 201);
    assert.equal((await api.call('POST', '/api/v1.0/commitconfigdocs', { headers: { 'content-type': 'application/x-yaml' } })).status, 200);

    const created = json(await sy.postActions('relabel_nodes', { target_nodes: `${n0},${n1}` }), 201);
    const action = await eventually(
      async () => json(await sy.getActionDetail(created.id)),
      (a) => a.action_lifecycle === 'Failed',
      60_000,
      200,
    );
    assert.deepEqual(
      action.steps.map((s: any) => [s.id, s.state]),
      [
        ['validate_site_design', 'success'],
        ['plan_labels', 'failed'],
        ['relabel_nodes', 'upstream_failed'],
      ],
    );
    const reason = action.notes.find((n: any) => n.note_val.startsWith('MassRemovalRefused: '));
    assert.ok(reason, JSON.stringify(action.notes));
    assert.match(reason.note_val, /^MassRemovalRefused: mass-removal brake: run \d+ would remove \d+ of \d+ owned labels/);
    const detail = await sy.getNoteDetails(reason.note_id);
    assert.equal(detail.status, 200, detail.text);
    assert.match(detail.text, /^MassRemovalRefused: mass-removal brake: .*Nothing was written/s);
    assert.match(action.validations[0].details, /passed/, 'the documents were valid: the brake refused');

    const step = json(await sy.getStepDetail(action.id, 'plan_labels'));
    assert.deepEqual([step.state, step.notes[0]?.note_val.split(':')[0]], ['failed', 'MassRemovalRefused']);
    const apply = json(await sy.getStepDetail(action.id, 'relabel_nodes'));
    assert.deepEqual([apply.state, apply.start_date, apply.end_date, apply.try_number], ['upstream_failed', null, null, null]);
    const log = await sy.getStepLog(action.id, 'plan_labels');
    assert.match(log.text, /^MassRemovalRefused: mass-removal brake: /m);
    assert.match(log.text, /plan_labels: failed$/m);

    const dag = await eventually(
      async () => sy.getDagDetail(`relabel_nodes__${action.dag_execution_date}`),
      (a) => a.status === 200,
      30_000,
    );
    assert.deepEqual(
      dag.json.steps.map((s: any) => s.state),
      ['success', 'failed', 'upstream_failed'],
    );
    assert.equal(dag.json.state, 'failed');
  });

  it('a paused, then stopped action: describe action shows Paused, then why it failed, and the command audit has each control', async () => {
    const targets = site.nodes.slice(3, 9);
    for (const name of targets) await createNode(adminCore(), name, {});
    const created = json(await sy.postActions('relabel_nodes', { target_nodes: targets.join(',') }), 201);
    assert.equal((await sy.postControlAction(created.id, 'pause')).status, 202);
    const paused = await eventually(
      async () => json(await sy.getActionDetail(created.id)),
      (a) => a.action_lifecycle === 'Paused',
      30_000,
      100,
    );
    assert.equal(paused.dag_status, 'paused');
    assert.deepEqual(
      paused.command_audit.map((c: any) => [c.command, c.user]),
      [
        ['invoke', paused.user],
        ['pause', paused.user],
      ],
    );
    const apply = paused.steps.find((s: any) => s.id === 'relabel_nodes');
    assert.equal(apply.notes[0]?.note_val, 'paused: no node starts until the action is unpaused');
    const listed = json(await sy.getActions()).find((a: any) => a.id === created.id);
    assert.equal(listed?.action_lifecycle, 'Processing', 'a listing has no progress to tell a pause by');

    assert.equal((await sy.postControlAction(created.id, 'stop')).status, 202);
    const stopped = await eventually(
      async () => json(await sy.getActionDetail(created.id)),
      (a) => a.action_lifecycle === 'Failed',
      30_000,
      100,
    );
    assert.equal(stopped.dag_status, 'failed');
    assert.deepEqual(
      stopped.command_audit.map((c: any) => c.command),
      ['invoke', 'pause', 'stop'],
    );
    assert.ok(stopped.command_audit.every((c: any) => !Number.isNaN(Date.parse(c.datetime))));
    assert.ok(
      stopped.notes.some((n: any) => n.note_val.startsWith('Cancelled: the run was stopped')),
      JSON.stringify(stopped.notes),
    );
    assert.equal(stopped.steps.find((s: any) => s.id === 'relabel_nodes').state, 'failed');
  });
});
