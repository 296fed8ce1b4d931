/**
 * The HTTP API over real sockets against the real stack: every status code
 * of issue 5, the order of the actions checks, configdocs, revisions, a
 * Drydock task, Promenade node-labels, a run in progress and Kubernetes
 * unreachable.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { formatError } from '../../src/core/plan/site-error.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { ActionList, ActionView, CommitStatus, NodeLabelsStatus, RevisionList, RevisionView, StatusBody } from '../../src/api/http/response-schemas.ts';
import { TaskView } from '../../src/api/drydock/task-schemas.ts';
import { encodeRunId } from '../../src/api/runs/run-ids.ts';
import { createWorker } from '../../src/worker/wiring.ts';
import { adminCore, type startRelabel, temporalAddress, uniqueSuffix, workflowBundle } from '../helpers.ts';
import { prefixedSite, sampleSiteFiles, storeWithSite } from '../site.ts';
import {
  ADMIN,
  TEST_BODY_LIMIT,
  VIEWER,
  assertFailure,
  emptyStoreUrl,
  eventually,
  startApiAndWorker,
  startTestApi,
  unreachableKubeconfig,
  type TestApi,
} from '../api-support.ts';

const FOREIGN = { 'example.com/team': 'storage-ops' };

describe('HTTP API', () => {
  const prefix = `api${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const siteYaml = site.files.map((f) => f.text).join('');
  const [n0, n1] = site.nodes as [string, string];
  const labelled = `${prefix}-nl`;
  const storeUrl = emptyStoreUrl();
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;

  before(async () => {
    ({ worker, api } = await startApiAndWorker(storeUrl, [n0, n1, labelled], FOREIGN));
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('answers /health without a token; anything else needs one (401); viewers only read (403)', async () => {
    const health = await api.call('GET', '/health', { token: null });
    assert.equal(health.status, 200);
    assert.equal(StatusBody.parse(health.json).status, 'Success');
    assertFailure(await api.call('GET', '/api/v1.0/revisions', { token: null }), 401, 'Unauthorized');
    assertFailure(await api.call('GET', '/api/v1.0/revisions', { token: 'not-a-token' }), 401, 'Unauthorized');
    assertFailure(await api.call('GET', '/api/v1.0/revisions', { token: null, headers: { authorization: `Basic ${ADMIN}` } }), 401);
    assertFailure(await api.call('GET', '/api/v1.0/no-such-route', { token: null }), 401);
    assert.equal((await api.call('GET', '/api/v1.0/revisions', { token: null, headers: { authorization: `Bearer ${VIEWER}` } })).status, 200);
    assert.equal((await api.call('GET', '/api/v1.0/revisions', { token: VIEWER })).status, 200);
    assertFailure(
      await api.call('POST', '/api/v1.0/actions', { token: VIEWER, body: { name: 'update_labels', parameters: { target_nodes: [n0] } } }),
      403,
      'Forbidden',
    );
    assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs', { token: VIEWER }), 403, 'Forbidden');
    assertFailure(await api.call('PUT', `/api/v1.0/node-labels/${labelled}`, { token: VIEWER, body: { a: 'b' } }), 403, 'Forbidden');
    const openapi = await api.call('GET', '/api/v1.0/openapi.json', { token: VIEWER });
    assert.equal(openapi.status, 200);
    assert.equal(openapi.json.openapi, '3.1.0');
  });

  it('answers unknown routes (404), other methods (405), big bodies (413), other media (415) and bad JSON (400) as Status', async () => {
    assertFailure(await api.call('GET', '/api/v1.0/no-such-route'), 404, 'NotFound');
    assertFailure(await api.call('GET', '/api/v1.0/actions/x/y'), 404, 'NotFound');
    const wrongMethod = assertFailure(await api.call('PATCH', '/api/v1.0/actions'), 405, 'MethodNotAllowed');
    assert.match(wrongMethod.message, /allowed: POST, GET, HEAD/);
    assert.equal((await api.call('DELETE', '/api/v1.0/commitconfigdocs')).headers.get('allow'), 'POST');
    assertFailure(await api.call('POST', '/api/v1.0/configdocs/site', { body: `# ${'x'.repeat(TEST_BODY_LIMIT)}\n` }), 413, 'PayloadTooLarge');
    assertFailure(await api.call('POST', '/api/v1.0/actions', { body: 'name: update_labels', type: 'text/plain' }), 415, 'UnsupportedMediaType');
    assertFailure(await api.call('POST', '/api/v1.0/configdocs/site', { body: '{"a": 1}', type: 'application/json' }), 415);
    assertFailure(await api.call('POST', '/api/v1.0/actions', { body: '{"name": ', type: 'application/json' }), 400, 'InvalidJson');
    assertFailure(await api.call('POST', '/api/v1.0/actions', { body: '{"__proto__": {"x": 1}}', type: 'application/json' }), 400);
    const unknownField = assertFailure(
      await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { target_nodes: [n0] }, dag: 'x' } }),
      400,
      'InvalidRequest',
    );
    assert.deepEqual(unknownField.details.messageList, [{ message: 'body.dag: unknown field', error: true }]);
    assertFailure(await api.call('GET', '/api/v1.0/revisions?page=2'), 400, 'InvalidRequest');
    assertFailure(await api.call('DELETE', '/api/v1.0/revisions/1/tags/x', { body: { a: 1 } }), 400, 'InvalidRequest');
  });

  it("checks actions in Shipyard's order: target_nodes, name, committed configdocs, site action, documents", async () => {
    const action = (body: unknown) => api.call('POST', '/api/v1.0/actions', { body });
    // 1. invalid target_nodes comes first, even with an unknown name and nothing committed.
    for (const parameters of [
      {},
      { target_nodes: [] },
      { target_nodes: '' },
      { target_nodes: [n0, 7] },
      { target_nodes: [n0, n0] },
      { target_nodes: { n: 1 } },
    ]) {
      assertFailure(await action({ name: 'deploy_site', parameters }), 400, 'InvalidTargets');
    }
    assertFailure(await action({ name: 'update_labels' }), 400, 'InvalidTargets');
    // 2. then the action name.
    assertFailure(await action({ name: 'deploy_site', parameters: { target_nodes: [n0] } }), 400, 'UnknownAction');
    assertFailure(await action({ parameters: { target_nodes: `${n0},${n1}` } }), 400, 'UnknownAction');
    // 3. then a committed revision.
    assertFailure(await action({ name: 'update_labels', parameters: { target_nodes: [n0] } }), 400, 'NoCommittedRevision');
    // 4. then a revision that took part in a site action: checked before the documents, which are invalid here.
    const broken = sampleSiteFiles(new URL('../../examples/broken-site/', import.meta.url).pathname);
    await worker.store.revisions.stage('site', broken);
    await worker.store.revisions.commit({ message: 'stored without validation' });
    assertFailure(await action({ name: 'relabel_nodes', parameters: { target_nodes: [n0] } }), 400, 'NoSiteActionRevision');
    const tag = await api.call('POST', '/api/v1.0/revisions/1/tags/site-action-success', { body: { action: 'deploy_site' } });
    assert.equal(tag.status, 201, tag.text);
    // 5. then the documents, every error listed.
    const invalid = assertFailure(await action({ name: 'update_labels', parameters: { target_nodes: [n0] } }), 400, 'DocumentValidationFailed');
    const expected = validateSite(broken.map((f) => ({ source: `site/${f.source}`, text: f.text })));
    assert.ok(!expected.ok && expected.errors.length >= 5);
    assert.deepEqual(
      invalid.details.messageList.map((m) => m.message),
      expected.errors.map(formatError),
    );
  });

  it('stages configdocs (invalid ones refused whole, nothing staged), reads them back, commits', async () => {
    const bad = siteYaml.replace('"host_profile": "cp"', '"host_profile": "no-such-profile"').replace(/"rack": "cab23"/g, '"rack": 42');
    const refused = assertFailure(await api.call('POST', '/api/v1.0/configdocs/site', { body: bad }), 400, 'DocumentValidationFailed');
    assert.ok(refused.details.errorCount > 1, refused.details.messageList.map((m) => m.message).join('\n'));
    assertFailure(await api.call('GET', '/api/v1.0/configdocs/site?version=buffer'), 404, 'BucketNotFound');
    assertFailure(await api.call('POST', '/api/v1.0/configdocs/Site', { body: siteYaml }), 400, 'InvalidRequest');
    assertFailure(await api.call('POST', '/api/v1.0/configdocs/site?buffermode=prepend', { body: siteYaml }), 400, 'InvalidRequest');

    const staged = await api.call('POST', '/api/v1.0/configdocs/site?buffermode=replace', { body: siteYaml });
    assert.equal(staged.status, 201, staged.text);
    assert.equal(StatusBody.parse(staged.json).status, 'Success');
    const buffer = await api.call('GET', '/api/v1.0/configdocs/site', { token: VIEWER });
    assert.equal(buffer.status, 200);
    assert.match(buffer.headers.get('content-type') ?? '', /^application\/x-yaml/);
    const docs = parseAllDocuments(buffer.text).map((d) => d.toJS());
    assert.deepEqual(
      docs,
      parseAllDocuments(siteYaml).map((d) => d.toJS()),
    );
    // The committed bucket is still the broken one until the commit.
    assert.equal((await api.call('GET', '/api/v1.0/configdocs/site?version=committed')).status, 200);
    assertFailure(await api.call('GET', '/api/v1.0/configdocs/site?version=latest'), 400);
    assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs?force=maybe'), 400, 'InvalidRequest');

    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs?force=false&dryrun=false');
    assert.equal(commit.status, 200, commit.text);
    const committed = CommitStatus.parse(commit.json);
    assert.equal(committed.revision.id, 2);
    assert.deepEqual(committed.revision.buckets, ['site']);
    assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs'), 409, 'EmptyBuffer');
    const rendered = await api.call('GET', '/api/v1.0/renderedconfigdocs');
    assert.deepEqual(
      parseAllDocuments(rendered.text).map((d) => d.toJS()),
      docs,
    );
    // The last deployed revision is the broken site committed with force: its bucket reads back as
    // stored, but it does not render (as Deckhand refuses to render it), and the answer says why.
    const lastDeployed = await api.call('GET', '/api/v1.0/configdocs/site?version=successful_site_action');
    assert.equal(lastDeployed.status, 200);
    assert.match(lastDeployed.text, /five defects/);
    const unrendered = assertFailure(await api.call('GET', '/api/v1.0/renderedconfigdocs?version=successful_site_action'), 400, 'DocumentValidationFailed');
    assert.match(unrendered.details.messageList.map((m) => m.message).join('\n'), /site\/nodes\.yaml:\d+:\d+/);
    // Shipyard renders the buffer too: with nothing staged, it is the committed site.
    assert.deepEqual(
      parseAllDocuments((await api.call('GET', '/api/v1.0/renderedconfigdocs?version=buffer')).text).map((d) => d.toJS()),
      docs,
    );
    assertFailure(await api.call('GET', '/api/v1.0/renderedconfigdocs?version=latest'), 400);
  });

  it('lists, shows and renders revisions, and tags and untags them', async () => {
    const list = RevisionList.parse((await api.call('GET', '/api/v1.0/revisions', { token: VIEWER })).json);
    assert.deepEqual(
      list.results.map((r) => [r.id, r.tags.map((t) => t.tag)]),
      [
        [1, ['site-action-success']],
        [2, []],
      ],
    );
    const one = RevisionView.parse((await api.call('GET', '/api/v1.0/revisions/1')).json);
    assert.deepEqual(one.tags[0]?.data, { action: 'deploy_site' });
    assertFailure(await api.call('GET', '/api/v1.0/revisions/99'), 404, 'RevisionNotFound');
    assertFailure(await api.call('GET', '/api/v1.0/revisions/0'), 400, 'InvalidRequest');
    assertFailure(await api.call('GET', '/api/v1.0/revisions/..%2f1'), 400, 'InvalidRequest');
    const rendered = await api.call('GET', '/api/v1.0/revisions/2/rendered-documents');
    assert.equal(rendered.status, 200);
    assert.equal(parseAllDocuments(rendered.text).length, parseAllDocuments(siteYaml).length);
    assertFailure(await api.call('GET', '/api/v1.0/revisions/99/rendered-documents'), 404, 'RevisionNotFound');

    const tagged = await api.call('POST', '/api/v1.0/revisions/2/tags/reviewed', { body: { by: 'ops' } });
    assert.equal(tagged.status, 201);
    assert.equal(tagged.headers.get('location'), '/api/v1.0/revisions/2/tags/reviewed');
    assert.equal((await api.call('POST', '/api/v1.0/revisions/2/tags/plain')).status, 201);
    assertFailure(await api.call('POST', '/api/v1.0/revisions/2/tags/Not_A_Tag'), 400, 'InvalidRequest');
    assertFailure(await api.call('POST', '/api/v1.0/revisions/2/tags/x', { body: [1, 2] }), 400, 'InvalidRequest');
    assertFailure(await api.call('POST', '/api/v1.0/revisions/99/tags/x'), 404, 'RevisionNotFound');
    assertFailure(await api.call('DELETE', '/api/v1.0/revisions/2/tags/reviewed', { token: VIEWER }), 403);
    assert.equal((await api.call('DELETE', '/api/v1.0/revisions/2/tags/reviewed')).status, 204);
    assert.equal((await api.call('DELETE', '/api/v1.0/revisions/2/tags/plain')).status, 204);
    assertFailure(await api.call('DELETE', '/api/v1.0/revisions/2/tags/reviewed'), 404, 'TagNotFound');
  });

  it('starts relabel_nodes (201 + Location), reports it under that name until Complete with per-node results, lists it', async () => {
    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'relabel_nodes', parameters: { target_nodes: [n0, n1] } } });
    assert.equal(created.status, 201, created.text);
    const action = ActionView.parse(created.json);
    assert.equal(action.action_lifecycle, 'Pending');
    assert.deepEqual(action.parameters, { target_nodes: [n0, n1] });
    assert.equal(action.revision, 2);
    assert.equal(created.headers.get('location'), `/api/v1.0/actions/${action.id}`);
    assert.match(action.id, /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/, 'a ULID, as Shipyard names actions');
    const oldId = encodeRunId({ workflowId: action.workflow_id, runId: action.run_id });
    assert.equal(ActionView.parse((await api.call('GET', `/api/v1.0/actions/${oldId}`)).json).id, action.id, 'the run id of before names the same action');

    const done = await eventually(
      async () => ActionView.parse((await api.call('GET', `/api/v1.0/actions/${action.id}`, { token: VIEWER })).json),
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
    );
    assert.equal(done.action_lifecycle, 'Complete');
    assert.equal(done.name, 'relabel_nodes', 'the name it was started with, kept in the run memo');
    assert.deepEqual(done.result?.status, 'success');
    assert.deepEqual(
      done.node_results.map((n) => [n.node, n.status, n.written]),
      [
        [n0, 'success', true],
        [n1, 'success', true],
      ],
    );
    const node = await adminCore().readNode({ name: n0 });
    assert.equal(node.metadata?.labels?.['example.com/team'], 'storage-ops');
    for (const [key, value] of Object.entries(done.node_results[0]?.set ?? {})) assert.equal(node.metadata?.labels?.[key], value);

    const listed = ActionList.parse((await api.call('GET', '/api/v1.0/actions?limit=10', { token: VIEWER })).json);
    assert.ok(
      listed.some((a) => a.id === action.id && a.action_lifecycle === 'Complete' && a.name === 'relabel_nodes'),
      JSON.stringify(listed),
    );
    assertFailure(await api.call('GET', '/api/v1.0/actions?limit=1000'), 400);
    assertFailure(await api.call('POST', `/api/v1.0/actions/${action.id}/control/stop`), 409, 'NotRunning');
    assertFailure(await api.call('POST', `/api/v1.0/actions/${action.id}/control/pause`), 409, 'NotRunning');
    assertFailure(await api.call('POST', `/api/v1.0/actions/${action.id}/control/resume`), 409, 'NotRunning');
    assertFailure(await api.call('POST', `/api/v1.0/actions/${action.id}/control/restart`), 400, 'InvalidRequest');
    assertFailure(await api.call('GET', '/api/v1.0/actions/bm90LWFuLWlk'), 404, 'ActionNotFound');
    const unknownRun = encodeRunId({ workflowId: action.workflow_id, runId: '00000000-0000-4000-8000-000000000000' });
    assertFailure(await api.call('GET', `/api/v1.0/actions/${unknownRun}`), 404);
  });

  it('ends an action with any failed node Failed, per-node results kept; the Drydock task view keeps partial_success', async () => {
    const ghost = `${prefix}-absent`;
    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { target_nodes: [n0, ghost] } } });
    assert.equal(created.status, 201, created.text);
    const action = ActionView.parse(created.json);
    const done = await eventually(
      async () => ActionView.parse((await api.call('GET', `/api/v1.0/actions/${action.id}`, { token: VIEWER })).json),
      (a) => a.execution !== 'RUNNING' && a.execution !== 'CONTINUED_AS_NEW',
    );
    assert.equal(done.execution, 'COMPLETED', 'the workflow itself completed');
    assert.equal(done.action_lifecycle, 'Failed', 'a step with an unsuccessful node is dispositioned as failed');
    assert.equal(done.result?.status, 'partial_success');
    assert.deepEqual(
      done.node_results.map((n) => [n.node, n.status, n.error?.type]),
      [
        [n0, 'success', undefined],
        [ghost, 'failure', 'NodeNotInDesign'],
      ],
    );
    const listed = ActionList.parse((await api.call('GET', '/api/v1.0/actions?limit=10', { token: VIEWER })).json);
    assert.ok(
      listed.some((a) => a.id === action.id && a.action_lifecycle === 'Failed'),
      JSON.stringify(listed),
    );
    const task = TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${action.id}`, { token: VIEWER })).json);
    assert.equal(task.status, 'complete');
    assert.equal(task.result.status, 'partial_success');
    assert.deepEqual(task.result.failures, [ghost]);
  });

  it('runs a relabel_nodes task from design_ref and node_filter; a node the design lacks is a failed subtask', async () => {
    const task = (body: unknown) => api.call('POST', '/api/v1.0/tasks', { body });
    const filter = (f: object) => ({ filter_set_type: 'union', filter_set: [{ filter_type: 'union', ...f }] });
    const ok = {
      action: 'relabel_nodes',
      design_ref: `deckhand+http://deckhand-int.ucp:9000/api/v1.0/revisions/2/rendered-documents`,
      node_filter: filter({ node_names: [n1] }),
    };
    assertFailure(await task({ design_ref: 'committed', node_filter: ok.node_filter }), 400, 'InvalidRequest');
    assertFailure(await task({ ...ok, action: 'prepare_nodes' }), 400, 'UnknownAction');
    assertFailure(await task({ action: 'relabel_nodes', node_filter: ok.node_filter }), 400, 'InvalidDesignRef');
    assertFailure(await task({ ...ok, design_ref: 'http://x/revisions/2' }), 400, 'InvalidDesignRef');
    assertFailure(await task({ ...ok, design_ref: 'revision:99' }), 400, 'InvalidDesignRef');
    assertFailure(await task({ ...ok, node_filter: { filter_set_type: 'all', filter_set: [] } }), 400, 'InvalidNodeFilter');
    assertFailure(await task({ ...ok, node_filter: filter({ node_label: { a: 'b' } }) }), 400, 'InvalidNodeFilter');
    assertFailure(await task({ ...ok, node_filter: filter({ node_tags: ['no-such-tag'] }) }), 400, 'NoNodesMatched');
    assertFailure(await task({ ...ok, node_filter: filter({ node_names: ['not-in-design'] }) }), 400, 'NoNodesMatched');
    assertFailure(await task({ ...ok, extra: true }), 400, 'InvalidRequest');

    const created = await task({ ...ok, design_ref: 'revision:2', node_filter: filter({ node_names: [n1, `${prefix}-ghost`] }) });
    assert.equal(created.status, 201, created.text);
    const started = TaskView.parse(created.json);
    assert.equal(started.status, 'queued');
    assert.deepEqual(started.subtask_id_list, [`${started.task_id}.0`, `${started.task_id}.1`]);
    assert.equal(created.headers.get('location'), `/api/v1.0/tasks/${started.task_id}`);
    const done = await eventually(
      async () => TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${started.task_id}`)).json),
      (t) => t.status === 'complete' || t.status === 'terminated',
    );
    assert.equal(done.status, 'complete');
    assert.equal(done.result.status, 'partial_success');
    assert.deepEqual(done.result.successes, [n1]);
    assert.deepEqual(done.result.failures, [`${prefix}-ghost`]);
    assert.match(done.result.details.messageList[0]?.message ?? '', /NodeNotInDesign/);
    const subtasks = await Promise.all(done.subtask_id_list.map(async (id) => TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${id}`)).json)));
    assert.deepEqual(
      subtasks.map((s) => [s.node_filter?.filter_set[0]?.node_names, s.status, s.result.status]),
      [
        [[n1], 'complete', 'success'],
        [[`${prefix}-ghost`], 'complete', 'failure'],
      ],
    );
    assertFailure(await api.call('GET', '/api/v1.0/tasks/xyz'), 404);
  });

  it('applies node-labels synchronously: ownership-aware, no write when unchanged, bad requests refused', async () => {
    const put = (body: unknown, node = labelled, type?: string) => api.call('PUT', `/api/v1.0/node-labels/${node}`, { body, ...(type ? { type } : {}) });
    const version = async () => (await adminCore().readNode({ name: labelled })).metadata?.resourceVersion;

    const first = await put({ 'ceph-osd': 'enabled', 'example.org/rack': 'r1' });
    assert.equal(first.status, 200, first.text);
    const applied = NodeLabelsStatus.parse(first.json);
    assert.equal(applied.reason, 'Update node labels');
    assert.deepEqual(applied.details, { set: { 'ceph-osd': 'enabled', 'example.org/rack': 'r1' }, removed: [], unchanged: [] });

    const before = await version();
    const again = NodeLabelsStatus.parse((await put({ 'example.org/rack': 'r1', 'ceph-osd': 'enabled' })).json);
    assert.deepEqual(again.details, { set: {}, removed: [], unchanged: ['ceph-osd', 'example.org/rack'] });
    assert.equal(await version(), before, 'no write when nothing changes');

    const next = NodeLabelsStatus.parse((await put({ 'ceph-osd': 'disabled' })).json);
    assert.deepEqual(next.details, { set: { 'ceph-osd': 'disabled' }, removed: ['example.org/rack'], unchanged: [] });
    const node = (await adminCore().readNode({ name: labelled })).metadata;
    assert.equal(node?.labels?.['example.com/team'], 'storage-ops', 'a label relabel does not own is never removed');
    assert.equal(node?.labels?.['kubernetes.io/hostname'], labelled);
    assert.equal(node?.labels?.['example.org/rack'], undefined);
    assert.equal(node?.annotations?.[OWNED_LABELS_ANNOTATION], 'ceph-osd');

    const unchanged = await version();
    assertFailure(await put('{"a": ', labelled, 'application/json'), 400, 'InvalidJson');
    assertFailure(await put(['a']), 400, 'InvalidRequest');
    assertFailure(await put('"a=b"', labelled, 'application/json'), 400, 'InvalidRequest');
    assertFailure(await put({ a: 1 }), 400, 'InvalidRequest');
    assertFailure(await put({ 'bad key!': 'x', ok: 'not ok!' }), 400, 'InvalidRequest');
    assertFailure(await put({ 'kubernetes.io/hostname': 'elsewhere' }), 400, 'InvalidRequest');
    // The committed policy (examples/site/policy.yaml) protects feature.node.kubernetes.io/.
    assertFailure(await put({ 'feature.node.kubernetes.io/cpu': 'x' }), 400, 'Invalid');
    assertFailure(await put({ a: 'b' }, 'Not_A_Node'), 400, 'InvalidRequest');
    assertFailure(await put({ a: 'b' }, `${prefix}-absent`), 404, 'NodeNotFound');
    // 5,000 labels (as many as this test API's body limit lets through; the default 4 MiB lets a 1 MB map through):
    // refused before anything is sent, naming the limit, and not to be retried.
    const huge = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`example.com/l${i}`, 'v'.repeat(20)]));
    const tooLarge = assertFailure(await put(huge), 413, 'PayloadTooLarge');
    assert.match(JSON.stringify(tooLarge), /at most 1000 labels and 128 KiB/);
    assert.equal(tooLarge.retry, false);
    assert.equal(await version(), unchanged, 'refused requests write nothing');
    assert.equal((await api.call('GET', '/health', { token: null })).status, 200, 'the API stays healthy');
  });

  it('reports a run no worker has picked up as Pending, answers 409 while it runs, stops it (202, then Failed); 503 without Kubernetes', async () => {
    const other = prefixedSite(`${prefix}b`);
    const { url, store } = await storeWithSite(other.files);
    await store.close();
    const taskQueue = `relabel-api-stuck-${uniqueSuffix()}`;
    const offline = await startTestApi({ storeUrl: url, taskQueue, nodes: createNodeApi(loadKubeConfig(await unreachableKubeconfig())) });
    let stuck: Awaited<ReturnType<typeof createWorker>> | undefined;
    let running: Promise<void> | undefined;
    try {
      const unreachable = assertFailure(await offline.call('PUT', `/api/v1.0/node-labels/${labelled}`, { body: { a: 'b' } }), 503, 'Unavailable');
      assert.equal(unreachable.retry, true);

      const body = { name: 'update_labels', parameters: { target_nodes: other.nodes.slice(0, 2) } };
      const created = await offline.call('POST', '/api/v1.0/actions', { body });
      assert.equal(created.status, 201, created.text);
      const id = ActionView.parse(created.json).id;
      // No worker polls the queue yet: the run exists but has not started.
      assert.equal(ActionView.parse((await offline.call('GET', `/api/v1.0/actions/${id}`)).json).action_lifecycle, 'Pending');
      const busy = assertFailure(await offline.call('POST', '/api/v1.0/actions', { body }), 409, 'RunInProgress');
      assert.equal(busy.retry, true);

      // A worker whose Kubernetes is unreachable: the run starts, then keeps retrying until stopped
      // (its "Activity failed" warnings in the output are expected).
      stuck = await createWorker({
        temporalAddress: temporalAddress(),
        namespace: 'default',
        taskQueue,
        kubeconfig: await unreachableKubeconfig(),
        storeUrl: url,
        workflowBundle: await workflowBundle(),
      });
      running = stuck.worker.run();
      const processing = await eventually(
        async () => ActionView.parse((await offline.call('GET', `/api/v1.0/actions/${id}`)).json),
        (a) => a.action_lifecycle === 'Processing',
      );
      assert.equal(processing.execution, 'RUNNING');

      assertFailure(await offline.call('POST', `/api/v1.0/actions/${id}/control/stop`, { token: VIEWER }), 403);
      const stop = await offline.call('POST', `/api/v1.0/actions/${id}/control/stop`);
      assert.equal(stop.status, 202, stop.text);
      const stopped = await eventually(
        async () => ActionView.parse((await offline.call('GET', `/api/v1.0/actions/${id}`)).json),
        (a) => a.action_lifecycle === 'Failed',
      );
      assert.equal(stopped.execution, 'CANCELLED');
      assert.equal(stopped.failure?.type, 'Cancelled');
      assertFailure(await offline.call('POST', `/api/v1.0/actions/${id}/control/stop`), 409, 'NotRunning');
    } finally {
      await offline.close();
      stuck?.worker.shutdown();
      await running;
      await stuck?.close();
    }
  });
});
