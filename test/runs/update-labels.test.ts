/**
 * updateLabels against the real Temporal server and kube-apiserver: the
 * sample site's 24 nodes relabelled, ownership respected, no write on a
 * second run, partial success with retry, rejections that write nothing,
 * one run per site, dry runs and continue-as-new.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import { isKubeletLabelKey } from '../../src/core/plan/label-keys.ts';
import { loadKubeConfig, createNodeApi } from '../../src/kube/nodes.ts';
import { type RelabelError } from '../../src/facade/relabel-error.ts';
import type { NodeOutcome, RunStatusReport } from '../../src/facade/runs/runs.ts';
import { adminCore, adminKubeconfigPath, createNode, nodePatchCount, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const FOREIGN = { 'example.com/team': 'storage-ops', 'topology.example.com/pod': 'p7' };
const UNINITIALIZED = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };
const MAINTENANCE = { key: 'example.com/maintenance', value: 'rack-move', effect: 'NoExecute' };

async function labelsOf(names: string[]) {
  const core = adminCore();
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await core.readNode({ name: n })).metadata ?? {}] as const)));
}

/** Every node outcome of a finished run, from the store. */
async function nodesOf(
  relabel: { runs: { nodes: (run: number, q?: { limit?: number }) => Promise<{ items: NodeOutcome[] }> } },
  done: RunStatusReport,
): Promise<NodeOutcome[]> {
  assert.ok(done.result, `run ${done.workflowId} has a result`);
  return (await relabel.runs.nodes(done.result.run, { limit: 5000 })).items;
}

function designOf(files: { source: string; text: string }[]): Design {
  const v = validateSite(files);
  assert.ok(v.ok, 'test site must validate');
  return v.design;
}

