/**
 * Shipyard's create-action and action-control requests, sent exactly as its
 * Python client sends them (`post_actions`: `allow-intermediate-commits`
 * and `verbosity` in the query, `--param name=value` parameters as text,
 * JSON; `post_control_action`: no body, `content-type: application/x-yaml`),
 * against the real API, Temporal server and kube-apiserver.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { isAppliedBy } from '../../src/core/plan/applied-run.ts';
import { ActionView } from '../../src/api/http/response-schemas.ts';
import { ADMIN, assertFailure, eventually, startTestApi, VIEWER, type Answer, type TestApi } from '../api-support.ts';
import { adminCore, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

describe("Shipyard's create action and action controls over HTTP", () => {
  const prefix = `apc${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;
  const marker = randomUUID();

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    worker = await startRelabel(url);
    api = await startTestApi({
      storeUrl: url,
      taskQueue: worker.taskQueue,
      tokens: [
        { token: ADMIN, role: 'admin', name: 'ops-alice' },
        { token: VIEWER, role: 'viewer' },
      ],
    });
    const core = adminCore();
    for (const name of site.nodes.slice(0, 18)) await createNode(core, name, {});
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  /** `shipyard create action update_labels --param k=v … [--allow-intermediate-commits]`: `post_actions` with the parameters as text. */
  const createAction = (parameters: Record<string, string>, allowIntermediateCommits = false): Promise<Answer> =>
    api.call('POST', `/api/v1.0/actions?allow-intermediate-commits=${allowIntermediateCommits ? 'True' : 'False'}&verbosity=1`, {
      token: null,
      headers: { 'X-Context-Marker': marker, 'X-Auth-Token': ADMIN },
      body: JSON.stringify({ name: 'update_labels', parameters }),
      type: 'application/json',
    });
  /** `shipyard pause|unpause|stop action <id>`: `post_control_action`, no body. */
  const control = (id: string, verb: string, token = ADMIN): Promise<Answer> =>
    api.call('POST', `/api/v1.0/actions/${id}/control/${verb}?verbosity=1`, {
      token: null,
      headers: { 'X-Context-Marker': marker, 'content-type': 'application/x-yaml', 'X-Auth-Token': token },
    });
  const view = async (id: string) => ActionView.parse((await api.call('GET', `/api/v1.0/actions/${id}`)).json);
  const ended = (id: string) =>
    eventually(
      () => view(id),
      (a) => a.execution !== 'RUNNING',
      60_000,
    );
  const created = (answer: Answer) => {
    assert.equal(answer.status, 201, answer.text);
    return ActionView.parse(answer.json);
  };
  /** The input the workflow was started with. */
  const inputOf = async (workflowId: string, runId: string) => {
    const history = await worker.client.workflow.getHandle(workflowId, runId).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
    assert.ok(payload);
    return JSON.parse(Buffer.from(payload).toString('utf8')) as { allowMassRemoval?: boolean };
  };
  const commitSite = async () => {
    await worker.store.revisions.stage('site', site.files);
    return (await worker.store.revisions.commit({ message: 'again' })).id;
  };

  it('takes --param values as text: target_nodes "a,b" and allow_mass_removal "true"/"false"; anything else is a 400 naming the field', async () => {
    const targets = site.nodes.slice(0, 2);
    const allowed = created(await createAction({ target_nodes: targets.join(','), allow_mass_removal: 'true' }));
    assert.deepEqual(allowed.parameters.target_nodes, targets);
    assert.equal((await inputOf(allowed.workflow_id, allowed.run_id)).allowMassRemoval, true, 'the text "true" reaches the run');
    assert.equal((await ended(allowed.id)).action_lifecycle, 'Complete');

    const notAllowed = created(await createAction({ target_nodes: targets.join(','), allow_mass_removal: 'False' }));
    assert.equal((await inputOf(notAllowed.workflow_id, notAllowed.run_id)).allowMassRemoval, undefined, 'the text "False" is false');
    await ended(notAllowed.id);

    const bad = assertFailure(await createAction({ target_nodes: targets[0] as string, allow_mass_removal: 'yes please' }), 400, 'InvalidRequest');
    assert.match(bad.message, /parameters\.allow_mass_removal/);
    assertFailure(
      await api.call('POST', '/api/v1.0/actions?allow-intermediate-commits=perhaps', {
        body: { name: 'update_labels', parameters: { target_nodes: [targets[0]] } },
      }),
      400,
      'InvalidRequest',
    );
    // JSON booleans still work.
    const json = await api.call('POST', '/api/v1.0/actions', {
      body: { name: 'update_labels', parameters: { target_nodes: [targets[0]], allow_mass_removal: true } },
    });
    await ended(created(json).id);
  });

  it('starts an action over commits never rolled out, with or without allow-intermediate-commits, as Shipyard starts relabel_nodes', async () => {
    const targets = site.nodes.slice(2, 4).join(',');
    await commitSite();
    const latest = await commitSite();
    const without = created(await createAction({ target_nodes: targets }));
    assert.equal(without.revision, latest);
    assert.equal((await ended(without.id)).action_lifecycle, 'Complete');
    const next = await commitSite();
    await commitSite();
    const withFlag = created(await createAction({ target_nodes: targets }, true));
    assert.equal(withFlag.revision, next + 1);
    await ended(withFlag.id);
  });

  it('pauses, unpauses and stops an action; each control is in the command audit with who gave it; an ended action answers 409', async () => {
    const first = site.nodes.slice(4, 10);
    const action = created(await createAction({ target_nodes: first.join(',') }));
    const paused = await control(action.id, 'pause');
    assert.equal(paused.status, 202, paused.text);
    assert.match(paused.json.message, /^pause accepted for action \S+ \(paused: \d+ node\(s\) running, \d+ not started\)$/);
    assertFailure(await control(action.id, 'pause', VIEWER), 403);
    await eventually(
      () => worker.runs.status(action.workflow_id),
      (s) => s.progress?.paused === true && s.progress.phase === 'applying' && s.progress.counts.running === 0,
    );
    const pausedRun = (await worker.runs.status(action.workflow_id)).run as number;
    assert.equal((await worker.store.runs.counts(pausedRun)).written, 0, 'no node starts while paused');
    const unpaused = await control(action.id, 'unpause');
    assert.equal(unpaused.status, 202, unpaused.text);
    const done = await ended(action.id);
    assert.deepEqual([done.action_lifecycle, done.node_results.map((n) => n.status)], ['Complete', first.map(() => 'success')]);
    assertFailure(await control(action.id, 'stop'), 409, 'NotRunning');

    const second = site.nodes.slice(10, 18);
    const stoppedAction = created(await createAction({ target_nodes: second.join(',') }));
    assert.equal((await control(stoppedAction.id, 'pause')).status, 202);
    await eventually(
      () => worker.runs.status(stoppedAction.workflow_id),
      (s) => s.progress?.paused === true && s.progress.phase === 'applying',
    );
    const stop = await control(stoppedAction.id, 'stop');
    assert.equal(stop.status, 202, stop.text);
    const stopped = await ended(stoppedAction.id);
    assert.equal(stopped.execution, 'CANCELLED');
    assert.deepEqual(
      stopped.node_results.map((n) => [n.node, n.status, n.error?.type]),
      second.map((n) => [n, 'cancelled', 'NotStarted']),
      'a run stopped while paused started no node: every row settled as cancelled',
    );
    const core = adminCore();
    const run = (await worker.runs.status(stoppedAction.workflow_id, stoppedAction.run_id)).run as number;
    for (const node of second) {
      assert.equal(
        isAppliedBy((await core.readNode({ name: node })).metadata?.annotations ?? {}, { run, revision: stoppedAction.revision as number }),
        false,
        `${node} was not written`,
      );
    }
    assertFailure(await control(stoppedAction.id, 'unpause'), 409, 'NotRunning');
    assertFailure(await control(stoppedAction.id, 'resume'), 409, 'NotRunning');
    assertFailure(await control(stoppedAction.id, 'restart'), 400, 'InvalidRequest');

    const firstRun = (await worker.runs.status(action.workflow_id, action.run_id)).run as number;
    const audit = async (n: number) => (await worker.store.actions.commands(n)).filter((c) => c.command !== 'invoke').map((c) => [c.command, c.user]);
    assert.deepEqual(await audit(firstRun), [
      ['pause', 'ops-alice'],
      ['unpause', 'ops-alice'],
    ]);
    assert.deepEqual(await audit(run), [
      ['pause', 'ops-alice'],
      ['stop', 'ops-alice'],
    ]);
  });
});
