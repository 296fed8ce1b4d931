/**
 * Shipyard actions and Drydock tasks over node-set members, against
 * relabel's real API, worker, Temporal and kube-apiserver: an action's
 * `node_sets` (the comma-separated text `shipyard create action --param`
 * sends) and a task's `node_sets` write exactly the members, none of the
 * design's nodes and no node the selector misses; a task with no node
 * filter writes the design's nodes and the members; an unknown set, or
 * node sets beside other targets, is a 400 naming it with nothing started
 * or written; `POST plans` with `node_sets` (or `all`) plans the members
 * with their set as the source, writing nothing.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { ActionList, ActionView, PlanView } from '../../src/api/http/response-schemas.ts';
import { TaskView } from '../../src/api/drydock/task-schemas.ts';
import { adminCore, createNode, nodePatchCount, uniqueSuffix, type startRelabel } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { assertFailure, startApiAndWorker, type TestApi } from '../api-support.ts';
import { deckhandDesignRef, nodeNameFilter } from '../airship-clients.ts';

const MD_KEY = 'cluster.x-k8s.io/deployment-name';
const MEMBERS = 6;

describe('Shipyard actions, Drydock tasks and plans over node sets', () => {
  const prefix = `nst${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const md = `${prefix}-md-0`;
  const setDoc = (workload: string) =>
    `---\n${JSON.stringify({
      schema: 'relabel/NodeSet/v1',
      metadata: { schema: 'metadata/Document/v1', name: 'md' },
      data: { selector: { matchLabels: { [MD_KEY]: md } }, host_profile: 'compute', metadata: { owner_data: { 'workload-class': workload } } },
    })}\n`;
  const files = (workload: string) => [...site.files, { source: 'node-sets.yaml', text: setDoc(workload) }];
  const members = Array.from({ length: MEMBERS }, (_, i) => `${md}-x${i}k2lp`);
  // Same key, another value: the selector misses them.
  const strangers = [`${prefix}-md-1-a1`, `${prefix}-md-1-b2`];
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;

  const labelOf = async (node: string) => (await adminCore().readNode({ name: node })).metadata?.labels?.['workload-class'];
  const owned = async (node: string) => (await adminCore().readNode({ name: node })).metadata?.annotations?.[OWNED_LABELS_ANNOTATION];
  /** Commits the site with the set wanting `workload`, tagged as a site action; its revision. */
  const commit = async (workload: string) => {
    await worker.store.revisions.stage('site', files(workload));
    const revision = await worker.store.revisions.commit({ message: `md members are ${workload}` });
    await worker.store.revisions.tag(revision.id, 'site-action-success');
    return revision.id;
  };
  /** How many actions the API lists. */
  const actionCount = async () => ActionList.parse((await api.call('GET', '/api/v1.0/actions?limit=100')).json).length;

  before(async () => {
    const { url } = await storeWithSite(files('web'));
    ({ worker, api } = await startApiAndWorker(url, site.nodes, {}));
    const core = adminCore();
    await Promise.all(members.map((n) => createNode(core, n, { [MD_KEY]: md })));
    await Promise.all(strangers.map((n) => createNode(core, n, { [MD_KEY]: `${prefix}-md-1` })));
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('an action with node_sets writes exactly the members', async () => {
    const before = await nodePatchCount({ code: 200 });
    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { node_sets: 'md' } } });
    assert.equal(created.status, 201, created.text);
    const action = ActionView.parse(created.json);
    assert.deepEqual(action.parameters, { node_sets: ['md'] });
    const done = await worker.runs.wait({ workflowId: action.workflow_id, runId: action.run_id });
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    assert.deepEqual(done.result?.counts, { total: MEMBERS, success: MEMBERS, failure: 0, written: MEMBERS });
    assert.equal((await nodePatchCount({ code: 200 })) - before, MEMBERS, 'one write per member, none elsewhere');
    for (const node of members) assert.equal(await labelOf(node), 'web', node);
    for (const node of [...strangers, ...site.nodes.slice(0, 3)]) assert.equal(await owned(node), undefined, `${node} is left alone`);
    const read = ActionView.parse((await api.call('GET', `/api/v1.0/actions/${action.id}`)).json);
    assert.equal(read.action_lifecycle, 'Complete');
    assert.deepEqual(read.parameters.node_sets, ['md']);
    assert.deepEqual(read.parameters.target_nodes?.slice().sort(), [...members].sort());
  });

  it('an action naming a set the revision lacks, or node sets beside target_nodes, is a 400 naming it; nothing starts', async () => {
    const [actions, patches] = [await actionCount(), await nodePatchCount()];
    const unknown = assertFailure(
      await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { node_sets: 'md,capi-md-9' } } }),
      400,
      'InvalidTargets',
    );
    assert.match(unknown.message, /has no node set capi-md-9 \(its node sets: md\)/);
    const both = assertFailure(
      await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { node_sets: ['md'], target_nodes: [site.nodes[0]] } } }),
      400,
      'InvalidTargets',
    );
    assert.match(both.message, /exactly one of parameters\.target_nodes and parameters\.node_sets \(both were given\)/);
    assertFailure(await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { node_sets: ' ' } } }), 400, 'InvalidRequest');
    assert.equal(await actionCount(), actions, 'no action started');
    assert.equal(await nodePatchCount(), patches, 'nothing written');
  });

  it('a task with node_sets writes exactly the members; its subtasks are the members', async () => {
    const revision = await commit('web-2');
    const before = await nodePatchCount({ code: 200 });
    const body = { action: 'relabel_nodes', design_ref: deckhandDesignRef(revision), node_filter: null, node_sets: ['md'] };
    const created = await api.call('POST', '/api/v1.0/tasks', { body });
    assert.equal(created.status, 201, created.text);
    const task = TaskView.parse(created.json);
    assert.deepEqual(task.node_sets, ['md']);
    const { workflow_id: workflowId, run_id: runId } = ActionView.parse((await api.call('GET', `/api/v1.0/actions/${task.task_id}`)).json);
    const done = await worker.runs.wait({ workflowId, runId });
    assert.deepEqual(done.result?.counts, { total: MEMBERS, success: MEMBERS, failure: 0, written: MEMBERS });
    assert.equal((await nodePatchCount({ code: 200 })) - before, MEMBERS, 'one write per member, none elsewhere');
    for (const node of members) assert.equal(await labelOf(node), 'web-2', node);
    const read = TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${task.task_id}`)).json);
    assert.equal(read.status, 'complete');
    assert.deepEqual(read.node_sets, ['md']);
    assert.deepEqual(read.result.successes.slice().sort(), [...members].sort());
    assert.equal(read.subtask_id_list.length, MEMBERS);
  });

  it('a task naming a set the revision lacks, or node sets beside a node filter, is a 400 naming it; nothing starts', async () => {
    const [actions, patches] = [await actionCount(), await nodePatchCount()];
    const task = (extra: Record<string, unknown>) =>
      api.call('POST', '/api/v1.0/tasks', { body: { action: 'relabel_nodes', design_ref: 'committed', node_filter: null, ...extra } });
    const unknown = assertFailure(await task({ node_sets: ['karpenter-gpu'] }), 400, 'InvalidTargets');
    assert.match(unknown.message, /has no node set karpenter-gpu \(its node sets: md\)/);
    const both = assertFailure(await task({ node_sets: ['md'], node_filter: nodeNameFilter([site.nodes[0] as string]) }), 400, 'InvalidTargets');
    assert.match(both.message, /node_sets targets the members of the sets: send node_filter null or leave it out/);
    assert.equal(await actionCount(), actions, 'no task started');
    assert.equal(await nodePatchCount(), patches, 'nothing written');
  });

  it("a task with no node filter writes every node of the design and every set's members; a node filter selects only BaremetalNodes", async () => {
    const revision = await commit('web-3');
    const filtered = await api.call('POST', '/api/v1.0/tasks', {
      body: { action: 'relabel_nodes', design_ref: deckhandDesignRef(revision), node_filter: nodeNameFilter([members[0] as string]) },
    });
    // A member is no BaremetalNode: Drydock's filter never selects it.
    assert.match(assertFailure(filtered, 400, 'NoNodesMatched').message, /not in the design: /);
    const created = await api.call('POST', '/api/v1.0/tasks', {
      body: { action: 'relabel_nodes', design_ref: deckhandDesignRef(revision), node_filter: null },
    });
    assert.equal(created.status, 201, created.text);
    const task = TaskView.parse(created.json);
    assert.equal(task.node_sets, undefined);
    const { workflow_id: workflowId, run_id: runId } = ActionView.parse((await api.call('GET', `/api/v1.0/actions/${task.task_id}`)).json);
    const done = await worker.runs.wait({ workflowId, runId });
    const total = site.nodes.length + MEMBERS;
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
    assert.equal(done.result?.counts.total, total);
    for (const node of members) assert.equal(await labelOf(node), 'web-3', node);
    for (const node of strangers) assert.equal(await owned(node), undefined, `${node} is left alone`);
    assert.ok(await owned(site.nodes[0] as string), 'the design nodes are written');
  });

  it('POST plans with node_sets plans exactly the members, their labels credited to the set; all adds the members to the design; nothing is written', async () => {
    await commit('web-4');
    const patches = await nodePatchCount();
    const planned = await api.call('POST', '/api/v1.0/plans', { body: { node_sets: ['md'] } });
    assert.equal(planned.status, 201, planned.text);
    const plan = PlanView.parse(planned.json);
    assert.deepEqual([plan.targets, plan.node_sets, plan.failure_types], [MEMBERS, { md: MEMBERS }, {}]);
    const workload = plan.labels['workload-class'];
    assert.deepEqual(
      [workload?.desired, workload?.change, workload?.sources],
      [MEMBERS, MEMBERS, [{ source: { kind: 'node_set', set: 'md' }, nodes: MEMBERS }]],
    );
    const all = PlanView.parse((await api.call('POST', '/api/v1.0/plans', { body: { all: true } })).json);
    assert.deepEqual([all.targets, all.node_sets], [site.nodes.length + MEMBERS, { md: MEMBERS }]);
    assert.equal(all.labels['workload-class']?.change, MEMBERS, 'only the members change');
    const unknown = assertFailure(await api.call('POST', '/api/v1.0/plans', { body: { node_sets: ['capi-md-9'] } }), 400, 'InvalidTargets');
    assert.match(unknown.message, /has no node set capi-md-9 \(its node sets: md\)/);
    assertFailure(await api.call('POST', '/api/v1.0/plans', { body: { node_sets: ['md'], all: true } }), 400, 'InvalidTargets');
    assert.equal(await nodePatchCount(), patches, 'nothing written');
    for (const node of members) assert.equal(await labelOf(node), 'web-3', node);
  });
});