describe('updateLabels on the sample site', () => {
  const prefix = `ul${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const design = designOf(site.files);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let taintsAtCreation: { key: string }[] = [];

  before(async () => {
    const { url } = await storeWithSite(site.files);
    relabel = await startRelabel(url);
    const core = adminCore();
    for (const name of site.nodes) {
      const created = await createNode(core, name, FOREIGN, name === site.nodes[2] ? [UNINITIALIZED, MAINTENANCE] : []);
      // The API server's admission adds taints of its own (not-ready); relabel must keep them.
      if (name === site.nodes[2]) taintsAtCreation = JSON.parse(JSON.stringify(created.spec?.taints ?? []));
    }
    // Another field manager sets a label of its own, as kubectl would.
    await createNodeApi(loadKubeConfig(adminKubeconfigPath())).patchNode(site.nodes[0] as string, {
      metadata: { labels: { 'ops.example.com/drain': 'never' } },
    });
  });
  after(async () => relabel.stop());

  it('brings every node to desired ∪ labels relabel does not own, and records ownership', async () => {
    const run = await relabel.runs.start({ targets: site.nodes });
    assert.equal(run.workflowId, `update-labels/${prefix}-site`);
    const done = await relabel.runs.wait(run);
    assert.equal(done.execution, 'COMPLETED');
    assert.equal(done.result?.status, 'success');
    assert.equal(done.result?.counts.written, 24);
    const meta = await labelsOf(site.nodes);
    for (const name of site.nodes) {
      const desired = design.nodes[name]?.labels ?? {};
      const labels = meta[name]?.labels ?? {};
      const expected: Record<string, string> = {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/os': 'linux',
        'beta.kubernetes.io/arch': 'amd64',
        ...FOREIGN,
        ...(name === site.nodes[0] ? { 'ops.example.com/drain': 'never' } : {}),
        ...desired,
      };
      assert.deepEqual(labels, expected, `labels of ${name}`);
      const owned = meta[name]?.annotations?.[OWNED_LABELS_ANNOTATION]?.split(',') ?? [];
      assert.deepEqual(
        owned,
        Object.keys(desired)
          .filter((k) => !isKubeletLabelKey(k))
          .sort(),
        `ownership of ${name}`,
      );
    }
    // The policy lifts the uninitialized taint in the same write as the labels; other taints stay.
    const tainted = await adminCore().readNode({ name: site.nodes[2] as string });
    assert.ok(taintsAtCreation.some((t) => t.key === UNINITIALIZED_TAINT_KEY));
    assert.deepEqual(
      JSON.parse(JSON.stringify(tainted.spec?.taints)),
      taintsAtCreation.filter((t) => t.key !== UNINITIALIZED_TAINT_KEY),
    );
    assert.ok(tainted.spec?.taints?.some((t) => t.key === MAINTENANCE.key));
    assert.deepEqual(
      (await nodesOf(relabel, done)).filter((n) => n.taintLifted).map((n) => n.node),
      [site.nodes[2]],
    );
  });

  it('makes zero write requests when run again at once', async () => {
    const before = await nodePatchCount();
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.equal(done.result?.status, 'success');
    assert.equal(done.result?.counts.written, 0);
    assert.equal((await nodePatchCount()) - before, 0, 'PATCH requests on nodes counted by the API server');
  });

  it('applies exactly a document change, removing only what relabel owned', async () => {
    const target = site.nodes[3] as string;
    const node = await adminCore().readNode({ name: target });
    const rv = node.metadata?.resourceVersion;
    const changed = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/BaremetalNode/v1' && doc.metadata.name === target) {
        doc.data.metadata.owner_data = { 'sriov-nic': 'enabled' };
      }
    });
    await relabel.store.revisions.stage('site', changed.files);
    await relabel.store.revisions.commit({ message: 'sriov on one node' });
    const newDesired = designOf(changed.files).nodes[target]?.labels ?? {};
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.equal(done.result?.status, 'success');
    assert.equal(done.result?.counts.written, 1, 'only the changed node is written');
    const outcome = (await nodesOf(relabel, done)).find((n) => n.node === target);
    assert.deepEqual(outcome?.set, { 'sriov-nic': 'enabled' });
    const after = await adminCore().readNode({ name: target });
    assert.notEqual(after.metadata?.resourceVersion, rv);
    assert.equal(after.metadata?.labels?.['sriov-nic'], 'enabled');
    for (const [k, v] of Object.entries(newDesired)) assert.equal(after.metadata?.labels?.[k], v);
    assert.equal(after.metadata?.labels?.['example.com/team'], 'storage-ops');
  });

  it('reports partial_success naming a node absent from the cluster and one absent from the design; retry runs exactly those', async () => {
    const missingInCluster = site.nodes[5] as string;
    await adminCore().deleteNode({ name: missingInCluster });
    const notInDesign = `${prefix}-not-designed`;
    const targets = [site.nodes[1] as string, missingInCluster, site.nodes[2] as string, notInDesign];
    const done = await relabel.runs.wait(await relabel.runs.start({ targets }));
    assert.equal(done.result?.status, 'partial_success');
    const failed = (await nodesOf(relabel, done)).filter((n) => n.status === 'failure');
    assert.deepEqual(
      failed.map((f) => [f.node, f.error?.type]),
      [
        [missingInCluster, 'NodeNotFound'],
        [notInDesign, 'NodeNotInDesign'],
      ],
    );
    assert.match(failed[0]?.error?.message ?? '', /not found in the cluster/);
    assert.equal(done.result?.counts.success, 2);

    await createNode(adminCore(), missingInCluster);
    const retry = await relabel.runs.retry(done.workflowId, done.runId);
    assert.deepEqual(retry.targets, [missingInCluster, notInDesign]);
    const retried = await relabel.runs.wait(retry);
    assert.deepEqual(retried.result?.retryOf, { workflowId: done.workflowId, runId: done.runId });
    assert.deepEqual(
      (await nodesOf(relabel, retried)).map((n) => [n.node, n.status]),
      [
        [missingInCluster, 'success'],
        [notInDesign, 'failure'],
      ],
    );
    assert.equal(retried.result?.revision, done.result?.revision);
  });

  it('rejects a second run for the same site while one runs', async () => {
    const first = await relabel.runs.start({ targets: site.nodes, concurrency: 1 });
    await assert.rejects(
      relabel.runs.start({ targets: [site.nodes[0] as string] }),
      (err: RelabelError) => err.type === 'RunInProgress' && /already in progress/.test(err.message),
    );
    await relabel.runs.wait(first);
  });

  it('plans without writing in a dry run', async () => {
    const target = site.nodes[7] as string;
    await adminCore().patchNode({ name: target, body: [{ op: 'remove', path: '/metadata/labels/relabel.airshipit.org~1rack' }] });
    const before = await nodePatchCount();
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: [target, site.nodes[8] as string], dryRun: true }));
    assert.equal(done.result?.dryRun, true);
    assert.equal((await nodePatchCount()) - before, 0);
    const plan = (await nodesOf(relabel, done)).find((n) => n.node === target);
    assert.deepEqual(plan?.set, { 'relabel.airshipit.org/rack': design.nodes[target]?.labels['relabel.airshipit.org/rack'] });
    assert.equal((await adminCore().readNode({ name: target })).metadata?.labels?.['relabel.airshipit.org/rack'], undefined);
  });

  it('continues as new with progress carried, finishing every node', async () => {
    // A label on every node, so that every node has something to change.
    const everyNode = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/BaremetalNode/v1') doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, 'can-test': 'yes' };
    });
    await relabel.store.revisions.stage('site', everyNode.files);
    await relabel.store.revisions.commit({ message: 'a label on every node' });
    const started = await relabel.runs.start({ targets: site.nodes, continueAsNewAfter: 5, concurrency: 3 });
    const done = await relabel.runs.wait(started);
    // Known by its first run ID for its whole life: status follows the chain.
    const byFirstRun = await relabel.runs.status(started.workflowId, started.runId);
    assert.equal(byFirstRun.execution, 'COMPLETED');
    assert.notEqual(byFirstRun.runId, started.runId);
    assert.equal(byFirstRun.result?.counts.total, 24);
    assert.equal(done.result?.counts.total, 24);
    assert.equal(done.result?.counts.written, 24);
    const nodes = await nodesOf(relabel, done);
    assert.deepEqual(
      nodes.map((n) => [n.node, n.status, n.written]),
      site.nodes.map((n) => [n, 'success', true]),
    );
    const runs = [];
    for await (const w of relabel.client.workflow.list({ query: `WorkflowId = '${done.workflowId}'` })) runs.push(w);
    const chain = runs.filter((w) => w.status.name === 'CONTINUED_AS_NEW');
    assert.ok(chain.length >= 4, `expected ≥ 4 continued-as-new runs, got ${chain.length}`);
  });
});

describe('updateLabels rejections write nothing', () => {
  const prefix = `rj${uniqueSuffix()}`;
  const site = prefixedSite(prefix);

  it('rejects with no site-action revision, invalid documents, no revision and bad targets', async () => {
    const core = adminCore();
    for (const name of site.nodes.slice(0, 3)) await createNode(core, name);
    const targets = site.nodes.slice(0, 3);
    const before = await nodePatchCount();

    const noAction = await storeWithSite(site.files, { siteAction: false });
    const r1 = await startRelabel(noAction.url);
    try {
      await assert.rejects(r1.runs.start({ targets }), (e: RelabelError) => e.type === 'NoSiteActionRevision');
      // The workflow makes the same check when started directly.
      const handle = await r1.client.workflow.start('updateLabels', { taskQueue: r1.taskQueue, workflowId: `${prefix}-direct`, args: [{ targets }] });
      await assert.rejects(handle.result(), (e: Error) => (e.cause as { type?: string })?.type === 'NoSiteActionRevision');
      await assert.rejects(r1.runs.start({ targets: [] }), (e: RelabelError) => e.type === 'InvalidTargets');
      await assert.rejects(r1.runs.start({ targets: 'a,,b' }), (e: RelabelError) => e.type === 'InvalidTargets');
      await assert.rejects(r1.runs.start({ targets, revision: 99 }), (e: RelabelError) => e.type === 'RevisionNotFound');
    } finally {
      await r1.stop();
    }

    const broken = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/BaremetalNode/v1' && doc.metadata.name === site.nodes[0]) doc.data.host_profile = 'no-such-profile';
      if (doc.schema === 'drydock/BaremetalNode/v1' && doc.metadata.name === site.nodes[1]) doc.data.metadata.owner_data = { 'kubernetes.io/hostname': 'x' };
    });
    const invalid = await storeWithSite(broken.files);
    const r2 = await startRelabel(invalid.url);
    try {
      await assert.rejects(r2.runs.start({ targets }), (e: RelabelError) => e.type === 'DocumentValidationFailed' && /2 document error/.test(e.message));
      const handle = await r2.client.workflow.start('updateLabels', { taskQueue: r2.taskQueue, workflowId: `${prefix}-direct-invalid`, args: [{ targets }] });
      await assert.rejects(handle.result(), (e: Error) => (e.cause as { type?: string })?.type === 'DocumentValidationFailed');
    } finally {
      await r2.stop();
    }
    assert.equal((await nodePatchCount()) - before, 0, 'no PATCH request reached the API server');
    for (const name of targets) {
      assert.equal((await core.readNode({ name })).metadata?.annotations?.[OWNED_LABELS_ANNOTATION], undefined);
    }
  });
});
