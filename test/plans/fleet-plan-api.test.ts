/**
 * Plans and the mass-removal brake over HTTP, against the real stack:
 * `POST plans` answers the fleet-wide plan (per-key counts, sources, the
 * brake's verdict, a page of per-node plans), `GET plans/{id}` pages it
 * again; an action that would remove most owned labels ends Failed with
 * MassRemovalRefused and no PATCH, and `allow_mass_removal` lets it through.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { ActionView, PlanView } from '../../src/api/http/response-schemas.ts';
import { TaskView } from '../../src/api/drydock/task-schemas.ts';
import { adminCore, createNode, nodePatchCount, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { ADMIN, assertFailure, eventually, startTestApi, TOKENS, type TestApi } from '../api-support.ts';
import { createApiServer } from '../../src/api/http/server.ts';
import { openRelabel, relabelConfigFromEnv } from '../../src/facade/index.ts';
import { createNodeApi } from '../../src/kube/nodes.ts';
import { loadKubeConfig } from '../../src/kube/kubeconfig.ts';
import { kubeconfigPath } from '../helpers.ts';

describe('plans and the mass-removal brake over HTTP', () => {
  const prefix = `fpa${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const targets = site.nodes.slice(0, 4);
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;
  let storeUrl: string;
  const core = adminCore();

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    storeUrl = url;
    worker = await startRelabel(url);
    api = await startTestApi({ storeUrl: url, taskQueue: worker.taskQueue });
    for (const name of targets) await createNode(core, name);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  /** Starts an action and waits for its end. */
  async function action(parameters: Record<string, unknown>): Promise<ActionView> {
    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters } });
    assert.equal(created.status, 201, created.text);
    const location = created.headers.get('location') as string;
    return eventually(
      async () => ActionView.parse((await api.call('GET', location)).json),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
    );
  }

  /** Starts a Drydock relabel_nodes task for the targets and waits for its end. */
  async function task(extra: Record<string, unknown> = {}): Promise<TaskView> {
    const node_filter = { filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: targets }] };
    const created = await api.call('POST', '/api/v1.0/tasks', { body: { action: 'relabel_nodes', design_ref: 'committed', node_filter, ...extra } });
    assert.equal(created.status, 201, created.text);
    const id = TaskView.parse(created.json).task_id;
    return eventually(
      async () => TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${id}`)).json),
      (t) => t.status === 'complete' || t.status === 'terminated',
    );
  }

  /** Stages the site (`stripped`: the host profiles' owner_data and tags gone, rack labels not generated) and commits it. */
  async function commitSite(stripped: boolean): Promise<void> {
    const files = prefixedSite(prefix, (doc) => {
      if (!stripped) return;
      if (doc.schema === 'drydock/HostProfile/v1' && doc.data.metadata) doc.data.metadata = { ...doc.data.metadata, owner_data: {}, tags: [] };
      if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.generated_labels.rack_labels = false;
    }).files;
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: files.map((f) => f.text).join('') })).status, 201);
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs', { headers: { 'content-type': 'application/x-yaml' } });
    assert.equal(commit.status, 200, commit.text);
  }

  it('answers a plan with counts, sources and the brake, pages its nodes, and refuses bad requests', async () => {
    const before = await nodePatchCount();
    const created = await api.call('POST', '/api/v1.0/plans', { body: { target_nodes: targets, nodes_detail: true, limit: 2 } });
    assert.equal(created.status, 201, created.text);
    const plan = PlanView.parse(created.json);
    assert.equal(plan.targets, 4);
    assert.deepEqual(plan.statuses, { success: 4 });
    assert.equal(plan.changing, 4, 'every planned node gains labels: a run would write each');
    assert.equal(plan.labels['node-exporter']?.gain, 4);
    assert.equal(plan.labels['node-exporter']?.desired, 4);
    assert.deepEqual(plan.mass_removal && [plan.mass_removal.removed, plan.mass_removal.exceeded], [0, false]);
    assert.deepEqual(plan.warnings, [], 'named nodes, no node set: nothing to warn of');
    const impact = plan.workload_impact;
    assert.ok(impact && !('unavailable' in impact), `the plan weighs its workload impact: ${JSON.stringify(impact)}`);
    assert.equal(impact.totals.nodes_changed, 4);
    assert.deepEqual(
      plan.nodes?.items.map((n) => n.node),
      targets.slice(0, 2),
    );
    assert.deepEqual(plan.nodes?.items[0]?.labels?.['node-exporter']?.source, { kind: 'host_profile', profile: 'base', depth: 2 });
    assert.equal(created.headers.get('location'), `/api/v1.0/plans/${plan.id}`);

    const again = await api.call('GET', `/api/v1.0/plans/${plan.id}?nodes_detail=true&offset=2&limit=2`, {});
    assert.equal(again.status, 200, again.text);
    const page = PlanView.parse(again.json);
    assert.deepEqual(
      page.nodes?.items.map((n) => n.node),
      targets.slice(2, 4),
    );
    assert.deepEqual(page.labels, plan.labels);
    assert.equal(PlanView.parse((await api.call('GET', `/api/v1.0/plans/${plan.id}`)).json).nodes, undefined);

    const all = PlanView.parse((await api.call('POST', '/api/v1.0/plans', { body: { all: true } })).json);
    assert.deepEqual([all.targets, all.statuses, all.failure_types], [24, { success: 4, failure: 20 }, { NodeNotFound: 20 }]);
    assert.equal(await nodePatchCount(), before, 'planning writes nothing');

    assertFailure(await api.call('POST', '/api/v1.0/plans', { body: {} }), 400, 'InvalidTargets');
    assertFailure(await api.call('POST', '/api/v1.0/plans', { body: { all: true, target_nodes: targets } }), 400, 'InvalidTargets');
    assertFailure(await api.call('POST', '/api/v1.0/plans', { body: { all: true, limit: 5000 } }), 400, 'InvalidRequest');
    assertFailure(await api.call('POST', '/api/v1.0/plans', { body: { target_nodes: targets, revision: 99 } }), 404, 'RevisionNotFound');
    assertFailure(await api.call('GET', '/api/v1.0/plans/bm90LWEtcnVu'), 404, 'ActionNotFound');
    assertFailure(await api.call('POST', '/api/v1.0/plans', { token: 'viewer-token-for-tests', body: { all: true } }), 403);
  });

  it('an action or task removing most owned labels is refused (MassRemovalRefused) with no PATCH; allow_mass_removal lets it through', async () => {
    assert.equal((await action({ target_nodes: targets })).action_lifecycle, 'Complete');
    await commitSite(true);

    const plan = PlanView.parse((await api.call('POST', '/api/v1.0/plans', { body: { target_nodes: targets.join(',') } })).json);
    assert.equal(plan.mass_removal?.exceeded, true);
    assert.match(
      plan.mass_removal?.message ?? '',
      /^would remove \d+ of \d+ owned labels \(\d+%\) on 4 nodes, more than the policy's max_removal_fraction 0\.5; keys: /,
    );

    const before = await nodePatchCount();
    const refused = await action({ target_nodes: targets });
    assert.equal(refused.action_lifecycle, 'Failed');
    assert.equal(refused.failure?.type, 'MassRemovalRefused');
    assert.match(
      refused.failure?.message ?? '',
      new RegExp(
        `would remove ${plan.mass_removal?.removed} of ${plan.mass_removal?.owned} owned labels .* on 4 nodes.*node-exporter \\(4 nodes\\).*Nothing was written`,
      ),
    );
    assert.deepEqual(
      refused.node_results.map((n) => [n.status, n.error?.type]),
      targets.map(() => ['failure', 'MassRemovalRefused']),
    );
    const refusedTask = await task();
    assert.match(JSON.stringify(refusedTask.result.details), /MassRemovalRefused/);
    assert.equal(await nodePatchCount(), before, 'a refused run sends no PATCH');

    const allowedTask = await task({ allow_mass_removal: true });
    assert.equal(allowedTask.result.status, 'success', JSON.stringify(allowedTask.result));
    assert.equal((await nodePatchCount()) - before, 4);
    assert.equal((await core.readNode({ name: targets[0] as string })).metadata?.labels?.['node-exporter'], undefined);

    // Back to the full site, then stripped again: the action's own allow_mass_removal.
    await commitSite(false);
    assert.equal((await action({ target_nodes: targets })).action_lifecycle, 'Complete');
    await commitSite(true);
    const allowed = await action({ target_nodes: targets, allow_mass_removal: true });
    assert.equal(allowed.action_lifecycle, 'Complete', JSON.stringify(allowed.failure));
    assert.equal((await core.readNode({ name: targets[0] as string })).metadata?.labels?.['node-exporter'], undefined);
  });

  it('answers 202 with the Location of a plan no worker computes in time; GET says it is still being computed', async () => {
    const idle = `relabel-idle-${uniqueSuffix()}`;
    const relabel = await openRelabel({ ...relabelConfigFromEnv(), storeUrl, taskQueue: idle });
    const app = createApiServer({ relabel, nodes: createNodeApi(loadKubeConfig(kubeconfigPath())), tokens: TOKENS, planWaitMs: 300 });
    try {
      const answer = await app.inject({ method: 'POST', url: '/api/v1.0/plans', headers: { 'x-auth-token': ADMIN }, payload: { all: true } });
      assert.equal(answer.statusCode, 202, answer.body);
      assert.match(answer.json().message, /^plan \S+ is not done after 0\.3 s \(.*\); GET \/api\/v1\.0\/plans\/\S+ reads it once it is$/);
      const location = answer.headers.location as string;
      assert.match(location, /^\/api\/v1\.0\/plans\/[A-Za-z0-9_-]+$/);
      const later = await app.inject({ method: 'GET', url: location, headers: { 'x-auth-token': ADMIN } });
      assert.equal(later.statusCode, 409, later.body);
      assert.equal(later.json().reason, 'RunInProgress');
      const key = Buffer.from(location.split('/').at(-1) as string, 'base64url')
        .toString('utf8')
        .split('|');
      await worker.client.workflow.getHandle(key[0] as string, key[1]).terminate('test done');
    } finally {
      await app.close();
      await relabel.close();
    }
  });
});
