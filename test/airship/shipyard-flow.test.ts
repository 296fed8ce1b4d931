/**
 * A Shipyard-style client end to end over HTTP, against the real stack:
 * stage the site's YAML, commit it, record a site action on the revision
 * (Deckhand tag), start update_labels for two nodes, poll the action until
 * Complete, read the per-node results, and find the labels on the nodes.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { isKubeletLabelKey } from '../../src/core/plan/label-keys.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { ActionView, CommitStatus } from '../../src/api/http/response-schemas.ts';
import { TaskView } from '../../src/api/drydock/task-schemas.ts';
import { adminCore, type startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite } from '../site.ts';
import { emptyStoreUrl, eventually, startApiAndWorker, type TestApi } from '../api-support.ts';

describe('Shipyard-style flow over HTTP', () => {
  const site = prefixedSite(`flow${uniqueSuffix()}`);
  const [n0, n1] = site.nodes as [string, string];
  const storeUrl = emptyStoreUrl();
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;

  before(async () => {
    ({ worker, api } = await startApiAndWorker(storeUrl, [n0, n1], { 'example.com/owner': 'people' }));
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('stages, commits, tags, runs update_labels for two nodes until Complete; the nodes carry the labels', async () => {
    const yaml = site.files.map((f) => f.text).join('');
    // Shipyard's client sends Content-Type application/x-yaml, also on the commit that has no body.
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: yaml })).status, 201);
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs?force=false&dryrun=false', { headers: { 'content-type': 'application/x-yaml' } });
    assert.equal(commit.status, 200, commit.text);
    const revision = CommitStatus.parse(commit.json).revision.id;
    const tag = await api.call('POST', `/api/v1.0/revisions/${revision}/tags/site-action-success`, { body: { action: 'deploy_site' } });
    assert.equal(tag.status, 201, tag.text);

    const created = await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { target_nodes: `${n0},${n1}` } } });
    assert.equal(created.status, 201, created.text);
    const location = created.headers.get('location');
    assert.ok(location);
    const seen = new Set<string>();
    const action = await eventually(
      async () => {
        const a = ActionView.parse((await api.call('GET', location)).json);
        seen.add(a.action_lifecycle);
        return a;
      },
      (a) => a.action_lifecycle === 'Complete' || a.action_lifecycle === 'Failed',
      30_000,
      100,
    );
    assert.equal(action.action_lifecycle, 'Complete', JSON.stringify(action));
    assert.ok(
      [...seen].every((s) => ['Pending', 'Processing', 'Complete'].includes(s)),
      [...seen].join(),
    );
    assert.equal(action.revision, revision);
    assert.deepEqual(action.parameters, { target_nodes: [n0, n1] });
    assert.deepEqual(action.result, { status: 'success', counts: { total: 2, success: 2, failure: 0, written: 2 }, failures: [] });

    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    for (const result of action.node_results) {
      const desired: Record<string, string> = validation.design.nodes[result.node]?.labels ?? {};
      assert.equal(result.status, 'success');
      assert.deepEqual(result.set, Object.fromEntries(Object.entries(desired).filter(([k]) => !isKubeletLabelKey(k))));
      const meta = (await adminCore().readNode({ name: result.node })).metadata;
      for (const [key, value] of Object.entries(desired)) assert.equal(meta?.labels?.[key], value, `${result.node} ${key}`);
      assert.equal(meta?.labels?.['example.com/owner'], 'people');
      assert.ok(meta?.annotations?.[OWNED_LABELS_ANNOTATION]);
    }

    // The same run read as a Drydock task: one completed subtask per node.
    const task = TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${action.id}`)).json);
    assert.equal(task.status, 'complete');
    assert.deepEqual(task.result.successes, [n0, n1]);
  });
});
